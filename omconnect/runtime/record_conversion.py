"""Between records and transport messages: the key, value and header converters, in batches.

The fast path converts a whole batch with the converters' batch methods (one call per
topic run, not per record). When that raises, the batch is converted again record by
record, each stage (key, value, headers) under the task's
:class:`~omconnect.runtime.retry_with_tolerance.RetryWithTolerance`, so that exactly the
failing records are retried, tolerated or reported, each with its stage.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import partial
from itertools import repeat
from operator import attrgetter
from typing import Any

from omconnect.converters.task_converters import (
    Converters,
    build_converters,
    converter_config_errors,
)
from omconnect.data.headers import Header, Headers
from omconnect.data.schema import Schema
from omconnect.records import SinkRecord, SourceRecord, build_sink_record
from omconnect.runtime.retry_with_tolerance import (
    RetryWithTolerance,
    Stage,
    Tolerated,
    class_name,
)
from omconnect.transport.messages import Message, WireHeaders, build_message

__all__ = [
    "Converters",
    "MessageDeserializer",
    "SourceRecordSerializer",
    "build_converters",
    "converter_config_errors",
]

_TOPIC = attrgetter("topic")
_KEY_SCHEMA = attrgetter("key_schema")
_KEY = attrgetter("key")
_VALUE_SCHEMA = attrgetter("value_schema")
_VALUE = attrgetter("value")
_HEADERS = attrgetter("headers")
_TIMESTAMP = attrgetter("timestamp")
_PARTITION = attrgetter("partition")
_OFFSET = attrgetter("offset")


def _topic_runs(items: Sequence[Any]) -> list[tuple[str, Sequence[Any]]]:
    """(topic, items) of each run of consecutive items with the same topic."""
    n = len(items)
    if not n:
        return []
    topics = list(map(_TOPIC, items))
    topic = topics[0]
    if topics.count(topic) == n:  # the usual case, decided at C speed
        return [(topic, items)]
    runs: list[tuple[str, Sequence[Any]]] = []
    start = 0
    for i in range(1, n):
        t = topics[i]
        if t != topic:
            runs.append((topic, items[start:i]))
            start, topic = i, t
    runs.append((topic, items[start:n]))
    return runs


class SourceRecordSerializer:
    """Turns source records into messages with the task's converters.

    Args:
        converters: The task's converters.

    """

    def __init__(self, converters: Converters) -> None:
        self.converters = converters
        self._key = converters.key
        self._value = converters.value
        self._header = converters.header
        self.key_class = class_name(converters.key)
        self.value_class = class_name(converters.value)
        self.header_class = class_name(converters.header)

    def serialize(self, records: Sequence[SourceRecord]) -> list[Message]:
        """Every record as a message, converted in columns per topic run.

        Raises:
            Exception: Whatever a converter raised (then use :meth:`serialize_each`).

        """
        out: list[Message] = []
        key_columns = self._key.from_connect_columns
        value_columns = self._value.from_connect_columns
        empty = Headers.EMPTY
        for topic, run in _topic_runs(records):
            n = len(run)
            key_schemas = list(map(_KEY_SCHEMA, run))
            keys_in = list(map(_KEY, run))
            # A null key without a schema is None bytes for every converter: skip the calls.
            if keys_in.count(None) == n and key_schemas.count(None) == n:
                keys: Iterable[bytes | None] = repeat(None, n)
            else:
                keys = key_columns(topic, key_schemas, keys_in)
            values = value_columns(topic, list(map(_VALUE_SCHEMA, run)), list(map(_VALUE, run)))
            headers = list(map(_HEADERS, run))
            wire: Iterable[WireHeaders]
            if headers.count(empty) == n:  # identity first: no Headers.__eq__ calls
                wire = repeat((), n)
            else:
                wire = [() if h is empty or not h else self._headers(topic, h)
                        for h in headers]
            out.extend(map(build_message, repeat(topic, n), keys, values, wire,
                           map(_TIMESTAMP, run), map(_PARTITION, run), repeat(None, n)))
        return out

    def serialize_one(self, record: SourceRecord) -> Message:
        """One record as a message (the dead-letter queue's serialisation).

        Raises:
            Exception: Whatever a converter raised.

        """
        topic = record.topic
        return Message(topic, self._key.from_connect(topic, record.key_schema, record.key),
                       self._value.from_connect(topic, record.value_schema, record.value),
                       self._headers(topic, record.headers) if record.headers else (),
                       record.timestamp, record.partition)

    def serialize_each(
        self, records: Sequence[SourceRecord], errors: RetryWithTolerance
    ) -> list[Message | Tolerated]:
        """Every record as a message, one by one, each stage under ``errors``.

        Returns:
            A message per record, or :class:`Tolerated` for a record that failed and was
            tolerated.

        Raises:
            ToleranceExceededError: A record failed and errors.tolerance is none.

        """
        out: list[Message | Tolerated] = []
        for record in records:
            topic = record.topic
            key = errors.execute(
                partial(self._key.from_connect, topic, record.key_schema, record.key),
                Stage.KEY_CONVERTER, self.key_class, source_record=record)
            if isinstance(key, Tolerated):
                out.append(key)
                continue
            value = errors.execute(
                partial(self._value.from_connect, topic, record.value_schema, record.value),
                Stage.VALUE_CONVERTER, self.value_class, source_record=record)
            if isinstance(value, Tolerated):
                out.append(value)
                continue
            headers: WireHeaders = ()
            if record.headers:
                converted = errors.execute(
                    partial(self._headers, topic, record.headers),
                    Stage.HEADER_CONVERTER, self.header_class, source_record=record)
                if isinstance(converted, Tolerated):
                    out.append(converted)
                    continue
                headers = converted
            out.append(Message(topic, key, value, headers, record.timestamp, record.partition))
        return out

    def _headers(self, topic: str, headers: Headers) -> WireHeaders:
        convert = self._header.from_connect_header
        return tuple((h.key, convert(topic, h.key, h.schema, h.value)) for h in headers)


class MessageDeserializer:
    """Turns consumed messages into sink records with the task's converters.

    Args:
        converters: The task's converters.

    """

    def __init__(self, converters: Converters) -> None:
        self.converters = converters
        self._key = converters.key
        self._value = converters.value
        self._header = converters.header
        self.key_class = class_name(converters.key)
        self.value_class = class_name(converters.value)
        self.header_class = class_name(converters.header)

    def deserialize(self, messages: Sequence[Message]) -> list[SinkRecord]:
        """Every message as a sink record, converted in columns per topic run.

        Raises:
            Exception: Whatever a converter raised (then use :meth:`deserialize_each`).

        """
        out: list[SinkRecord] = []
        key_columns = self._key.to_connect_columns
        value_columns = self._value.to_connect_columns
        empty = Headers.EMPTY
        for topic, run in _topic_runs(messages):
            n = len(run)
            raw_keys = list(map(_KEY, run))
            # None bytes read as a null with no schema for every converter: skip the calls.
            key_schemas: Iterable[Schema | None]
            keys: Iterable[Any]
            if raw_keys.count(None) == n:
                key_schemas, keys = repeat(None, n), repeat(None, n)
            else:
                key_schemas, keys = key_columns(topic, raw_keys)
            value_schemas, values = value_columns(topic, list(map(_VALUE, run)))
            wire = list(map(_HEADERS, run))
            headers: Iterable[Headers]
            if wire.count(()) == n:
                headers = repeat(empty, n)
            else:
                headers = [self._headers(topic, h) if h else empty for h in wire]
            partitions = list(map(_PARTITION, run))
            offsets = list(map(_OFFSET, run))
            if None in offsets:  # not from a consumer (which always sets it): as offset 0
                offsets = [o or 0 for o in offsets]
            out.extend(map(build_sink_record, repeat(topic, n), partitions, key_schemas, keys,
                           value_schemas, values, map(_TIMESTAMP, run), headers, offsets,
                           repeat(topic, n), partitions, offsets))
        return out

    def deserialize_each(
        self, messages: Sequence[Message], errors: RetryWithTolerance
    ) -> list[SinkRecord | Tolerated]:
        """Every message as a sink record, one by one, each stage under ``errors``.

        Raises:
            ToleranceExceededError: A record failed and errors.tolerance is none.

        """
        out: list[SinkRecord | Tolerated] = []
        for m in messages:
            topic = m.topic
            key = errors.execute(partial(self._key.to_connect, topic, m.key),
                                 Stage.KEY_CONVERTER, self.key_class, message=m)
            if isinstance(key, Tolerated):
                out.append(key)
                continue
            value = errors.execute(partial(self._value.to_connect, topic, m.value),
                                   Stage.VALUE_CONVERTER, self.value_class, message=m)
            if isinstance(value, Tolerated):
                out.append(value)
                continue
            headers = Headers.EMPTY
            if m.headers:
                converted = errors.execute(partial(self._headers, topic, m.headers),
                                           Stage.HEADER_CONVERTER, self.header_class, message=m)
                if isinstance(converted, Tolerated):
                    out.append(converted)
                    continue
                headers = converted
            out.append(SinkRecord(
                topic=topic, partition=m.partition, key_schema=key.schema, key=key.value,
                value_schema=value.schema, value=value.value, timestamp=m.timestamp,
                headers=headers, offset=m.offset or 0, original_topic=topic,
                original_partition=m.partition, original_offset=m.offset))
        return out

    def _headers(self, topic: str, headers: WireHeaders) -> Headers:
        convert = self._header.to_connect_header
        items = []
        for key, data in headers:
            converted = convert(topic, key, data)
            items.append(Header(key, converted.value, converted.schema))
        return Headers(items)

