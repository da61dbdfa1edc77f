"""A sink connector's offsets: its consumer group's committed positions.

Read, altered and reset through a consumer of the group ``connect-<connector>`` that
never subscribes (so it does not join the group or disturb a rebalance). Entries use
Kafka Connect's names: partition ``{"kafka_topic": t, "kafka_partition": p}``, offset
``{"kafka_offset": n}`` (the next offset to read).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from omconnect.errors import ConfigError, UnsupportedOperationError
from omconnect.records import TopicPartition
from omconnect.transport.spi import Consumer, Transport

__all__ = ["SinkOffsets"]


class SinkOffsets:
    """The group positions of one sink connector.

    Args:
        transport: The open transport.
        group: The connector's group (``connect-<name>``).
        topics: The connector's ``topics``.
        regex: The connector's ``topics.regex``, if any.

    """

    def __init__(self, transport: Transport, *, group: str, topics: Sequence[str],
                 regex: str | None) -> None:
        self._transport = transport
        self._group = group
        self._topics = list(topics)
        self._regex = str(regex).strip() if regex else None

    def _partitions(self) -> list[TopicPartition]:
        admin = self._transport.admin()
        try:
            listed = admin.list_topics()
        finally:
            admin.close()
        if self._regex:
            pattern = re.compile(self._regex)
            names = sorted(t for t in listed if pattern.fullmatch(t))
        else:
            names = [t for t in self._topics if t in listed]
        return [TopicPartition(name, p) for name in names
                for p in range(listed[name].partitions)]

    def _consumer(self) -> Consumer:
        return self._transport.consumer(self._group)

    def read(self) -> list[dict[str, Any]]:
        """The committed position of every partition that has one."""
        consumer = self._consumer()
        try:
            committed = consumer.committed(self._partitions())
        finally:
            consumer.close()
        return [{"partition": {"kafka_topic": tp.topic, "kafka_partition": tp.partition},
                 "offset": {"kafka_offset": offset}}
                for tp, offset in sorted(committed.items()) if offset is not None]

    def alter(self, entries: Sequence[Mapping[str, Any]]) -> None:
        """Commit the given positions; an entry with offset ``None`` goes back to the
        earliest message kept.

        Raises:
            ConfigError: An entry is malformed (naming it).

        """
        wanted: dict[TopicPartition, int | None] = {}
        for index, entry in enumerate(entries):
            partition = entry.get("partition") if isinstance(entry, Mapping) else None
            if not isinstance(partition, Mapping) or not isinstance(
                    partition.get("kafka_topic"), str) or not _is_int(
                    partition.get("kafka_partition")):
                raise ConfigError(
                    f"offsets[{index}].partition must be {{\"kafka_topic\": <topic>, "
                    f"\"kafka_partition\": <int>}}", key=f"offsets[{index}].partition")
            offset = entry.get("offset")
            if offset is not None and not (isinstance(offset, Mapping) and _is_int(
                    offset.get("kafka_offset")) and offset["kafka_offset"] >= 0):
                raise ConfigError(f"offsets[{index}].offset must be {{\"kafka_offset\": "
                                  f"<non-negative int>}} or null",
                                  key=f"offsets[{index}].offset")
            tp = TopicPartition(partition["kafka_topic"], int(partition["kafka_partition"]))
            wanted[tp] = None if offset is None else int(offset["kafka_offset"])
        self._commit(wanted)

    def reset(self) -> None:
        """Send every partition with a committed position back to the earliest message."""
        consumer = self._consumer()
        try:
            committed = consumer.committed(self._partitions())
        finally:
            consumer.close()
        self._commit({tp: None for tp, offset in committed.items() if offset is not None})

    def _commit(self, wanted: Mapping[TopicPartition, int | None]) -> None:
        if not wanted:
            return
        consumer = self._consumer()
        try:
            offsets = {tp: _earliest(consumer, tp) if offset is None else offset
                       for tp, offset in wanted.items()}
            consumer.commit(offsets)
        finally:
            consumer.close()


def _earliest(consumer: Consumer, tp: TopicPartition) -> int:
    try:
        return consumer.offset_range(tp)[0]
    except UnsupportedOperationError:
        return 0


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
