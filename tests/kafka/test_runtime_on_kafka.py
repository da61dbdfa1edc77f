"""The standalone runtime on the Kafka transport: file → Kafka → file, byte for byte, with
both drivers; offsets, connector configs and statuses live in the transport's compacted
key/value topics.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from conftest import DRIVERS
from omconnect_kafka import KafkaTransport
from omconnect_kafka.testing import TEST_CLIENT_OPTIONS, BrokerHandle

from omconnect.cli import main

pytestmark = [pytest.mark.kafka, pytest.mark.parametrize("driver", DRIVERS)]


def _write(path: Path, settings: dict[str, object]) -> str:
    path.write_text("".join(f"{k}={v}\n" for k, v in settings.items()), encoding="utf-8")
    return str(path)


def _lines(count: int) -> str:
    samples = ["ascii", "naïve café", "日本語", "emoji 🚀", "tab\tinside", "", "  spaced  "]
    return "".join(f"{i:05d} {samples[i % len(samples)]}\n" for i in range(count))


def test_file_to_kafka_to_file_is_exact(tmp_path: Path, tansu: BrokerHandle, driver: str):
    run = uuid.uuid4().hex[:8]
    worker = {"transport": "kafka", "kafka.bootstrap.servers": tansu.url,
              "kafka.client.driver": driver, "kafka.default.partitions": 1,
              "kafka.kv.topic.prefix": f"omconnect-kv-{run}-",
              "key.converter": "string", "value.converter": "string",
              "offset.flush.interval.ms": 500,
              **{f"kafka.{k}": v for k, v in TEST_CLIENT_OPTIONS.items()}}
    (tmp_path / "in.txt").write_text(_lines(5000), encoding="utf-8")
    topic = f"lines-{run}"
    args = [
        _write(tmp_path / "worker.properties", worker),
        _write(tmp_path / "source.properties", {
            "name": f"in-{run}", "connector.class": "FileStreamSource",
            "file": tmp_path / "in.txt", "topic": topic, "batch.size": 500}),
        _write(tmp_path / "sink.properties", {
            "name": f"out-{run}", "connector.class": "FileStreamSink",
            "file": tmp_path / "out.txt", "topics": topic}),
    ]
    assert main(["standalone", *args, "--stop-when-idle", "5"]) == 0
    assert (tmp_path / "out.txt").read_bytes() == (tmp_path / "in.txt").read_bytes()

    # A second run resumes from the offsets stored in Kafka: only the new line arrives.
    with (tmp_path / "in.txt").open("a", encoding="utf-8") as f:
        f.write("one more line\n")
    assert main(["standalone", *args, "--stop-when-idle", "5"]) == 0
    assert (tmp_path / "out.txt").read_bytes() == (tmp_path / "in.txt").read_bytes()

    transport = KafkaTransport({"bootstrap.servers": tansu.url, "client.driver": driver})
    admin = transport.admin()
    topics = admin.list_topics()
    admin.close()
    transport.close()
    assert f"omconnect-kv-{run}-connect-offsets" in topics, \
        "source offsets are not kept in the transport's compacted topic"
