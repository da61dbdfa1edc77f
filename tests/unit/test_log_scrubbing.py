"""Secret values of running connectors never reach a log handler that carries the filter."""

from __future__ import annotations

import io
import json
import logging

import pytest

from omconnect.cli.log_output import configure_logging, remove_cli_logging
from omconnect.config.log_scrubbing import KNOWN_SECRETS, KnownSecrets, SecretScrubbingFilter

SECRET = "hunter2-in-a-log"


@pytest.fixture
def cli_log():
    stream = io.StringIO()
    KNOWN_SECRETS.set("test-owner", [SECRET])
    yield stream
    KNOWN_SECRETS.forget("test-owner")
    remove_cli_logging()


def _fail() -> None:
    raise RuntimeError(f"login refused for admin:{SECRET}")


@pytest.mark.parametrize("fmt", ["text", "logfmt", "json"])
def test_messages_arguments_and_traces_are_scrubbed_in_every_format(cli_log, fmt):
    configure_logging(level=logging.INFO, log_format=fmt, stream=cli_log)
    log = logging.getLogger("some_connector.task")
    log.warning("connecting with %s", SECRET)
    try:
        _fail()
    except RuntimeError:
        log.exception("poll failed")
    text = cli_log.getvalue()
    assert SECRET not in text
    assert "connecting with [hidden]" in text
    assert "login refused for admin:[hidden]" in text  # the trace is kept, scrubbed
    assert "in _fail" in text
    if fmt == "json":
        assert [json.loads(line)["msg"] for line in text.splitlines()] == [
            "connecting with [hidden]", "poll failed"]


def test_a_forgotten_owner_is_no_longer_scrubbed_and_longer_values_win():
    secrets = KnownSecrets()
    secrets.set("a", ["abcd"])
    secrets.set("b", ["abcd-longer"])
    record = logging.LogRecord("x", logging.INFO, __file__, 1, "%s and %s",
                               ("abcd-longer", "abcd"), None)
    SecretScrubbingFilter(secrets).filter(record)
    assert record.getMessage() == "[hidden] and [hidden]"
    secrets.forget("b")
    secrets.set("a", [])  # re-registered with nothing
    record = logging.LogRecord("x", logging.INFO, __file__, 1, "abcd", None, None)
    assert SecretScrubbingFilter(secrets).filter(record) is True
    assert record.getMessage() == "abcd"


def test_a_malformed_log_call_is_left_to_the_handler_not_raised_at_the_caller():
    secrets = KnownSecrets()
    secrets.set("a", ["abcd"])
    record = logging.LogRecord("x", logging.INFO, __file__, 1, "%s and %s", ("one",), None)
    assert SecretScrubbingFilter(secrets).filter(record) is True
