"""The standalone runtime on the Kafka transport: file → Kafka → file, byte for byte, with
both drivers; source offsets kept in the transport's compacted topics; a record over the
size limit routed by ``errors.tolerance``.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest
from kafka_support import DRIVERS
from omconnect_kafka import KafkaTransport
from omconnect_testbrokers.kafka import TEST_CLIENT_OPTIONS, BrokerHandle

from omconnect.cli import main

pytestmark = pytest.mark.kafka


def _write(path: Path, settings: dict[str, object]) -> str:
    path.write_text("".join(f"{k}={v}\n" for k, v in settings.items()), encoding="utf-8")
    return str(path)


def _lines(count: int) -> str:
    samples = ["ascii", "naïve café", "日本語", "emoji 🚀", "tab\tinside", "", "  spaced  "]
    return "".join(f"{i:05d} {samples[i % len(samples)]}\n" for i in range(count))


def _pipeline(workdir: Path, url: str, driver: str, **worker: Any) -> tuple[list[str], str]:
    """Worker, file-source and file-sink configs for in.txt → a fresh topic → out.txt."""
    run = uuid.uuid4().hex[:8]
    settings = {"transport": "kafka", "kafka.bootstrap.servers": url,
                "kafka.client.driver": driver, "kafka.kv.topic.prefix": f"omconnect-kv-{run}-",
                "key.converter": "string", "value.converter": "string",
                "offset.flush.interval.ms": 500,
                **{f"kafka.{k}": v for k, v in TEST_CLIENT_OPTIONS.items()}, **worker}
    topic = f"lines-{run}"
    return [
        _write(workdir / "worker.properties", settings),
        _write(workdir / "source.properties", {
            "name": f"in-{run}", "connector.class": "FileStreamSource",
            "file": workdir / "in.txt", "topic": topic, "batch.size": 500}),
        _write(workdir / "sink.properties", {
            "name": f"out-{run}", "connector.class": "FileStreamSink",
            "file": workdir / "out.txt", "topics": topic}),
    ], run


@pytest.mark.parametrize("driver", DRIVERS)
def test_file_to_kafka_to_file_is_exact(tmp_path: Path, tansu: BrokerHandle, driver: str):
    (tmp_path / "in.txt").write_text(_lines(5000), encoding="utf-8")
    args, _ = _pipeline(tmp_path, tansu.url, driver)
    assert main(["standalone", *args, "--stop-when-idle", "4"]) == 0
    assert (tmp_path / "out.txt").read_bytes() == (tmp_path / "in.txt").read_bytes()


def test_a_second_run_resumes_from_the_offsets_kept_in_kafka(tmp_path: Path,
                                                               tansu: BrokerHandle):
    (tmp_path / "in.txt").write_text("a\nb\n", encoding="utf-8")
    args, run = _pipeline(tmp_path, tansu.url, "kafka-python")
    assert main(["standalone", *args, "--stop-when-idle", "4"]) == 0
    with (tmp_path / "in.txt").open("a", encoding="utf-8") as f:
        f.write("c\n")
    assert main(["standalone", *args, "--stop-when-idle", "4"]) == 0
    assert (tmp_path / "out.txt").read_text(encoding="utf-8") == "a\nb\nc\n"
    transport = KafkaTransport({"bootstrap.servers": tansu.url})
    admin = transport.admin()
    topics = admin.list_topics()
    admin.close()
    transport.close()
    assert any(t.startswith(f"omconnect-kv-{run}-connect-offsets-") for t in topics), \
        "source offsets are not kept in the transport's compacted topic"


@pytest.mark.parametrize(("tolerance", "status"), [("all", 0), ("none", 1)])
def test_a_line_over_the_size_limit_is_routed_by_errors_tolerance(
        tmp_path: Path, tansu: BrokerHandle, tolerance: str, status: int,
        caplog: pytest.LogCaptureFixture):
    huge = "x" * 5000  # over kafka.max.request.size=4096 less 512 bytes of framing
    (tmp_path / "in.txt").write_text(f"before\n{huge}\nafter\n", encoding="utf-8")
    args, _ = _pipeline(tmp_path, tansu.url, "confluent", **{
        "kafka.max.request.size": 4096})
    with open(args[1], "a", encoding="utf-8") as source:
        source.write(f"errors.tolerance={tolerance}\nerrors.log.enable=true\n")
    assert (main(["standalone", *args, "--stop-when-idle", "4"]) != 0) == bool(status)
    written = (tmp_path / "out.txt").read_text(encoding="utf-8") if (
        tmp_path / "out.txt").exists() else ""
    if tolerance == "all":
        assert written == "before\nafter\n", "the other lines must arrive, the huge one not"
    else:
        assert huge not in written
    assert "exceeds the transport's limit of 3584 bytes" in caplog.text, \
        "the failure (or the logged, tolerated error) must name the limit"


@pytest.mark.parametrize("driver", DRIVERS)
def test_the_columnar_path_moves_every_record_on_kafka(tansu: BrokerHandle, driver: str):
    pytest.importorskip("pyarrow")
    from omconnect_console.null import COUNTS

    from omconnect.runtime import StandaloneHerder
    from omconnect.testing.waiting import eventually

    run = uuid.uuid4().hex[:8]
    worker = {"transport": "kafka", "kafka.bootstrap.servers": tansu.url,
              "kafka.client.driver": driver, "kafka.kv.topic.prefix": f"omconnect-kv-{run}-",
              "key.converter": "bytearray", "value.converter": "bytearray",
              "offset.flush.interval.ms": 200,
              **{f"kafka.{k}": v for k, v in TEST_CLIENT_OPTIONS.items()}}
    sink = f"null-{run}"
    with StandaloneHerder(worker) as herder:
        herder.create_connector({"name": f"gen-{run}", "connector.class": "datagen",
                                 "topic": f"payload-{run}", "quickstart": "payload",
                                 "max.messages": 5000, "batch.size": 700})
        herder.create_connector({"name": sink, "connector.class": "null",
                                 "topics": f"payload-{run}"})
        eventually(lambda: COUNTS[sink] >= 5000, timeout=60)
        eventually(lambda: [o["offset"] for o in herder.offsets(f"gen-{run}").offsets]
                   == [{"sequence": 5000}], timeout=30)
        metrics = {m.connector: m for m in herder.metrics()}
        assert metrics[f"gen-{run}"].columnar == 5000
        assert metrics[sink].columnar == 5000
    assert COUNTS.pop(sink) == 5000
