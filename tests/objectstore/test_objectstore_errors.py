"""Malformed records follow errors.tolerance: the dead-letter topic with the object and
line in headers (all), or a failed task naming them (none). Run in a worker (memory
transport), as users run the connector.
"""

from __future__ import annotations

import gzip
import json
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from objectstore_helpers import write_jsonl

from omconnect.connector.lifecycle import State
from omconnect.records import TopicPartition
from omconnect.runtime import StandaloneHerder
from omconnect.transport import Message
from omconnect.transport.memory import MemoryTransport


@pytest.fixture
def namespace() -> Iterator[str]:
    name = f"os-{uuid.uuid4().hex[:8]}"
    yield name
    MemoryTransport.reset(name)


@pytest.fixture
def herder(namespace) -> Iterator[StandaloneHerder]:
    worker = {"transport": "memory", "memory.namespace": namespace,
              "offset.flush.interval.ms": 50}
    with StandaloneHerder(worker) as h:
        yield h


def _connector(directory, **settings: Any) -> dict[str, Any]:
    config = {"name": "objects", "connector.class": "objectstore-source",
              "objectstore.url": str(directory), "topic": "lines", "input.format": "jsonl",
              "value.converter": "json", "value.converter.schemas.enable": "false",
              "key.converter": "string", "poll.backoff.initial.ms": "10",
              "poll.backoff.max.ms": "50"}
    config.update({k.replace("_", "."): v for k, v in settings.items()})
    return config


def _topic(namespace: str, topic: str) -> list[Message]:
    transport = MemoryTransport({"namespace": namespace})
    topics = transport.admin().list_topics()
    if topic not in topics:
        return []
    consumer = transport.consumer()
    consumer.assign([TopicPartition(topic, p) for p in range(topics[topic].partitions)])
    out: list[Message] = []
    while batch := consumer.poll(10_000, 0.1):
        out += batch
    consumer.close()
    return out


def _headers(message: Message) -> dict[str, str]:
    return {k: (v or b"").decode() for k, v in message.headers}


def _wait(condition, what: str, timeout: float = 15.0) -> Any:
    deadline = time.monotonic() + timeout
    while not (value := condition()):
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)
    return value


def _committed(herder: StandaloneHerder) -> dict[str, dict[str, Any]]:
    return {o["partition"]["object"]: o["offset"] for o in herder.offsets("objects").offsets}


def _all(settings: dict[str, Any]) -> dict[str, Any]:
    return {**settings, "errors.tolerance": "all",
            "errors.deadletterqueue.topic.name": "dlq",
            "errors.deadletterqueue.context.headers.enable": "true"}


def test_a_malformed_line_goes_to_the_dead_letter_topic_naming_object_and_line(
        tmp_path, herder, namespace):
    write_jsonl(tmp_path / "a.jsonl", [{"n": 1}, {"n": 2}])
    (tmp_path / "b.jsonl").write_text('{"n": 3}\n\n{"n": oops}\n{"n": 4}\n')
    herder.create_connector(_all(_connector(tmp_path)))
    _wait(lambda: _committed(herder).get("b.jsonl", {}).get("done"), "b.jsonl done")
    assert [json.loads(m.value)["n"] for m in _topic(namespace, "lines")] == [1, 2, 3, 4]
    [dead] = _topic(namespace, "dlq")
    headers = _headers(dead)
    assert headers["objectstore.object"] == "b.jsonl"
    assert headers["objectstore.line"] == "3"
    assert headers["objectstore.url"] == tmp_path.as_uri()
    assert dead.key == b"b.jsonl"
    assert headers["__connect.errors.stage"] == "TASK_POLL"
    message = headers["__connect.errors.exception.message"]
    assert f"malformed line 3 in object {tmp_path.as_uri()}/b.jsonl" in message
    # records count items (a blank line is none): the bad line is b's second record
    assert json.loads(headers["__connect.errors.source.offset"])["records"] == 2
    assert _committed(herder)["b.jsonl"]["records"] == 3  # the bad line counted: skip exact
    assert herder.connector_status("objects").tasks[0].state is State.RUNNING
    assert herder.metrics()[0].dead_lettered == 1


def test_a_malformed_line_fails_the_task_naming_object_and_line_under_tolerance_none(
        tmp_path, herder, namespace):
    (tmp_path / "b.jsonl").write_text('{"n": 1}\n{"n": 2}\n{"n": oops}\n{"n": 4}\n')
    herder.create_connector(_connector(tmp_path))
    status = _wait(lambda: (s := herder.connector_status("objects").tasks[0]).state
                   is State.FAILED and s, "the task to fail")
    assert f"malformed line 3 in object {tmp_path.as_uri()}/b.jsonl" in status.trace
    assert "errors.tolerance=all" in status.trace  # the fix is named
    # what was read before the bad line was delivered, and nothing after it
    _wait(lambda: len(_topic(namespace, "lines")) == 2, "the two good records")
    assert _committed(herder).get("b.jsonl", {}).get("records") in (None, 1, 2)


def test_a_csv_row_of_the_wrong_width_names_its_line(tmp_path, herder, namespace):
    (tmp_path / "orders.csv").write_text("id,name\n1,ada\n2,bob,extra\n3,cy\n")
    herder.create_connector(_all(_connector(tmp_path, input_format="csv")))
    _wait(lambda: _committed(herder).get("orders.csv", {}).get("done"), "orders.csv done")
    assert [json.loads(m.value)["id"] for m in _topic(namespace, "lines")] == ["1", "3"]
    [dead] = _topic(namespace, "dlq")
    assert (_headers(dead)["objectstore.object"], _headers(dead)["objectstore.line"]) == (
        "orders.csv", "3")


def test_a_corrupt_compressed_object_is_dead_lettered_and_the_task_goes_on(
        tmp_path, herder, namespace):
    data = gzip.compress(b"".join(b'{"n": %d}\n' % i for i in range(2000)))
    (tmp_path / "a.jsonl.gz").write_bytes(data[: len(data) // 2])  # cut short in transit
    write_jsonl(tmp_path / "b.jsonl", [{"n": -1}])
    herder.create_connector(_all(_connector(tmp_path)))
    _wait(lambda: _committed(herder).get("b.jsonl", {}).get("done"), "b.jsonl done")
    [dead] = _topic(namespace, "dlq")
    headers = _headers(dead)
    assert headers["objectstore.object"] == "a.jsonl.gz"
    read = int(headers["objectstore.record"]) - 1
    assert f"could not read object {tmp_path.as_uri()}/a.jsonl.gz after {read} record(s)" \
        in headers["__connect.errors.exception.message"]
    good = [json.loads(m.value)["n"] for m in _topic(namespace, "lines")]
    assert good == [*range(read), -1]  # every record before the damage, in order
    assert _committed(herder)["a.jsonl.gz"]["done"] is True
    assert herder.connector_status("objects").tasks[0].state is State.RUNNING


def test_an_unreadable_avro_file_fails_the_task_naming_it_under_tolerance_none(
        tmp_path, herder):
    (tmp_path / "broken.avro").write_bytes(b"this is not an avro container file")
    herder.create_connector(_connector(tmp_path, input_format="avro"))
    status = _wait(lambda: (s := herder.connector_status("objects").tasks[0]).state
                   is State.FAILED and s, "the task to fail")
    assert f"malformed record 1 in object {tmp_path.as_uri()}/broken.avro" in status.trace
