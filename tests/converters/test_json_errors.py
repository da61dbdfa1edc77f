"""JsonConverter: bad input and bad configuration give errors that name the problem."""

from __future__ import annotations

import pytest

from omconnect.converters.json import JsonConverter
from omconnect.errors import ConfigError, DataError


def _converter(**config: object) -> JsonConverter:
    converter = JsonConverter()
    converter.configure(config, False)
    return converter


def _read(text: str | bytes, **config: object):
    data = text.encode() if isinstance(text, str) else text
    return _converter(**config).to_connect("orders", data)


@pytest.mark.parametrize(("data", "message"), [
    (b'{"schema": ', r"not valid JSON: Expecting value at line 1 column 12"),
    (b"\xff\xfe{}", r"not valid UTF-8"),
    (b"[1, 2]", r'requires "schema" and "payload"'),
    (b'{"payload": 1}', r'requires "schema" and "payload"'),
    (b'{"schema": null, "payload": 1, "extra": 2}', r"set schemas.enable=false"),
])
def test_not_an_envelope(data, message):
    with pytest.raises(DataError, match=message) as info:
        _read(data)
    assert info.value.context["topic"] == "orders"


def test_invalid_json_with_schemas_disabled():
    with pytest.raises(DataError, match="not valid JSON"):
        _read("{'single': 'quotes'}", **{"schemas.enable": False})


@pytest.mark.parametrize(("schema", "payload", "message"), [
    ('{"type":"int32"}', '"7"', r"expected an integer \(int32\), got the string '7'"),
    ('{"type":"int8"}', "300", r"300 is out of range for int8 \(-128..127\)"),
    ('{"type":"int32"}', "1.5", r"expected an integer \(int32\), got the number 1.5"),
    ('{"type":"boolean"}', "1", r"expected a boolean, got the number 1"),
    ('{"type":"string"}', "12", r"expected a string, got the number 12"),
    ('{"type":"double"}', '"abc"', r"expected a number, got the string 'abc'"),
    ('{"type":"bytes"}', '"not base64!"', r"invalid base64 for a bytes value"),
    ('{"type":"int32"}', "null", r"null value for required int32 field"),
    ('{"type":"array","items":{"type":"int32"}}', "{}", r"expected an array, got an object"),
    ('{"type":"map","keys":{"type":"string"},"values":{"type":"int32"}}', "[]",
     r"expected an object \(map with string keys\), got an array"),
    ('{"type":"map","keys":{"type":"int32"},"values":{"type":"int32"}}', "[[1]]",
     r"expected a \[key, value\] pair, got an array"),
    ('{"type":"struct","fields":[{"type":"int32","field":"id"}]}', '{"id":"x"}',
     r"expected an integer \(int32\) at id, got the string 'x'"),
    ('{"type":"struct","name":"Order","fields":[{"type":"int32","field":"id"}]}', "[]",
     r"expected an object \(Order\), got an array"),
    ('{"type":"struct","fields":[{"type":"struct","field":"a","fields":'
     '[{"type":"string","field":"b"}]}]}', '{"a":{}}',
     r"null value for required string field at a.b"),
    ('{"type":"int32","name":"org.apache.kafka.connect.data.Date"}', '"2024-01-01"',
     r"expected an integer \(Date\), got the string '2024-01-01'"),
    ('{"type":"int32","name":"org.apache.kafka.connect.data.Time"}', "-1",
     r"-1 is not a valid Time"),
    ('{"type":"bytes","name":"org.apache.kafka.connect.data.Decimal",'
     '"parameters":{"scale":"2"}}', "true",
     r"expected a number or base64 string \(Decimal\), got the boolean true"),
])
def test_payload_not_matching_its_schema(schema, payload, message):
    with pytest.raises(DataError, match=message):
        _read(f'{{"schema":{schema},"payload":{payload}}}')


@pytest.mark.parametrize(("schema", "message"), [
    ('{"optional":true}', r"schema must contain a 'type' field"),
    ('{"type":"float32"}', r"unknown schema type 'float32' at schema; expected one of: int8, "),
    ('{"type":"array"}', r"array schema at schema does not specify its element type"),
    ('{"type":"map","keys":{"type":"string"}}', r"map schema at schema does not specify its "
                                                r"values type"),
    ('{"type":"struct"}', r"struct schema at schema needs a 'fields' array"),
    ('{"type":"struct","fields":[{"type":"int32"}]}',
     r"struct field at schema.fields\[0\] has no 'field' name"),
    ('{"type":"struct","fields":[{"type":"nope","field":"a"}]}',
     r"unknown schema type 'nope' at schema.fields\[0\]"),
    ('{"type":"string","parameters":{"a":1}}', r"schema parameters must have string values"),
    ('"int32"', r"schema must be a JSON object, got a string"),
])
def test_invalid_schema(schema, message):
    with pytest.raises(DataError, match=message):
        _read(f'{{"schema":{schema},"payload":null}}')


@pytest.mark.parametrize(("config", "key"), [
    ({"decimal.format": "HEX"}, "value.converter.decimal.format"),
    ({"schemas.enable": "maybe"}, "value.converter.schemas.enable"),
    ({"schemas.cache.size": 0}, "value.converter.schemas.cache.size"),
    ({"schema.content": "{not json"}, "value.converter.schema.content"),
    ({"schema.content": '{"type":"nope"}'}, "value.converter.schema.content"),
])
def test_bad_configuration_names_the_key(config, key):
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        _converter(**config)


def test_key_converter_errors_name_the_key_prefix():
    converter = JsonConverter()
    with pytest.raises(ConfigError, match=r"key\.converter\.decimal\.format"):
        converter.configure({"decimal.format": "HEX"}, True)


def test_header_converter_errors_name_the_header_prefix():
    converter = JsonConverter()
    with pytest.raises(ConfigError, match=r"header\.converter\.decimal\.format"):
        converter.configure({"decimal.format": "HEX"})


def test_decimal_with_more_digits_than_its_scale_is_refused():
    from decimal import Decimal

    from omconnect.data import decimal_schema

    with pytest.raises(DataError, match="more than 2 digits after the point"):
        _converter().from_connect("t", decimal_schema(2), Decimal("1.234"))
