"""``${env:...}`` references in connector configs: stored and shown as written, resolved
when the connector starts (again on each restart) and before it is validated.
"""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from runtime_connectors import STATE
from runtime_support import eventually, source_config

from omconnect.connector.lifecycle import State
from omconnect.errors import ConfigError
from omconnect.records import TopicPartition
from omconnect.runtime import StandaloneHerder
from omconnect.runtime.storage_namespaces import derive_standalone_id
from omconnect.transport.embedded import EmbeddedTransport

TOPIC_VAR = "OMC_REFS_TEST_TOPIC"
SECRET_VAR = "OMC_REFS_TEST_SECRET"
SECRET = "s3cr3t-from-the-environment"


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "data"


@pytest.fixture
def embedded_worker(data_dir: Path) -> dict[str, Any]:
    return {"transport": "embedded", "embedded.path": str(data_dir),
            "offset.flush.interval.ms": 50, "task.shutdown.graceful.timeout.ms": 2000}


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    monkeypatch.setenv(TOPIC_VAR, "first-topic")
    monkeypatch.setenv(SECRET_VAR, SECRET)
    return monkeypatch


@pytest.fixture
def running(embedded_worker: dict[str, Any]) -> Iterator[StandaloneHerder]:
    with StandaloneHerder(embedded_worker) as herder:
        yield herder


def _config(**extra: Any) -> dict[str, Any]:
    return source_config("refs", records=3, topic=f"${{env:{TOPIC_VAR}}}",
                         **{"extra.password": f"${{env:{SECRET_VAR}}}", **extra})


def _values(data_dir: Path, topic: str) -> list[str]:
    with EmbeddedTransport({"path": str(data_dir)}) as transport:
        if topic not in transport.admin().list_topics():
            return []
        consumer = transport.consumer()
        consumer.assign([TopicPartition(topic, 0)])
        values: list[str] = []
        while batch := consumer.poll(10_000, 0.1):
            values.extend(json.loads(m.value)["payload"] for m in batch if m.value)
        consumer.close()
    return values


def _stored(data_dir: Path) -> dict[str, dict[str, Any]]:
    """Every stored connector record, read from the KV store without a herder."""
    with EmbeddedTransport({"path": str(data_dir)}) as transport:
        # A herder built without a worker file keeps its configs in its own namespace.
        store = transport.kv_store(f"connect-configs-{derive_standalone_id(None)}")
        return {key: json.loads(value) for key, value in store.scan("connector-")}


def test_the_store_and_the_herder_keep_the_reference_the_connector_gets_the_value(
        running, env, data_dir):
    running.create_connector(_config())
    eventually(lambda: _values(data_dir, "first-topic") == ["s0-0", "s0-1", "s0-2"],
               what="the records in the topic the reference names")

    stored = _stored(data_dir)["connector-refs"]["config"]
    assert stored["topic"] == f"${{env:{TOPIC_VAR}}}"
    assert stored["extra.password"] == f"${{env:{SECRET_VAR}}}"
    assert running.connector_config("refs")["topic"] == f"${{env:{TOPIC_VAR}}}"
    assert running.connector_info("refs").config["extra.password"] == f"${{env:{SECRET_VAR}}}"
    [task] = running.task_configs("refs")
    assert task.config["topic"] == f"${{env:{TOPIC_VAR}}}"  # copied from the config
    assert task.config["extra.password"] == f"${{env:{SECRET_VAR}}}"
    assert STATE["refs"]["started_with"][0]["extra.password"] == SECRET
    assert STATE["refs"]["task_started_with"][0]["extra.password"] == SECRET
    running.stop()

    with StandaloneHerder({"transport": "embedded", "embedded.path": str(data_dir)}) as fresh:
        assert fresh.connector_config("refs")["extra.password"] == f"${{env:{SECRET_VAR}}}"
    stored_bytes = b"".join(f.read_bytes() for f in data_dir.rglob("*") if f.is_file())
    assert f"${{env:{SECRET_VAR}}}".encode() in stored_bytes  # the scan sees the store
    assert SECRET.encode() not in stored_bytes


def test_a_restart_resolves_the_references_again(running, env, data_dir):
    running.create_connector(_config())
    eventually(lambda: len(_values(data_dir, "first-topic")) == 3, what="first records")
    assert STATE["refs"]["started_with"][-1]["extra.password"] == SECRET
    env.setenv(TOPIC_VAR, "rotated-topic")
    env.setenv(SECRET_VAR, "rotated-secret")
    running.restart_connector("refs", include_tasks=True)
    eventually(lambda: len(STATE["refs"]["task_started_with"]) == 2, what="task restart")
    assert STATE["refs"]["started_with"][-1]["topic"] == "rotated-topic"
    assert STATE["refs"]["started_with"][-1]["extra.password"] == "rotated-secret"
    assert STATE["refs"]["task_started_with"][-1]["topic"] == "rotated-topic"
    assert STATE["refs"]["task_started_with"][-1]["extra.password"] == "rotated-secret"
    assert running.connector_config("refs")["topic"] == f"${{env:{TOPIC_VAR}}}"
    assert _stored(data_dir)["connector-refs"]["config"]["topic"] == f"${{env:{TOPIC_VAR}}}"


