"""What travels through a transport: :class:`Message`, and topic descriptions."""

from __future__ import annotations

import attrs

from omconnect._builders import builder

__all__ = ["Message", "TopicSpec", "WireHeaders"]

WireHeaders = tuple[tuple[str, bytes | None], ...]
"""Headers as they travel: ordered (key, value) pairs, keys may repeat."""


@attrs.frozen(slots=True, weakref_slot=False)  # no weakref slot: see build_message
class Message:
    """A message as the transport carries it: bytes in, bytes out.

    Producers take messages with ``partition`` ``None`` (the transport picks one from the
    key, so equal keys land in one partition) or set; ``offset`` is ignored on send.
    Consumers return messages with ``partition`` and ``offset`` always set.

    Attributes:
        topic: The topic.
        key: The key bytes, or ``None``.
        value: The value bytes, or ``None`` (a tombstone).
        headers: Ordered (key, value-bytes) pairs; keys may repeat.
        timestamp: Milliseconds since the Unix epoch, or ``None`` (the transport stamps it).
        partition: The partition.
        offset: Position within the partition; commit ``offset + 1`` when done.

    """

    topic: str
    key: bytes | None = None
    value: bytes | None = None
    headers: WireHeaders = ()
    timestamp: int | None = None
    partition: int | None = None
    offset: int | None = None

    @property
    def size(self) -> int:
        """Bytes of key, value and headers: what counts against a transport's limit."""
        size = len(self.key or b"") + len(self.value or b"")
        for key, value in self.headers:
            size += len(key) + len(value or b"")
        return size


# A fast positional constructor for omconnect's own hot paths (the runtime's serializer,
# the embedded transport's decoder): every field, in definition order; see
# omconnect._builders. Its fast form needs Message to have no weakref slot of its own.
build_message = builder(Message)
"""``build_message(topic, key, value, headers, timestamp, partition, offset)``."""


@attrs.frozen(slots=True)
class TopicSpec:
    """A topic to create, or a topic as the transport describes it.

    Attributes:
        name: The topic name.
        partitions: How many partitions.
        config: Transport-specific topic settings, passed through (e.g. Kafka's
            ``cleanup.policy``).

    """

    name: str
    partitions: int = 1
    config: dict[str, str] = attrs.field(factory=dict, eq=False, hash=False)
