"""Offsets for timestamps: ``startingTimestamp``, ``startingOffsetsByTimestamp``,
``endingTimestamp``, ``endingOffsetsByTimestamp`` (Spark's Kafka source names).

The offset for a timestamp is, as in Spark's Kafka source, the earliest offset whose
record's timestamp is at or after it. The Transport SPI has no time index, so it is
found by a binary search over the partition (``seek`` and a one-record ``poll`` per
step: about 17 reads for 100,000 records), which assumes timestamps that do not decrease
along a partition (records stamped by the transport on arrival, or by one producer's
clock). A partition with no record that late has no offset for the timestamp:
``startingOffsetsByTimestampStrategy`` says whether that fails the query (``error``,
the default) or starts at the partition's end (``latest``); an ending timestamp with no
record that late ends at the partition's end.
"""

from __future__ import annotations

import time

from omconnect.errors import ConfigError, TransportTimeoutError
from omconnect.records import TopicPartition
from omconnect.transport.spi import Consumer

__all__ = ["offset_for_timestamp"]


def offset_for_timestamp(consumer: Consumer, partition: TopicPartition, first: int,
                         end: int, timestamp: int, *, timeout: float) -> int | None:
    """The earliest offset in ``[first, end)`` of ``partition`` whose record's timestamp
    is at least ``timestamp`` (milliseconds since the epoch), or ``None`` when there is
    none. ``consumer`` is a lone consumer assigned ``partition``.

    Raises:
        ConfigError: The transport's records carry no timestamp.
        TransportTimeoutError: A record expected at an offset did not arrive in
            ``timeout`` seconds.

    """
    # The smallest o in [first, end] such that the first record at or after o is late
    # enough, or absent (o = end always is): monotonic in o when timestamps do not
    # decrease, so a binary search finds it.
    low, high = first, end
    while low < high:
        middle = (low + high) // 2
        offset, stamp = _record_at(consumer, partition, middle, end, timeout)
        if offset >= end or stamp >= timestamp:
            high = middle
        else:
            low = offset + 1
    if low >= end:
        return None
    offset, _ = _record_at(consumer, partition, low, end, timeout)
    return offset if offset < end else None


def _record_at(consumer: Consumer, partition: TopicPartition, offset: int, end: int,
               timeout: float) -> tuple[int, int]:
    """(offset, timestamp) of the first record at or after ``offset``; ``(end, 0)``
    when the first one is at ``end`` or later.
    """
    if offset >= end:
        return end, 0
    consumer.seek(partition, offset)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for message in consumer.poll(1, 0.5):
            if message.offset is None or message.offset < offset or \
                    message.partition != partition.partition or message.topic != partition.topic:
                continue
            if message.timestamp is None:
                raise ConfigError(
                    f"{partition}: the transport's records carry no timestamp, so offsets "
                    "cannot be found by time; use startingOffsets / endingOffsets",
                    key="startingTimestamp")
            return message.offset, message.timestamp
    raise TransportTimeoutError(f"{partition}: no record at or after offset {offset} arrived "
                                f"within {timeout:g} s while looking up a timestamp",
                                topic=partition.topic, partition=partition.partition)
