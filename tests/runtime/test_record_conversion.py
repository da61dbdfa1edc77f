"""The runtime's batch conversion gives, record for record, what converting one at a
time gives: across topic runs, with and without keys, headers and schemas.
"""

from __future__ import annotations

import pytest

from omconnect.data import BYTES_SCHEMA, STRING_SCHEMA, Headers
from omconnect.records import SinkRecord, SourceRecord
from omconnect.runtime.record_conversion import (
    MessageDeserializer,
    SourceRecordSerializer,
    build_converters,
)
from omconnect.transport.messages import Message

CONVERTERS = ["bytearray", "string", "json"]


def _value(converter: str, n: int) -> tuple[object, object]:
    if converter == "bytearray":
        return BYTES_SCHEMA, f"v{n}".encode()
    if converter == "string":
        return STRING_SCHEMA, f"v{n}"
    return None, {"n": n}


def _records(converter: str) -> list[SourceRecord]:
    records = []
    for n in range(12):
        schema, value = _value(converter, n)
        key_schema, key = _value(converter, -n) if n % 3 else (None, None)
        records.append(SourceRecord(
            topic="a" if n < 5 or n > 8 else "b", partition=n % 2 if n % 4 else None,
            key_schema=key_schema, key=key, value_schema=schema,
            value=None if n == 7 else value, timestamp=n or None,
            headers=Headers([("h", str(n))]) if n % 5 == 0 else Headers.EMPTY,
            source_partition={"p": n // 6}, source_offset={"o": n}))
    return records


@pytest.mark.parametrize("converter", CONVERTERS)
def test_a_batch_serialises_as_its_records_one_by_one(converter):
    serializer = SourceRecordSerializer(build_converters(
        {}, {"key.converter": converter, "value.converter": converter}))
    records = _records(converter)
    assert serializer.serialize(records) == [serializer.serialize_one(r) for r in records]


@pytest.mark.parametrize("converter", CONVERTERS)
def test_a_batch_deserialises_as_its_messages_one_by_one(converter):
    converters = build_converters({}, {"key.converter": converter,
                                       "value.converter": converter})
    messages = [Message(m.topic, m.key, m.value, m.headers, m.timestamp, i % 3, 100 + i)
                for i, m in enumerate(SourceRecordSerializer(converters).serialize(
                    _records(converter)))]
    deserializer = MessageDeserializer(converters)
    batch = deserializer.deserialize(messages)
    single = []
    for m in messages:
        key = converters.key.to_connect(m.topic, m.key)
        value = converters.value.to_connect(m.topic, m.value)
        headers = Headers([(k, converters.header.to_connect_header(m.topic, k, v).value,
                            converters.header.to_connect_header(m.topic, k, v).schema)
                           for k, v in m.headers])
        single.append(SinkRecord(
            topic=m.topic, partition=m.partition, key_schema=key.schema, key=key.value,
            value_schema=value.schema, value=value.value, timestamp=m.timestamp,
            headers=headers, offset=m.offset or 0))
    assert batch == single
    assert [r.topic_partition for r in batch] == [s.topic_partition for s in single]
    assert [r.original_offset for r in batch] == [100 + i for i in range(len(messages))]
