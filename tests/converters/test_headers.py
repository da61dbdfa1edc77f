"""SimpleHeaderConverter: values as text, read back with the type inferred."""

from __future__ import annotations

import datetime as dt
import decimal

import pytest

from omconnect.converters.headers import SimpleHeaderConverter
from omconnect.data import (
    BOOLEAN_SCHEMA,
    FLOAT64_SCHEMA,
    INT8_SCHEMA,
    INT16_SCHEMA,
    INT32_SCHEMA,
    INT64_SCHEMA,
    OPTIONAL_BYTES_SCHEMA,
    STRING_SCHEMA,
    SchemaBuilder,
    Struct,
    date_schema,
    decimal_schema,
    time_schema,
    timestamp_schema,
)
from omconnect.errors import DataError

CONVERTER = SimpleHeaderConverter()


def _round_trip(value):
    data = CONVERTER.from_connect_header("t", "k", None, value)
    return data, CONVERTER.to_connect_header("t", "k", data)


@pytest.mark.parametrize(("value", "text", "schema"), [
    (42, b"42", INT8_SCHEMA),
    (300, b"300", INT16_SCHEMA),
    (70000, b"70000", INT32_SCHEMA),
    (2**40, b"1099511627776", INT64_SCHEMA),
    (2**70, b"1180591620717411303424", decimal_schema(0)),
    (-1.25, b"-1.25", FLOAT64_SCHEMA),
    (True, b"true", BOOLEAN_SCHEMA),
    ("hello world", b"hello world", STRING_SCHEMA),
    ("", b"", STRING_SCHEMA),
    ('"quoted"', b'"quoted"', STRING_SCHEMA),
    ("[not a list", b"[not a list", STRING_SCHEMA),
    (dt.date(2024, 5, 1), b"2024-05-01", date_schema()),
    (dt.time(13, 45, 0, 250000), b"13:45:00.250Z", time_schema()),
    (dt.datetime(2024, 5, 1, 13, 45, 0, 250000, tzinfo=dt.UTC), b"2024-05-01T13:45:00.250Z",
     timestamp_schema()),
    ([1, 2, 3], b"[1,2,3]", SchemaBuilder.array(INT8_SCHEMA).build()),
    ([1, None], b"[1,null]", SchemaBuilder.array(INT8_SCHEMA.with_optional(True)).build()),
    (["a,b", 'c"d'], b'["a,b","c\\"d"]', SchemaBuilder.array(STRING_SCHEMA).build()),
    ({"a": 1, "b": 1000}, b'{"a":1,"b":1000}', SchemaBuilder.map(STRING_SCHEMA,
                                                                INT16_SCHEMA).build()),
    ({1: [True]}, b"{1:[true]}",
     SchemaBuilder.map(INT8_SCHEMA, SchemaBuilder.array(BOOLEAN_SCHEMA).build()).build()),
])
def test_values_are_written_as_text_and_read_back_with_an_inferred_schema(value, text, schema):
    data, result = _round_trip(value)
    assert data == text
    assert result.schema == schema
    assert result.value == value


def test_a_struct_is_written_as_a_map_and_read_back_as_one():
    schema = SchemaBuilder.struct().field("a", INT32_SCHEMA).field("b", STRING_SCHEMA).build()
    data, result = _round_trip(Struct(schema, {"a": 1, "b": "x"}))
    assert data == b'{"a":1,"b":"x"}'
    assert result.value == {"a": 1, "b": "x"}
    assert result.schema is None  # the values share no schema


def test_decimal_reads_back_as_a_number():
    data, result = _round_trip(decimal.Decimal("12.50"))
    assert data == b"12.50"
    assert result.value == 12.5


def test_nulls():
    assert CONVERTER.from_connect_header("t", "k", None, None) is None
    result = CONVERTER.to_connect_header("t", "k", None)
    assert result.schema is None and result.value is None


def test_bytes_that_are_not_utf8_read_as_bytes():
    result = CONVERTER.to_connect_header("t", "trace", b"\xff\x00\xfe")
    assert result.schema == OPTIONAL_BYTES_SCHEMA
    assert result.value == b"\xff\x00\xfe"


def test_a_value_with_no_text_form_is_refused_naming_the_header():
    with pytest.raises(DataError, match=r"header 'k': a object has no text form"):
        CONVERTER.from_connect_header("t", "k", None, object())
