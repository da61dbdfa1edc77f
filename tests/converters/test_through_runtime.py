"""The converters as the runtime uses them: chosen by name (Kafka Connect's class names
too) in worker and connector configs, records converted in batches, headers included.
"""

from __future__ import annotations

import datetime as dt
import decimal

import attrs
import pytest
from converter_catalog import ADDRESS, ORDER, order

from omconnect.converters import JsonConverter, SimpleHeaderConverter
from omconnect.data import INT64_SCHEMA, OPTIONAL_STRING_SCHEMA, Headers, Struct, decimal_schema
from omconnect.records import SourceRecord
from omconnect.runtime.record_conversion import (
    MessageDeserializer,
    SourceRecordSerializer,
    build_converters,
)


def _records() -> list[SourceRecord]:
    headers = Headers([("trace", "abc-123"), ("attempt", 2), ("when", dt.date(2024, 5, 1))])
    return [
        SourceRecord(topic="orders", key_schema=INT64_SCHEMA, key=42, value_schema=ORDER,
                     value=order(), headers=headers, timestamp=1_700_000_000_000),
        # A tombstone: no value schema (a required schema with a null is an error in JSON,
        # as in Kafka Connect).
        SourceRecord(topic="orders", key_schema=INT64_SCHEMA, key=43, value_schema=None,
                     value=None),
        SourceRecord(topic="addresses", key_schema=None, key=None, value_schema=ADDRESS,
                     value=Struct(ADDRESS, {"street": "x"})),
    ]


def _round_trip(worker: dict[str, str], connector: dict[str, str] | None = None):
    writer = SourceRecordSerializer(build_converters(connector or {}, worker))
    messages = [attrs.evolve(m, partition=0, offset=i)
                for i, m in enumerate(writer.serialize(_records()))]
    reader = MessageDeserializer(build_converters(connector or {}, worker))
    return messages, reader.deserialize(messages)


@pytest.mark.parametrize("value_converter", [
    "json", "org.apache.kafka.connect.json.JsonConverter", "avro",
])
def test_records_survive_the_runtime_path(value_converter):
    messages, records = _round_trip({
        "key.converter": "org.apache.kafka.connect.json.JsonConverter",
        "value.converter": value_converter,
    })
    originals = _records()
    assert [r.value for r in records] == [o.value for o in originals]
    assert [r.key for r in records] == [o.key for o in originals]
    assert records[0].value_schema == ORDER
    assert messages[1].value is None  # a null value is a tombstone on the wire
    headers = records[0].headers
    assert [(h.key, h.value) for h in headers] == [
        ("trace", "abc-123"), ("attempt", 2), ("when", dt.date(2024, 5, 1))]


def test_kafka_connect_class_names_select_the_converters():
    converters = build_converters({}, {
        "key.converter": "org.apache.kafka.connect.storage.StringConverter",
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
        "value.converter.schemas.enable": "false",
        "header.converter": "org.apache.kafka.connect.storage.SimpleHeaderConverter",
    })
    assert isinstance(converters.value, JsonConverter)
    assert isinstance(converters.header, SimpleHeaderConverter)
    assert converters.value.from_connect("t", None, {"a": 1}) == b'{"a":1}'


def test_a_connector_can_override_the_worker_converter():
    messages, records = _round_trip(
        {"key.converter": "json", "value.converter": "json"},
        {"value.converter": "avro"},
    )
    assert messages[0].value[:2] == b"\xc3\x01"
    assert records[0].value == order()


def test_json_headers_keep_their_schemas():
    converters = {"header.converter": "json"}
    writer = SourceRecordSerializer(build_converters({}, converters))
    headers = Headers([("price", decimal.Decimal("1.50"), decimal_schema(2))])
    record = SourceRecord(topic="t", value_schema=OPTIONAL_STRING_SCHEMA, value="v",
                          headers=headers)
    message = attrs.evolve(writer.serialize([record])[0], partition=0, offset=0)
    read = MessageDeserializer(build_converters({}, converters)).deserialize([message])[0]
    assert read.headers[0].schema == decimal_schema(2)
    assert read.headers[0].value == decimal.Decimal("1.50")
