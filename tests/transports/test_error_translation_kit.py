"""The suite's error-translation check, on the embedded transport's SQLite translation and,
to show it catches what it should, on translations that break each rule.
"""

from __future__ import annotations

import sqlite3

import pytest

from omconnect.errors import RetriableTransportError, TransportError
from omconnect.testing import TranslationCase, check_error_translation
from omconnect.transport.embedded.errors import translate


def _sqlite_error(code: int, name: str, message: str) -> sqlite3.OperationalError:
    error = sqlite3.OperationalError(message)
    error.sqlite_errorcode = code
    error.sqlite_errorname = name
    return error


def test_the_embedded_transports_translation_passes() -> None:
    check_error_translation(lambda exc: translate(exc, "appending to the log"), [
        TranslationCase(_sqlite_error(5, "SQLITE_BUSY", "database is locked"),
                        RetriableTransportError, mentions=("database is locked",)),
        TranslationCase(_sqlite_error(13, "SQLITE_FULL", "database or disk is full"),
                        RetriableTransportError, mentions=("SQLITE_FULL",)),
        TranslationCase(_sqlite_error(11, "SQLITE_CORRUPT", "malformed"), TransportError,
                        mentions=("malformed",)),
        TranslationCase(_sqlite_error(8, "SQLITE_READONLY", "readonly database"),
                        TransportError),
    ], action="appending to the log")


def _lenient(exc: BaseException) -> BaseException:
    return exc if isinstance(exc, TransportError) else RetriableTransportError(str(exc))


def test_it_names_each_broken_rule() -> None:
    with pytest.raises(AssertionError) as caught:
        check_error_translation(_lenient, [
            TranslationCase(TimeoutError("slow"), TransportError),
            TranslationCase(ConnectionError("gone"), RetriableTransportError,
                            mentions=("the broker's words",)),
        ], action="sending")
    report = str(caught.value)
    assert "builtins.TimeoutError: became RetriableTransportError, expected TransportError" \
        in report
    assert "is not chained" in report
    assert "does not mention \"the broker's words\"" in report
    assert "does not mention 'sending'" in report


def test_an_unknown_exception_must_not_become_retriable() -> None:
    def chained(exc: BaseException) -> BaseException:
        if isinstance(exc, TransportError):
            return exc
        error = RetriableTransportError(f"sending failed: {exc}")
        error.__cause__ = exc
        return error

    with pytest.raises(AssertionError, match="unknown exception became retriable"):
        check_error_translation(chained, [])


def test_an_omconnect_error_must_pass_unchanged() -> None:
    def again(exc: BaseException) -> BaseException:
        error = TransportError(f"sending failed: {exc}")
        error.__cause__ = exc
        return error

    with pytest.raises(AssertionError, match="translated again"):
        check_error_translation(again, [])
