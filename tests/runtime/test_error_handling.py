"""errors.tolerance, retries and the dead-letter topic, for sources and sinks."""

from __future__ import annotations

import json

from runtime_connectors import STATE
from runtime_support import eventually, read_topic, sink_config, source_config

from omconnect.connector.lifecycle import State
from omconnect.transport import Message
from omconnect.transport.memory import MemoryTransport


def _headers(message: Message) -> dict[str, str]:
    return {k: (v or b"").decode() for k, v in message.headers}


def _produce(worker_config: dict, topic: str, values: list[bytes | None]) -> None:
    transport = MemoryTransport({"namespace": worker_config["memory.namespace"]})
    producer = transport.producer()
    producer.send([Message(topic, None, v) for v in values]).result()
    producer.close()


def _json(text: str) -> bytes:
    return json.dumps({"schema": {"type": "string", "optional": False},
                       "payload": text}).encode()


def test_poison_source_record_fails_the_task_naming_stage_and_topic(herder):
    herder.create_connector(source_config(records=300, batch=50, poison_at=120))
    eventually(lambda: herder.connector_status("counting").tasks[0].state is State.FAILED)
    trace = herder.connector_status("counting").tasks[0].trace
    assert "VALUE_CONVERTER" in trace and "'counting-out'" in trace
    assert "connector 'counting' task 0" in trace and "{'position': 121}" in trace
    offsets = herder.offsets("counting").offsets
    assert offsets[0]["offset"] == {"position": 100}  # the poison's batch never committed
    # the connector hears of its task's failure on the herder's thread, just after it
    eventually(lambda: "failed" in STATE["counting"]["hooks"], what="the on_failed hook")


def test_poison_source_record_goes_to_the_dead_letter_topic_with_context(herder,
                                                                         worker_config):
    herder.create_connector(source_config(
        records=300, batch=50, poison_at=120, errors_tolerance="all",
        errors_deadletterqueue_topic_name="dlq",
        errors_deadletterqueue_context_headers_enable="true", errors_log_enable="true"))
    eventually(lambda: herder.offsets("counting").offsets
               and herder.offsets("counting").offsets[0]["offset"] == {"position": 300})
    assert len(read_topic(worker_config, "counting-out")) == 299
    [dead] = read_topic(worker_config, "dlq")
    headers = _headers(dead)
    assert headers["__connect.errors.stage"] == "VALUE_CONVERTER"
    assert headers["__connect.errors.topic"] == "counting-out"
    assert headers["__connect.errors.connector.name"] == "counting"
    assert headers["__connect.errors.task.id"] == "0"
    assert headers["__connect.errors.class.name"].endswith("JsonConverter")
    assert headers["__connect.errors.exception.class.name"] == "omconnect.errors.DataError"
    assert "Traceback" in headers["__connect.errors.exception.stacktrace"]
    assert json.loads(headers["__connect.errors.source.partition"]) == {"stream": 0}
    assert json.loads(headers["__connect.errors.source.offset"]) == {"position": 121}
    assert dead.value == b"12345"  # the value, serialised best-effort as JSON
    assert ("12345" not in [v for v, _ in STATE["counting"]["commit_record"]])
    assert (12345, None) in STATE["counting"]["commit_record"]
    metrics = herder.metrics()[0]
    assert metrics.errors == 1 and metrics.dead_lettered == 1


def test_poison_message_of_a_sink_goes_to_the_dead_letter_topic_as_raw_bytes(
        herder, worker_config):
    _produce(worker_config, "in", [_json("a"), b"not json", _json("b")])
    herder.create_connector(sink_config(
        errors_tolerance="all", errors_deadletterqueue_topic_name="dlq",
        errors_deadletterqueue_context_headers_enable="true"))
    eventually(lambda: herder.offsets("listing").offsets
               and herder.offsets("listing").offsets[0]["offset"] == {"kafka_offset": 3})
    assert [r[4] for r in STATE["listing"]["records"]] == ["a", "b"]
    [dead] = read_topic(worker_config, "dlq")
    assert dead.value == b"not json"
    headers = _headers(dead)
    assert (headers["__connect.errors.topic"], headers["__connect.errors.partition"],
            headers["__connect.errors.offset"]) == ("in", "0", "1")
    assert headers["__connect.errors.stage"] == "VALUE_CONVERTER"


