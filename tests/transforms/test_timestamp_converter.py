import datetime as dt

import pytest
from transform_testing import TS, TS_DATETIME

from omconnect.data import Schema, SchemaBuilder, Struct, Type
from omconnect.data.logical import DATE, TIME, TIMESTAMP, timestamp_schema
from omconnect.errors import ConfigError, DataError
from omconnect.transforms.timestamp_converter import (
    TimestampConverterKey,
    TimestampConverterValue,
)

FORMAT = "yyyy-MM-dd'T'HH:mm:ss.SSSX"
TEXT = "2024-03-05T07:08:09.123Z"


@pytest.mark.parametrize(("target", "expected", "schema_name", "schema_type"), [
    ("string", TEXT, None, Type.STRING),
    ("unix", TS, None, Type.INT64),
    ("Timestamp", TS_DATETIME, TIMESTAMP, Type.INT64),
    ("Date", dt.date(2024, 3, 5), DATE, Type.INT32),
    ("Time", dt.time(7, 8, 9, 123000), TIME, Type.INT32),
])
def test_struct_field_from_timestamp_to_each_target(configured, sink_record, target,
                                                    expected, schema_name, schema_type):
    schema = (SchemaBuilder.struct().name("Event")
              .field("id", SchemaBuilder.int32().build())
              .field("at", SchemaBuilder.timestamp().optional().build()).build())
    value = Struct(schema, {"id": 1, "at": TS_DATETIME})
    transform = configured(TimestampConverterValue,
                           {"target.type": target, "field": "at", "format": FORMAT})
    out = transform.apply(sink_record(value, schema))
    field_schema = out.value_schema.field("at").schema
    assert (field_schema.type, field_schema.name, field_schema.optional) == (
        schema_type, schema_name, True)
    assert out.value["at"] == expected
    assert out.value["id"] == 1
    out.value.validate()


@pytest.mark.parametrize(("source", "schema"), [
    (TEXT, Schema(type=Type.STRING)),
    (TS, Schema(type=Type.INT64)),
    (TS_DATETIME, timestamp_schema()),
])
def test_whole_value_to_timestamp_from_each_source(configured, sink_record, source, schema):
    transform = configured(TimestampConverterValue,
                           {"target.type": "Timestamp", "format": FORMAT})
    out = transform.apply(sink_record(source, schema))
    assert out.value == TS_DATETIME
    assert out.value_schema == timestamp_schema()


def test_date_and_time_inputs(configured, sink_record):
    transform = configured(TimestampConverterValue, {"target.type": "unix"})
    assert transform.apply(sink_record(dt.date(1970, 1, 2))).value == 86_400_000
    assert transform.apply(sink_record(dt.time(0, 0, 1))).value == 1000


@pytest.mark.parametrize(("precision", "number"), [
    ("seconds", TS // 1000),
    ("milliseconds", TS),
    ("microseconds", TS * 1000),
    ("nanoseconds", TS * 1_000_000),
])
def test_unix_precision_both_ways(configured, sink_record, precision, number):
    to_unix = configured(TimestampConverterValue,
                         {"target.type": "unix", "unix.precision": precision})
    from_unix = configured(TimestampConverterValue,
                           {"target.type": "string", "format": FORMAT,
                            "unix.precision": precision})
    assert to_unix.apply(sink_record(TS_DATETIME)).value == number
    expected = "2024-03-05T07:08:09.000Z" if precision == "seconds" else TEXT
    assert from_unix.apply(sink_record(number)).value == expected


def test_schemaless_field_with_a_zone_in_the_text(configured, sink_record):
    transform = configured(TimestampConverterValue, {
        "target.type": "unix", "field": "at", "format": "yyyy-MM-dd HH:mm:ssXXX"})
    out = transform.apply(sink_record({"at": "2024-03-05 09:08:09+02:00", "n": 1}))
    assert out.value == {"at": TS - 123, "n": 1}


def test_key_variant(configured, sink_record):
    out = configured(TimestampConverterKey, {"target.type": "Date"}).apply(
        sink_record("v", key=TS))
    assert out.key == dt.date(2024, 3, 5) and out.value == "v"


def test_string_target_needs_a_format():
    with pytest.raises(ConfigError, match="needs a format") as caught:
        TimestampConverterValue().configure({"target.type": "string"})
    assert caught.value.context["key"] == "format"


def test_unsupported_pattern_letter_names_the_option():
    with pytest.raises(ConfigError, match="'w'") as caught:
        TimestampConverterValue().configure({"target.type": "string", "format": "yyyy-ww"})
    assert caught.value.context["key"] == "format"


def test_unparseable_text_is_a_data_error(configured, sink_record):
    transform = configured(TimestampConverterValue,
                           {"target.type": "unix", "format": "yyyy-MM-dd"})
    with pytest.raises(DataError, match="does not match the date format"):
        transform.apply(sink_record("05/03/2024"))


def test_string_input_without_format_is_a_data_error(configured, sink_record):
    transform = configured(TimestampConverterValue, {"target.type": "unix"})
    with pytest.raises(DataError, match="needs the format option"):
        transform.apply(sink_record("2024-03-05"))


def test_wrong_schema_names_the_field(configured, sink_record):
    schema = SchemaBuilder.struct().field("at", SchemaBuilder.float64().build()).build()
    transform = configured(TimestampConverterValue, {"target.type": "unix", "field": "at"})
    with pytest.raises(DataError, match="field 'at' has schema float64"):
        transform.apply(sink_record(Struct(schema, {"at": 1.0}), schema))


def test_target_type_is_validated():
    from omconnect.transforms import TransformChain

    errors = TransformChain.validate({
        "transforms": "ts",
        "transforms.ts.type": "omconnect.transforms.timestamp_converter:TimestampConverterValue",
        "transforms.ts.target.type": "epoch"})
    assert list(errors) == ["transforms.ts.target.type"]
    assert "string, unix, Date, Time, Timestamp" in errors["transforms.ts.target.type"][0]
