"""StringConverter and ByteArrayConverter, as Kafka Connect's."""

from __future__ import annotations

import pytest

from omconnect.converters.bytearray import ByteArrayConverter
from omconnect.converters.string import StringConverter
from omconnect.data import (
    BYTES_SCHEMA,
    INT32_SCHEMA,
    OPTIONAL_BYTES_SCHEMA,
    OPTIONAL_STRING_SCHEMA,
    STRING_SCHEMA,
)
from omconnect.errors import ConfigError, DataError


def _string(**config: object) -> StringConverter:
    converter = StringConverter()
    converter.configure(config, False)
    return converter


def test_string_round_trip_in_utf8_by_default():
    converter = _string()
    assert converter.from_connect("t", STRING_SCHEMA, "héllo ✓") == "héllo ✓".encode()
    result = converter.to_connect("t", "héllo ✓".encode())
    assert result.schema == OPTIONAL_STRING_SCHEMA
    assert result.value == "héllo ✓"


@pytest.mark.parametrize("encoding", ["UTF-16", "ISO-8859-1", "UTF8", "utf_32"])
def test_string_in_a_configured_encoding(encoding):
    converter = _string(**{"converter.encoding": encoding})
    data = converter.from_connect("t", STRING_SCHEMA, "café")
    assert data == "café".encode(encoding.replace("UTF8", "utf-8"))
    assert converter.to_connect("t", data).value == "café"


def test_string_nulls():
    converter = _string()
    assert converter.from_connect("t", OPTIONAL_STRING_SCHEMA, None) is None
    result = converter.to_connect("t", None)
    assert result.schema == OPTIONAL_STRING_SCHEMA and result.value is None


@pytest.mark.parametrize(("value", "text"), [
    (42, "42"), (1.5, "1.5"), (True, "true"), (False, "false"), ([1, 2], "[1, 2]"),
])
def test_a_non_string_is_written_as_its_text(value, text):
    assert _string().from_connect("t", INT32_SCHEMA, value) == text.encode()


def test_bytes_not_valid_in_the_encoding_are_a_data_error():
    with pytest.raises(DataError, match=r"not valid utf-8: invalid start byte at byte 1 "
                                        r"\(b'\\xff'\); set converter\.encoding") as info:
        _string().to_connect("events", b"a\xffb")
    assert info.value.context["topic"] == "events"


def test_text_the_encoding_cannot_hold_is_a_data_error():
    with pytest.raises(DataError, match=r"cannot encode '✓' in iso8859-1"):
        _string(**{"converter.encoding": "ISO-8859-1"}).from_connect("t", None, "ok ✓")


def test_unknown_encoding_is_a_config_error_naming_the_key():
    with pytest.raises(ConfigError, match=r"value\.converter\.converter\.encoding.*unknown "
                                          r"encoding 'klingon'"):
        _string(**{"converter.encoding": "klingon"})


def test_string_converter_is_a_header_converter():
    converter = _string()
    data = converter.from_connect_header("t", "h", None, "v")
    assert converter.to_connect_header("t", "h", data).value == "v"


def test_bytes_pass_through():
    converter = ByteArrayConverter()
    converter.configure({}, False)
    assert converter.from_connect("t", BYTES_SCHEMA, b"\x00\x01") == b"\x00\x01"
    assert converter.from_connect("t", None, bytearray(b"ab")) == b"ab"
    assert converter.from_connect("t", None, memoryview(b"cd")) == b"cd"
    assert converter.from_connect("t", OPTIONAL_BYTES_SCHEMA, None) is None
    result = converter.to_connect("t", b"\x00\x01")
    assert result.schema == OPTIONAL_BYTES_SCHEMA and result.value == b"\x00\x01"
    assert converter.to_connect("t", None).value is None
    assert [r.value for r in converter.to_connect_batch("t", [b"a", None])] == [b"a", None]


def test_a_non_bytes_value_is_refused_naming_its_type():
    with pytest.raises(DataError, match=r"needs bytes, bytearray or memoryview, got str"):
        ByteArrayConverter().from_connect("t", None, "text")


def test_a_non_bytes_schema_is_refused_naming_it():
    with pytest.raises(DataError, match=r"needs a BYTES schema, got string"):
        ByteArrayConverter().from_connect("t", STRING_SCHEMA, b"x")


# -- column forms (what the runtime calls) -------------------------------------------------

def test_bytearray_columns_pass_bytes_through_and_convert_the_rest_as_single_calls():
    converter = ByteArrayConverter()
    values = [b"a", None, b""]
    assert converter.from_connect_columns("t", [BYTES_SCHEMA] * 3, values) == values
    mixed = [b"a", bytearray(b"b"), memoryview(b"c"), None]
    assert converter.from_connect_columns("t", [None] * 4, mixed) == [
        converter.from_connect("t", None, v) for v in mixed]
    schemas, read = converter.to_connect_columns("t", [b"x", None])
    assert list(schemas) == [OPTIONAL_BYTES_SCHEMA] * 2 and list(read) == [b"x", None]


def test_bytearray_columns_refuse_what_from_connect_refuses():
    converter = ByteArrayConverter()
    with pytest.raises(DataError, match="needs bytes"):
        converter.from_connect_columns("t", [None, None], [b"a", "text"])
    with pytest.raises(DataError, match="BYTES schema"):
        converter.from_connect_columns("t", [INT32_SCHEMA], [b"a"])


def test_string_columns_agree_with_the_single_calls():
    converter = _string()
    values = ["héllo", "", None, 12, True]
    schemas = [STRING_SCHEMA, STRING_SCHEMA, None, INT32_SCHEMA, None]
    encoded = converter.from_connect_columns("t", schemas, values)
    pairs = zip(schemas, values, strict=True)
    assert encoded == [converter.from_connect("t", s, v) for s, v in pairs]
    read_schemas, texts = converter.to_connect_columns("t", encoded)
    assert list(read_schemas) == [OPTIONAL_STRING_SCHEMA] * 5
    assert list(texts) == ["héllo", "", None, "12", "true"]


def test_string_columns_name_undecodable_bytes_and_unencodable_text():
    latin = _string(**{"converter.encoding": "ISO-8859-1"})
    with pytest.raises(DataError, match="cannot encode"):
        latin.from_connect_columns("t", [None, None], ["ok", "✓"])
    with pytest.raises(DataError, match="not valid utf-8"):
        _string().to_connect_columns("t", [b"ok", b"\xff"])
