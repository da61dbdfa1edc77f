"""Records: what connectors produce (SourceRecord) and consume (SinkRecord).

Records are immutable; use :meth:`ConnectRecord.evolve` (transforms do) to derive a new one.
A source record's ``source_partition`` and ``source_offset`` are plain dicts of ``str`` to
JSON scalars (str, int, float, bool, None): the runtime stores them as JSON in the
transport's key/value store and gives them back to the task on restart.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeAlias, TypeVar

import attrs

from omconnect._builders import builder
from omconnect.data.headers import Headers
from omconnect.data.schema import Schema

__all__ = [
    "ConnectRecord",
    "ErrantSourceRecord",
    "JsonScalar",
    "RecordMetadata",
    "SinkRecord",
    "SourceRecord",
    "TopicPartition",
]

JsonScalar: TypeAlias = str | int | float | bool | None
"""A value allowed in a source partition or offset."""

R = TypeVar("R", bound="ConnectRecord")


@attrs.frozen(slots=True, order=True)
class TopicPartition:
    """A partition of a topic."""

    topic: str
    partition: int

    def __str__(self) -> str:
        return f"{self.topic}-{self.partition}"


def _headers(value: Headers | Any) -> Headers:
    if value is None:
        return Headers.EMPTY
    return value if isinstance(value, Headers) else Headers(value)


@attrs.frozen(slots=True, kw_only=True)
class ConnectRecord:
    """Fields common to source and sink records.

    Attributes:
        topic: The topic the record goes to (source) or came from (sink).
        partition: The partition, or ``None`` to let the transport choose (by key).
        key_schema: The key's schema, or ``None`` for a schemaless key.
        key: The key.
        value_schema: The value's schema, or ``None`` for a schemaless value.
        value: The value; ``None`` is a tombstone.
        timestamp: Milliseconds since the Unix epoch, or ``None``.
        headers: Ordered headers; keys may repeat.

    """

    topic: str
    partition: int | None = None
    key_schema: Schema | None = None
    key: Any = None
    value_schema: Schema | None = None
    value: Any = None
    timestamp: int | None = None
    headers: Headers = attrs.field(default=Headers.EMPTY, converter=_headers)

    def evolve(self: R, **changes: Any) -> R:
        """A copy of this record with ``changes`` applied (same record type)."""
        return attrs.evolve(self, **changes)


@attrs.frozen(slots=True, kw_only=True)
class SourceRecord(ConnectRecord):
    """A record produced by a source task.

    Attributes:
        source_partition: Where in the source system the record comes from (e.g.
            ``{"filename": "/var/log/app.log"}``); offsets are tracked per source partition.
        source_offset: How far the source got, for that source partition, once this
            record is delivered (e.g. ``{"position": 8812}``).

    """

    source_partition: Mapping[str, JsonScalar] = attrs.field(factory=dict)
    source_offset: Mapping[str, JsonScalar] = attrs.field(factory=dict)


@attrs.frozen(slots=True, kw_only=True)
class ErrantSourceRecord(SourceRecord):
    """A record a source task could not read (e.g. a malformed line of its input),
    returned by ``poll`` in its place so that the runtime handles it per
    ``errors.tolerance``, like a record that failed conversion.

    The runtime never converts, transforms or sends it. Under ``errors.tolerance=none``
    the task fails (stage ``TASK_POLL``), its trace naming the record and ``error``. Under
    ``all`` it is logged when ``errors.log.enable``, written to the dead-letter topic when
    one is set (its key, value and headers serialised as for any record, plus the context
    headers), and its ``source_offset`` is committed in order with the task's other
    records once that write is acknowledged: a restart does not read it again.

    Put where it failed into the record (e.g. headers naming the object and the line)
    and into ``error``'s message. The runtime checks the exact type: do not subclass.

    Attributes:
        error: Why the record could not be read.

    """

    error: BaseException


@attrs.frozen(slots=True, kw_only=True)
class SinkRecord(ConnectRecord):
    """A record delivered to a sink task.

    Attributes:
        partition: The transport partition it was read from (always set).
        offset: Its offset within that partition; commit ``offset + 1`` once it is written.
        original_topic: The topic before any transform renamed it.
        original_partition: The partition before any transform changed it.
        original_offset: The offset before any transform changed it.

    """

    offset: int = 0
    original_topic: str | None = None
    original_partition: int | None = None
    original_offset: int | None = None

    def __attrs_post_init__(self) -> None:
        if self.original_topic is None:
            object.__setattr__(self, "original_topic", self.topic)
        if self.original_partition is None:
            object.__setattr__(self, "original_partition", self.partition)
        if self.original_offset is None:
            object.__setattr__(self, "original_offset", self.offset)

    @property
    def topic_partition(self) -> TopicPartition:
        """The original topic and partition this record was read from."""
        assert self.original_topic is not None and self.original_partition is not None
        return TopicPartition(self.original_topic, self.original_partition)


# Fast positional constructors for omconnect's own hot paths (see omconnect._builders):
# every field, in definition order and final form (headers a Headers, originals set);
# no defaults, converters or post-init run. About four times cheaper than the classes'
# keyword constructors. Not public API: connectors use the classes.
build_source_record = builder(SourceRecord)
"""``build_source_record(topic, partition, key_schema, key, value_schema, value, timestamp,
headers, source_partition, source_offset)``."""

build_sink_record = builder(SinkRecord)
"""``build_sink_record(topic, partition, key_schema, key, value_schema, value, timestamp,
headers, offset, original_topic, original_partition, original_offset)``."""


@attrs.frozen(slots=True, weakref_slot=False)  # no weakref slot: see build_record_metadata
class RecordMetadata:
    """Where the transport stored an acknowledged source record."""

    topic: str
    partition: int
    offset: int | None
    timestamp: int | None = None


# Its fast form (twin class + __class__ swap) needs RecordMetadata to have no weakref slot
# of its own; with one, builder() falls back to object.__setattr__ per field.
build_record_metadata = builder(RecordMetadata)
"""``build_record_metadata(topic, partition, offset, timestamp)``: the fast positional
constructor transports use to acknowledge batches (see :func:`build_source_record`)."""