def test_an_unresolvable_reference_is_rejected_naming_the_key_and_the_reference(
        running, env, data_dir):
    env.delenv(TOPIC_VAR)
    validation = running.validate_connector_config(_config())
    assert not validation.ok
    [message] = validation.errors["topic"]
    assert f"cannot resolve ${{env:{TOPIC_VAR}}}" in message
    assert f"environment variable {TOPIC_VAR} is not set" in message
    with pytest.raises(ConfigError) as caught:
        running.create_connector(_config())
    assert list(caught.value.errors) == ["topic"]
    assert f"${{env:{TOPIC_VAR}}}" in str(caught.value)
    assert running.connectors() == []
    assert _stored(data_dir) == {}


def test_a_reference_that_no_longer_resolves_fails_the_connector_when_it_starts(
        embedded_worker, env, data_dir):
    with StandaloneHerder(embedded_worker) as herder:
        herder.create_connector(_config())
        eventually(lambda: len(_values(data_dir, "first-topic")) == 3, what="records")
    env.delenv(SECRET_VAR)
    with StandaloneHerder(embedded_worker | {"restart.policy": "none"}) as herder:
        status = herder.connector_status("refs")
        assert status.connector.state is State.FAILED
        assert status.connector.trace is not None
        assert f"extra.password: cannot resolve ${{env:{SECRET_VAR}}}" in \
            status.connector.trace
        assert status.tasks == ()


def test_validation_output_masks_secret_values_of_undeclared_keys(running, env):
    env.delenv(TOPIC_VAR)
    jaas = 'Login required password="hunter2-jaas" user="${env:OMC_REFS_TEST_USER}";'
    validation = running.validate_connector_config(_config(**{"sasl.jaas.config": jaas}))
    assert set(validation.errors) >= {"topic", "sasl.jaas.config"}
    shown = {item["value"]["name"]: item["value"] for item in validation.to_dict()["configs"]}
    assert shown["sasl.jaas.config"]["value"] == "[hidden]"  # undeclared, named like a secret
    assert shown["sasl.jaas.config"]["errors"] == [
        "cannot resolve ${env:OMC_REFS_TEST_USER}: environment variable OMC_REFS_TEST_USER "
        "is not set; set it, or give a default with ${env:OMC_REFS_TEST_USER:-default}"]
    assert shown["topic"]["value"] == f"${{env:{TOPIC_VAR}}}"  # a reference is no secret
    assert "hunter2-jaas" not in json.dumps(validation.to_dict())
    assert SECRET not in json.dumps(validation.to_dict())


def test_a_trace_quoting_a_resolved_secret_is_scrubbed(running, env, data_dir, caplog):
    caplog.set_level(logging.DEBUG)
    running.create_connector(_config(**{"fail.start": "true", "restart.policy": "none",
                                        "login.password": f"${{env:{SECRET_VAR}}}"}))
    status = running.connector_status("refs")
    assert status.connector.state is State.FAILED
    assert status.connector.trace is not None
    assert "cannot reach the source system as admin:[hidden]" in status.connector.trace
    assert STATE["refs"]["started_with"][0]["login.password"] == SECRET  # it had the value
    assert "as admin:[hidden]" in caplog.text
    assert SECRET not in caplog.text
    # While the worker runs, its status store holds the FAILED record with the scrubbed
    # trace (a stop then records UNASSIGNED over it, as Kafka Connect's workers do).
    stored_bytes = b"".join(f.read_bytes() for f in data_dir.rglob("*") if f.is_file())
    assert b"cannot reach the source system as admin:[hidden]" in stored_bytes
    assert SECRET.encode() not in stored_bytes
    running.stop()
    stored_bytes = b"".join(f.read_bytes() for f in data_dir.rglob("*") if f.is_file())
    assert SECRET.encode() not in stored_bytes


def test_log_lines_of_a_task_quoting_a_resolved_secret_are_scrubbed(running, env):
    from omconnect.cli.log_output import configure_logging, remove_cli_logging

    stream = io.StringIO()
    configure_logging(level=logging.INFO, log_format="logfmt", stream=stream)
    try:
        running.create_connector({
            "name": "leaky", "connector.class": "runtime_connectors:FailingSource",
            "restart.policy": "none", "login.password": f"${{env:{SECRET_VAR}}}"})
        eventually(lambda: running.connector_status("leaky").tasks
                   and running.connector_status("leaky").tasks[0].state is State.FAILED,
                   what="the task to fail")
        running.delete_connector("leaky")
    finally:
        remove_cli_logging()
    lines = stream.getvalue()
    # the task runner logs the task's exception, message and trace, as the task wrote it
    assert "the source went away (logged in as admin:[hidden])" in lines
    assert "connector=leaky task=0" in lines
    assert SECRET not in lines