def test_poison_message_fails_a_sink_without_tolerance_and_is_not_committed(
        herder, worker_config):
    _produce(worker_config, "in", [_json("a"), b"not json", _json("b")])
    herder.create_connector(sink_config())
    eventually(lambda: herder.connector_status("listing").tasks[0].state is State.FAILED)
    trace = herder.connector_status("listing").tasks[0].trace
    assert "VALUE_CONVERTER" in trace
    assert "topic 'in' partition 0 offset 1" in trace
    committed = herder.offsets("listing").offsets
    assert not committed or committed[0]["offset"]["kafka_offset"] <= 1
    assert STATE["listing"]["records"] == []


def test_retriable_put_retries_the_same_batch_without_consuming_again(herder, worker_config):
    _produce(worker_config, "in", [_json(f"v{n}") for n in range(20)])
    herder.create_connector(sink_config(retriable_failures=3,
                                        errors_retry_delay_max_ms=50))
    eventually(lambda: len(STATE["listing"]["records"]) == 20)
    batches = STATE["listing"]["put_batches"]
    assert len(batches) == 4 and all(b == batches[0] for b in batches)
    assert [r[4] for r in STATE["listing"]["records"]] == [f"v{n}" for n in range(20)]
    metrics = herder.metrics()[0]
    assert metrics.polled == 20 and metrics.retries == 3 and metrics.put == 20
    eventually(lambda: herder.offsets("listing").to_dict()["offsets"] == [{
        "partition": {"kafka_topic": "in", "kafka_partition": 0},
        "offset": {"kafka_offset": 20}}])


def test_errant_record_reporter_dead_letters_and_commits_after_the_write(herder,
                                                                        worker_config):
    _produce(worker_config, "in", [_json("ok"), _json("bad"), _json("fine")])
    herder.create_connector(sink_config(report_values="bad", errors_tolerance="all",
                                        errors_deadletterqueue_topic_name="dlq",
                                        errors_deadletterqueue_context_headers_enable=True))
    eventually(lambda: herder.offsets("listing").offsets
               and herder.offsets("listing").offsets[0]["offset"] == {"kafka_offset": 3})
    [dead] = read_topic(worker_config, "dlq")
    assert dead.value == _json("bad")
    headers = _headers(dead)
    assert headers["__connect.errors.stage"] == "TASK_PUT"
    assert headers["__connect.errors.exception.message"] == "rejected 'bad'"
    assert [r[4] for r in STATE["listing"]["records"]] == ["ok", "fine"]


def test_errant_record_reporter_without_tolerance_fails_the_task(herder, worker_config):
    _produce(worker_config, "in", [_json("ok"), _json("bad")])
    herder.create_connector(sink_config(report_values="bad"))
    eventually(lambda: herder.connector_status("listing").tasks[0].state is State.FAILED)
    assert "TASK_PUT" in herder.connector_status("listing").tasks[0].trace


def test_a_fatal_put_error_fails_the_task_and_the_batch_is_not_committed(herder,
                                                                        worker_config):
    _produce(worker_config, "in", [_json("ok"), _json("boom")])
    herder.create_connector(sink_config(fail_values="boom"))
    eventually(lambda: herder.connector_status("listing").tasks[0].state is State.FAILED)
    assert "cannot write 'boom'" in herder.connector_status("listing").tasks[0].trace
    assert herder.offsets("listing").offsets == ()


def test_errors_log_includes_the_record_only_when_asked(herder, caplog):
    import logging

    with caplog.at_level(logging.ERROR, logger="omconnect.runtime.retry_with_tolerance"):
        herder.create_connector(source_config(
            "quiet", records=60, batch=60, poison_at=5, errors_tolerance="all",
            errors_log_enable="true"))
        herder.create_connector(source_config(
            "loud", records=60, batch=60, poison_at=5, errors_tolerance="all",
            errors_log_enable="true", errors_log_include_messages="true"))
        eventually(lambda: sum("tolerated" in r.getMessage() for r in caplog.records) == 2)
    quiet, loud = sorted((r.getMessage() for r in caplog.records if "tolerated" in r.getMessage()),
                         key=lambda m: "'loud'" in m)
    assert "VALUE_CONVERTER" in quiet and "value=12345" not in quiet
    assert "value=12345" in loud and "key='s0'" in loud
