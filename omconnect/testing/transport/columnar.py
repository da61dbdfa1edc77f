"""Transport cases: the columnar calls, ``send_batch`` and ``poll_batch``
(TRANSPORT-70 to TRANSPORT-73). They need pyarrow (the ``columnar`` extra).
"""

from __future__ import annotations

from typing import Any

import pytest

from omconnect.errors import MessageTooLargeError
from omconnect.records import TopicPartition
from omconnect.testing.transport.base import TransportCase, TransportHarness
from omconnect.testing.waiting import Deadline
from omconnect.transport.messages import Message
from omconnect.transport.spi import Consumer

__all__ = ["ColumnarCases"]


def _arrow() -> Any:
    return pytest.importorskip("pyarrow", reason="the columnar cases need pyarrow "
                               "(pip install 'omconnect[columnar]')")


def _receive_batches(harness: TransportHarness, consumer: Consumer, count: int, *,
                     timeout: float | None = None) -> list[dict[str, Any]]:
    """Rows polled with ``poll_batch`` until ``count`` arrived or the deadline passed."""
    from omconnect.columnar import consumed_schema

    deadline = Deadline(harness.settings.timeout if timeout is None else timeout)
    rows: list[dict[str, Any]] = []
    while len(rows) < count and not deadline.expired:
        batch = consumer.poll_batch(500, min(0.5, max(deadline.remaining, 0.01)))
        assert batch.schema.equals(consumed_schema()), \
            f"poll_batch returned columns {batch.schema} instead of the consumed schema"
        rows += batch.to_pylist()
    return rows


class ColumnarCases(TransportCase):
    """Arrow batches in and out, with the per-message rules row for row."""

    def test_send_batch_round_trip(self, harness: TransportHarness) -> None:
        """TRANSPORT-70: every row of an acknowledged ``send_batch`` is delivered with its
        key, value and timestamp (null keys and tombstones kept), and the acknowledgement
        gives each row the partition (and, where reported, the offset) it was stored at.
        """
        pa = _arrow()
        topic = harness.topic(partitions=harness.partitions(2))
        consumer = harness.listening(harness.group(), [topic])
        count = harness.count(300)
        keys = [None if i % 5 == 0 else f"k{i % 7}".encode() for i in range(count)]
        values = [None if i == 3 else f"v{i}".encode() for i in range(count)]
        stamps = [1_700_000_000_000 + i for i in range(count)]
        batch = pa.RecordBatch.from_arrays(
            [pa.array(keys, pa.binary()), pa.array(values, pa.binary()),
             pa.array(stamps, pa.int64())], names=["key", "value", "timestamp"])
        ack = harness.producer().send_batch(topic, batch).result(timeout=harness.settings.timeout)
        assert len(ack) == count, "one acknowledgement row per row sent"
        assert ack.topic == topic
        rows = _receive_batches(harness, consumer, count)
        by_stamp = {row["timestamp"]: row for row in rows}
        missing = [s for s in stamps if s not in by_stamp]
        assert not missing, f"{len(missing)} of {count} acknowledged rows never arrived"
        partitions = ack.partitions.to_pylist()
        offsets = ack.offsets.to_pylist()
        for i, stamp in enumerate(stamps):
            row = by_stamp[stamp]
            assert (row["key"], row["value"], row["topic"]) == (keys[i], values[i], topic)
            assert row["partition"] == partitions[i], \
                "the acknowledgement names the partition the row was stored in"
            if offsets[i] is not None:
                assert row["offset"] == offsets[i], \
                    "the acknowledgement names the offset the row was stored at"

    def test_poll_batch_keeps_partition_order_and_commits(self, harness: TransportHarness) -> None:
        """TRANSPORT-71: ``poll_batch`` returns each partition's rows in offset order, and
        committing after it means a reopened member of the group gets none of them again.
        """
        _arrow()
        harness.require(consumer_groups=True)
        topic = harness.topic(partitions=harness.partitions(2))
        group = harness.group()
        consumer = harness.listening(group, [topic])
        count = harness.count(200)
        harness.send(harness.producer(), [Message(topic, key=f"k{i % 3}".encode(),
                                          value=f"{i:06d}".encode()) for i in range(count)])
        rows = _receive_batches(harness, consumer, count)
        assert len({r["value"] for r in rows}) == count, "every message arrives once"
        by_partition: dict[int, list[int]] = {}
        for row in rows:
            by_partition.setdefault(row["partition"], []).append(row["offset"])
        for partition, offsets in by_partition.items():
            assert offsets == sorted(offsets), f"partition {partition} out of offset order"
        ends = {TopicPartition(topic, p): max(o) + 1 for p, o in by_partition.items()}
        consumer.commit(ends)
        consumer.close()
        again = harness.listening(group, [topic])
        assert _receive_batches(harness, again, 1, timeout=harness.settings.quiet) == [], \
            "committed rows were delivered again"

    def test_batches_and_messages_mix(self, harness: TransportHarness) -> None:
        """TRANSPORT-72: rows sent with ``send_batch`` and messages sent with ``send``
        are one stream: ``poll`` returns the rows as messages, ``poll_batch`` the
        messages as rows, headers included where carried.
        """
        pa = _arrow()
        from omconnect.columnar import WIRE_HEADERS_TYPE

        topic = harness.topic()
        by_messages = harness.listening(harness.group(), [topic])
        by_batches = harness.listening(harness.group(), [topic])
        headers = [[{"key": "h", "value": b"1"}, {"key": "h", "value": None}]] \
            if harness.capabilities.headers else [None]
        producer = harness.producer()
        producer.send_batch(topic, pa.RecordBatch.from_arrays(
            [pa.array([b"row"]), pa.array(headers, WIRE_HEADERS_TYPE)],
            names=["value", "headers"])).result(timeout=harness.settings.timeout)
        harness.send(producer, [Message(topic, value=b"message")])
        messages = harness.receive(by_messages, 2)
        assert sorted(m.value or b"" for m in messages) == [b"message", b"row"]
        if harness.capabilities.headers:
            row = next(m for m in messages if m.value == b"row")
            assert row.headers == (("h", b"1"), ("h", None)), "batch headers kept in order"
        rows = _receive_batches(harness, by_batches, 2)
        assert sorted(r["value"] for r in rows) == [b"message", b"row"]

    def test_send_batch_over_maximum_is_rejected(self, harness: TransportHarness) -> None:
        """TRANSPORT-73: a ``send_batch`` with a row over ``max_message_bytes`` fails with
        MessageTooLargeError and nothing of it is delivered.
        """
        pa = _arrow()
        limit = harness.capabilities.max_message_bytes
        if limit is None:
            pytest.skip("needs capability max_message_bytes (the transport declares no limit)")
        topic = harness.topic()
        consumer = harness.listening(harness.group(), [topic])
        batch = pa.RecordBatch.from_arrays(
            [pa.array([b"small-before", b"x" * (limit + 1), b"small-after"])], names=["value"])
        producer = harness.producer()
        with pytest.raises(MessageTooLargeError) as caught:
            producer.send_batch(topic, batch).result(timeout=harness.settings.timeout)
        assert str(limit) in str(caught.value), "the error names the limit"
        harness.send(producer, [Message(topic, value=b"marker")])
        received = harness.receive_until(consumer, lambda got: any(m.value == b"marker"
                                                               for m in got))
        assert [m.value for m in received] == [b"marker"], \
            "nothing of a batch with a too-large row may be delivered"
