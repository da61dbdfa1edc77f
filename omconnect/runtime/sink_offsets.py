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

__all__ = ["SinkOffsets", "parse_sink_offsets"]


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
            ConfigError: An entry is malformed (naming it and the field).

        """
        self.commit(parse_sink_offsets(entries))

    def commit(self, wanted: Mapping[TopicPartition, int | None]) -> None:
        """Commit positions parsed by :func:`parse_sink_offsets` (``None``: the earliest
        message kept). A topic outside the connector's topics is committed for the group
        too; it is read only once the connector's topics include it.
        """
        self._commit(wanted)

    def committed_partitions(self) -> list[TopicPartition]:
        """The partitions of the connector's topics that have a committed position."""
        consumer = self._consumer()
        try:
            committed = consumer.committed(self._partitions())
        finally:
            consumer.close()
        return sorted(tp for tp, offset in committed.items() if offset is not None)

    def reset(self) -> None:
        """Send every partition with a committed position back to the earliest message."""
        self._commit(dict.fromkeys(self.committed_partitions()))

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


_MAX_PARTITION = 2**31 - 1  # Kafka's partition numbers are 32-bit
_MAX_OFFSET = 2**63 - 1  # and its offsets 64-bit


def parse_sink_offsets(entries: Sequence[Mapping[str, Any]]
                       ) -> dict[TopicPartition, int | None]:
    """The position per topic partition that ``PATCH .../offsets`` entries ask for.

    As Kafka Connect: a partition is ``{"kafka_topic": <topic>, "kafka_partition": <int>}``,
    an offset ``{"kafka_offset": <int>}`` or ``None`` (back to the earliest message);
    integers may also be written as strings of digits (``"3"``). Partitions and offsets
    must be non-negative and fit Kafka's 32-bit partition and 64-bit offset numbers.

    Raises:
        ConfigError: An entry is malformed, naming the entry and the field.

    """
    wanted: dict[TopicPartition, int | None] = {}
    for index, entry in enumerate(entries):
        where = f"offsets[{index}]"
        partition = entry.get("partition") if isinstance(entry, Mapping) else None
        if not isinstance(partition, Mapping) or "kafka_topic" not in partition \
                or "kafka_partition" not in partition:
            raise ConfigError(
                f"{where}.partition of a sink connector must hold the keys 'kafka_topic' "
                f"and 'kafka_partition' (e.g. {{\"kafka_topic\": \"orders\", "
                f"\"kafka_partition\": 0}}), got {partition!r}", key=f"{where}.partition")
        topic = partition["kafka_topic"]
        if not isinstance(topic, str) or not topic.strip():
            raise ConfigError(f"{where}.partition.kafka_topic must be a topic name (a "
                              f"non-empty string), got {topic!r}",
                              key=f"{where}.partition.kafka_topic")
        number = _bounded_int(partition["kafka_partition"], _MAX_PARTITION)
        if number is None:
            raise ConfigError(
                f"{where}.partition.kafka_partition must be a non-negative integer (a "
                f"partition number), got {partition['kafka_partition']!r}",
                key=f"{where}.partition.kafka_partition")
        offset = entry.get("offset")
        position: int | None = None
        if offset is not None:
            if not isinstance(offset, Mapping) or "kafka_offset" not in offset:
                raise ConfigError(f"{where}.offset of a sink connector must be null (back "
                                  f"to the earliest message) or hold the key "
                                  f"'kafka_offset', got {offset!r}", key=f"{where}.offset")
            position = _bounded_int(offset["kafka_offset"], _MAX_OFFSET)
            if position is None:
                raise ConfigError(
                    f"{where}.offset.kafka_offset must be a non-negative integer (the next "
                    f"offset to read), got {offset['kafka_offset']!r}",
                    key=f"{where}.offset.kafka_offset")
        wanted[TopicPartition(topic, number)] = position
    return wanted


def _bounded_int(value: Any, maximum: int) -> int | None:
    """``value`` as an int in ``[0, maximum]`` (an int, or a string of digits), else
    ``None``.
    """
    if isinstance(value, str) and re.fullmatch(r"\s*\+?[0-9]+\s*", value):
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool):
        return None
    return value if 0 <= value <= maximum else None
