"""The memory transport: the shared in-core cases, plus what is particular to it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from incore_cases import InCoreTransportCases, MakeTransport, drain, send

from omconnect import plugins
from omconnect.records import TopicPartition
from omconnect.transport import Message, Transport
from omconnect.transport.memory import MemoryTransport


@pytest.fixture(autouse=True)
def fresh_memory() -> Iterator[None]:
    MemoryTransport.reset()
    yield
    MemoryTransport.reset()


class TestMemoryTransport(InCoreTransportCases):
    name = "memory"

    @pytest.fixture
    def make_transport(self) -> Iterator[MakeTransport]:
        opened: list[Transport] = []

        def make(**options: Any) -> Transport:
            transport = MemoryTransport(options)
            opened.append(transport)
            return transport

        yield make
        for transport in opened:
            transport.close()


def test_capabilities_say_in_process_only() -> None:
    capabilities = MemoryTransport().capabilities
    assert capabilities.replayable and capabilities.consumer_groups
    assert capabilities.ordered_per_key and capabilities.new_subscriber_receives_old_messages
    assert not capabilities.persistent and not capabilities.cross_process
    assert capabilities.max_message_bytes == 1024 * 1024


def test_namespaces_share_state_within_and_are_isolated_between() -> None:
    send(MemoryTransport({"namespace": "a"}), [Message("t", None, b"in a")])
    same = MemoryTransport({"namespace": "a"}).consumer(None)
    same.assign([TopicPartition("t", 0)])
    assert [m.value for m in drain(same, 1)] == [b"in a"]
    assert "t" not in MemoryTransport({"namespace": "b"}).admin().list_topics()


def test_reset_forgets_one_namespace() -> None:
    send(MemoryTransport({"namespace": "a"}), [Message("t", None, b"v")])
    send(MemoryTransport({"namespace": "b"}), [Message("t", None, b"v")])
    MemoryTransport.reset("a")
    assert MemoryTransport({"namespace": "a"}).admin().list_topics() == {}
    assert "t" in MemoryTransport({"namespace": "b"}).admin().list_topics()


def test_loaded_by_name_through_the_plugin_registry() -> None:
    if "memory" not in plugins.available(plugins.TRANSPORTS):
        pytest.skip("omconnect is not installed, so its entry points are not registered")
    assert plugins.load(plugins.TRANSPORTS, "memory") is MemoryTransport


def test_every_option_is_documented() -> None:
    doc = (Path(__file__).parents[2] / "docs" / "transports" / "memory.md").read_text()
    for key in MemoryTransport.config_def:
        assert f"`memory.{key.name}`" in doc, f"memory.{key.name} is not documented"


def test_columnar_sends_are_stored_and_polled_as_columns_in_partition_order() -> None:
    pa = pytest.importorskip("pyarrow", reason="the columnar extra is not installed")
    transport = MemoryTransport({"default.partitions": 3})
    producer = transport.producer()
    keys = [f"k{i % 7}".encode() for i in range(60)]
    sent = pa.RecordBatch.from_arrays(
        [pa.array(keys, pa.binary()), pa.array([b"v%d" % i for i in range(60)], pa.binary())],
        names=["key", "value"])
    metadata = producer.send_batch("t", sent).result(timeout=5)
    # A keyed row goes where a message with that key goes.
    placed = producer.send([Message("t", key, b"m") for key in keys]).result(timeout=5)
    assert metadata.partitions.to_pylist() == [m.partition for m in placed]
    consumer = transport.consumer(None)
    consumer.assign([TopicPartition("t", p) for p in range(3)])
    polled = []
    while True:
        batch = consumer.poll_batch(1000, 0.2)
        if batch.num_rows == 0:
            break
        polled.append(batch)
    rows = pa.Table.from_batches(polled).to_pylist()
    assert len(rows) == 120
    for p in range(3):
        mine = [r for r in rows if r["partition"] == p]
        assert [r["offset"] for r in mine] == list(range(len(mine)))
        columnar = [r["value"] for r in mine if r["value"] != b"m"]
        assert columnar == [b"v%d" % i for i in range(60) if metadata.partitions[i].as_py() == p]
    # Rows stored as columns come back as slices of what was stored: the values' bytes
    # of a single-partition batch are the very buffer that was sent.
    single = MemoryTransport({"namespace": "one"})
    single.producer().send_batch("u", sent).result(timeout=5)
    reader = single.consumer(None)
    reader.assign([TopicPartition("u", 0)])
    first = reader.poll_batch(1000, 1)
    assert first.num_rows == 60
    assert first.column("value").buffers()[2].address == sent.column("value").buffers()[2].address
    assert [m.value for m in reader.poll(10, 0.05)] == []
    reader.seek(TopicPartition("u", 0), 58)
    assert [(m.offset, m.key, m.value) for m in reader.poll(10, 1)] == [
        (58, b"k2", b"v58"), (59, b"k3", b"v59")]
