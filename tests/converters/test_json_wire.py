"""Wire compatibility with Kafka Connect's JsonConverter.

The expected bytes are written by hand from Kafka Connect's format: the envelope
``{"schema":...,"payload":...}``, compact (Jackson writes no spaces), schema keys in the
order ``JsonConverter.asJsonSchema`` puts them (type, items/keys/values/fields, optional,
name, version, doc, parameters, default; a field's ``field`` last), UTF-8 text.
"""

from __future__ import annotations

import datetime as dt
import decimal
import math

import pytest

from omconnect.converters.json import JsonConverter
from omconnect.data import (
    BOOLEAN_SCHEMA,
    BYTES_SCHEMA,
    FLOAT32_SCHEMA,
    FLOAT64_SCHEMA,
    INT8_SCHEMA,
    INT16_SCHEMA,
    INT32_SCHEMA,
    INT64_SCHEMA,
    OPTIONAL_STRING_SCHEMA,
    STRING_SCHEMA,
    SchemaBuilder,
    Struct,
    date_schema,
    decimal_schema,
    time_schema,
    timestamp_schema,
)


def _converter(**config: object) -> JsonConverter:
    converter = JsonConverter()
    converter.configure(config, False)
    return converter


STRUCT_X = SchemaBuilder.struct().name("x").field("id", INT32_SCHEMA).build()

# What Kafka Connect writes for (schema, value).
WRITTEN = [
    (STRUCT_X, Struct(STRUCT_X, {"id": 1}),
     '{"schema":{"type":"struct","fields":[{"type":"int32","optional":false,"field":"id"}],'
     '"optional":false,"name":"x"},"payload":{"id":1}}'),
    (BOOLEAN_SCHEMA, True, '{"schema":{"type":"boolean","optional":false},"payload":true}'),
    (INT8_SCHEMA, 12, '{"schema":{"type":"int8","optional":false},"payload":12}'),
    (INT16_SCHEMA, 12, '{"schema":{"type":"int16","optional":false},"payload":12}'),
    (INT64_SCHEMA, 4398046511104,
     '{"schema":{"type":"int64","optional":false},"payload":4398046511104}'),
    (FLOAT32_SCHEMA, 12.34, '{"schema":{"type":"float","optional":false},"payload":12.34}'),
    (FLOAT64_SCHEMA, 12.34, '{"schema":{"type":"double","optional":false},"payload":12.34}'),
    (BYTES_SCHEMA, b"test-string",
     '{"schema":{"type":"bytes","optional":false},"payload":"dGVzdC1zdHJpbmc="}'),
    (STRING_SCHEMA, "test-string",
     '{"schema":{"type":"string","optional":false},"payload":"test-string"}'),
    (STRING_SCHEMA, "naïve ✓",
     '{"schema":{"type":"string","optional":false},"payload":"naïve ✓"}'),
    (SchemaBuilder.array(INT32_SCHEMA).build(), [1, 2, 3],
     '{"schema":{"type":"array","items":{"type":"int32","optional":false},"optional":false},'
     '"payload":[1,2,3]}'),
    (SchemaBuilder.map(STRING_SCHEMA, INT32_SCHEMA).build(), {"key1": 12},
     '{"schema":{"type":"map","keys":{"type":"string","optional":false},'
     '"values":{"type":"int32","optional":false},"optional":false},"payload":{"key1":12}}'),
    (SchemaBuilder.map(INT32_SCHEMA, INT32_SCHEMA).build(), {1: 12, 2: 15},
     '{"schema":{"type":"map","keys":{"type":"int32","optional":false},'
     '"values":{"type":"int32","optional":false},"optional":false},"payload":[[1,12],[2,15]]}'),
    (decimal_schema(2), decimal.Decimal("1.56"),
     '{"schema":{"type":"bytes","optional":false,"name":"org.apache.kafka.connect.data.Decimal",'
     '"version":1,"parameters":{"scale":"2"}},"payload":"AJw="}'),
    (date_schema(), dt.date(1997, 5, 19),
     '{"schema":{"type":"int32","optional":false,"name":"org.apache.kafka.connect.data.Date",'
     '"version":1},"payload":10000}'),
    (time_schema(), dt.time(4, 0),
     '{"schema":{"type":"int32","optional":false,"name":"org.apache.kafka.connect.data.Time",'
     '"version":1},"payload":14400000}'),
    (timestamp_schema(), dt.datetime(1970, 2, 16, 7, 6, 40, tzinfo=dt.UTC),
     '{"schema":{"type":"int64","optional":false,'
     '"name":"org.apache.kafka.connect.data.Timestamp","version":1},"payload":4000000000}'),
    (OPTIONAL_STRING_SCHEMA, None,
     '{"schema":{"type":"string","optional":true},"payload":null}'),
    (SchemaBuilder.int32().optional().default_value(12).build(), None,
     '{"schema":{"type":"int32","optional":true,"default":12},"payload":12}'),
]


@pytest.mark.parametrize(("schema", "value", "expected"), WRITTEN,
                         ids=lambda x: None)
def test_writes_exactly_what_kafka_connect_writes(schema, value, expected):
    assert _converter().from_connect("t", schema, value) == expected.encode("utf-8")


@pytest.mark.parametrize(("schema", "value", "text"), WRITTEN,
                         ids=lambda x: None)
def test_reads_what_kafka_connect_writes(schema, value, text):
    result = _converter().to_connect("t", text.encode("utf-8"))
    assert result.schema == schema
    expected = schema.default if value is None else value  # a null was written as the default
    assert result.value == expected


def test_schema_metadata_is_written_in_kafka_connect_order():
    schema = (SchemaBuilder.struct().name("com.example.S").version(3).doc("docs")
              .parameter("k", "v").field("b", BOOLEAN_SCHEMA).build())
    data = _converter().from_connect("t", schema, Struct(schema, {"b": False}))
    assert data == (
        b'{"schema":{"type":"struct","fields":[{"type":"boolean","optional":false,"field":"b"}],'
        b'"optional":false,"name":"com.example.S","version":3,"doc":"docs",'
        b'"parameters":{"k":"v"}},"payload":{"b":false}}'
    )


# Envelopes as Kafka Connect's own tests write them by hand: spaces, "optional" left out
# (meaning required), "field" first.
HAND_WRITTEN = [
    ('{ "schema": { "type": "boolean" }, "payload": true }', BOOLEAN_SCHEMA, True),
    ('{ "schema": { "type": "int8" }, "payload": 12 }', INT8_SCHEMA, 12),
    ('{ "schema": { "type": "int64" }, "payload": 4398046511104 }', INT64_SCHEMA,
     4398046511104),
    ('{ "schema": { "type": "double" }, "payload": 12.34 }', FLOAT64_SCHEMA, 12.34),
    ('{ "schema": { "type": "bytes" }, "payload": "dGVzdC1zdHJpbmc=" }', BYTES_SCHEMA,
     b"test-string"),
    ('{ "schema": { "type": "array", "items": { "type" : "int32" } }, "payload": [1, 2, 3] }',
     SchemaBuilder.array(INT32_SCHEMA).build(), [1, 2, 3]),
    ('{ "schema": { "type": "map", "keys": { "type" : "int32" }, "values": { "type" : "int32" }'
     ' }, "payload": [ [1, 12], [2, 15] ] }',
     SchemaBuilder.map(INT32_SCHEMA, INT32_SCHEMA).build(), {1: 12, 2: 15}),
    ('{ "schema": { "type": "string", "optional": true }, "payload": null }',
     OPTIONAL_STRING_SCHEMA, None),
    ('{ "schema": { "type": "bytes", "name": "org.apache.kafka.connect.data.Decimal", '
     '"version": 1, "parameters": { "scale": "2" } }, "payload": 1.56 }',
     decimal_schema(2), decimal.Decimal("1.56")),
]


@pytest.mark.parametrize(("text", "schema", "value"), HAND_WRITTEN, ids=lambda x: None)
def test_reads_hand_written_envelopes(text, schema, value):
    result = _converter().to_connect("t", text.encode())
    assert result.schema == schema
    assert result.value == value


def test_reads_hand_written_struct_with_field_names_first():
    text = ('{ "schema": { "type": "struct", "fields": [{ "field": "field1", "type": "boolean" },'
            ' { "field": "field2", "type": "string" }] }, '
            '"payload": { "field1": true, "field2": "string" } }')
    result = _converter().to_connect("t", text.encode())
    assert [f.name for f in result.schema.fields] == ["field1", "field2"]
    assert result.value.get("field1") is True
    assert result.value.get("field2") == "string"


def test_numeric_decimal_format_writes_a_json_number():
    converter = _converter(**{"decimal.format": "NUMERIC"})
    data = converter.from_connect("t", decimal_schema(2), decimal.Decimal("1.5"))
    assert data.endswith(b',"payload":1.50}')
    assert converter.to_connect("t", data).value == decimal.Decimal("1.50")


def test_numeric_decimal_keeps_every_digit():
    converter = _converter(**{"decimal.format": "numeric"})
    value = decimal.Decimal("12345678901234567890.0123456789")
    data = converter.from_connect("t", decimal_schema(10), value)
    assert b'"payload":12345678901234567890.0123456789}' in data
    assert converter.to_connect("t", data).value == value
    # A reader configured for BASE64 reads numbers too, as Kafka Connect's does.
    assert _converter().to_connect("t", data).value == value


def test_schemaless_value_is_written_with_a_null_schema():
    # Kafka Connect does not infer a schema: it writes "schema": null.
    converter = _converter()
    data = converter.from_connect("t", None, {"a": [1, 2.5, "x", None, True]})
    assert data == b'{"schema":null,"payload":{"a":[1,2.5,"x",null,true]}}'
    assert converter.to_connect("t", data).value == {"a": [1, 2.5, "x", None, True]}


def test_schemaless_map_with_non_string_keys_is_an_array_of_pairs():
    data = _converter().from_connect("t", None, {1: "a", 2: b"\x00"})
    assert data == b'{"schema":null,"payload":[[1,"a"],[2,"AA=="]]}'


def test_non_finite_floats_are_written_as_strings_like_jackson():
    converter = _converter()
    schema = SchemaBuilder.array(FLOAT64_SCHEMA).build()
    data = converter.from_connect("t", schema, [math.inf, -math.inf, math.nan])
    assert data.endswith(b'"payload":["Infinity","-Infinity","NaN"]}')
    read = converter.to_connect("t", data).value
    assert read[0] == math.inf and read[1] == -math.inf and math.isnan(read[2])


def test_schemas_disabled_writes_plain_json():
    converter = _converter(**{"schemas.enable": "false"})
    assert converter.from_connect("t", STRUCT_X, Struct(STRUCT_X, {"id": 1})) == b'{"id":1}'
    assert converter.from_connect("t", OPTIONAL_STRING_SCHEMA, None) == b"null"
    assert converter.from_connect("t", None, None) is None
    assert converter.to_connect("t", b'{"id": 1}').value == {"id": 1}
    assert converter.to_connect("t", b'{"id": 1}').schema is None


def test_schemas_disabled_reads_an_envelope_as_a_plain_map():
    converter = _converter(**{"schemas.enable": False})
    result = converter.to_connect("t", b'{"schema":{"type":"int32"},"payload":5}')
    assert result.schema is None
    assert result.value == {"schema": {"type": "int32"}, "payload": 5}
