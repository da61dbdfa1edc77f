import datetime as dt
import decimal

import pytest

from omconnect.data import SchemaBuilder, Struct
from omconnect.errors import DataError
from omconnect.transforms.mask_field import MaskFieldKey, MaskFieldValue


@pytest.fixture
def wide():
    schema = (SchemaBuilder.struct()
              .field("i8", SchemaBuilder.int8().build())
              .field("i64", SchemaBuilder.int64().build())
              .field("f", SchemaBuilder.float32().build())
              .field("b", SchemaBuilder.boolean().build())
              .field("s", SchemaBuilder.string().build())
              .field("raw", SchemaBuilder.bytes().build())
              .field("list", SchemaBuilder.array(SchemaBuilder.int32().build()).build())
              .field("dec", SchemaBuilder.decimal(2).build())
              .field("day", SchemaBuilder.date().build())
              .field("at", SchemaBuilder.timestamp().build())
              .field("opt", SchemaBuilder.string().optional().build())
              .build())
    value = Struct(schema, {
        "i8": 5, "i64": 123, "f": 1.5, "b": True, "s": "secret", "raw": b"\x01",
        "list": [1, 2], "dec": decimal.Decimal("12.34"), "day": dt.date(2024, 1, 2),
        "at": dt.datetime(2024, 1, 2, tzinfo=dt.UTC), "opt": None,
    })
    return schema, value


def test_struct_fields_become_their_types_empty_value(configured, sink_record, wide):
    schema, value = wide
    names = ",".join(f.name for f in schema.fields)
    out = configured(MaskFieldValue, {"fields": names}).apply(sink_record(value, schema))
    assert out.value_schema is schema  # masking never changes the schema
    assert out.value.to_dict() == {
        "i8": 0, "i64": 0, "f": 0.0, "b": False, "s": "", "raw": b"", "list": [],
        "dec": decimal.Decimal(0), "day": dt.date(1970, 1, 1),
        "at": dt.datetime(1970, 1, 1, tzinfo=dt.UTC), "opt": None,
    }
    out.value.validate()


def test_replacement_is_parsed_per_field_type(configured, sink_record, wide):
    schema, value = wide
    out = configured(MaskFieldValue, {"fields": "i8,i64,f,s,dec", "replacement": "7"}).apply(
        sink_record(value, schema))
    got = out.value
    assert (got["i8"], got["i64"], got["f"], got["s"], got["dec"]) == (
        7, 7, 7.0, "7", decimal.Decimal(7))
    assert got["b"] is True  # not listed, not masked


def test_replacement_out_of_range_names_the_field(configured, sink_record, wide):
    schema, value = wide
    transform = configured(MaskFieldValue, {"fields": "i8", "replacement": "1000"})
    with pytest.raises(DataError, match=r"'i8'.*out of range"):
        transform.apply(sink_record(value, schema))


def test_replacement_for_a_boolean_is_refused(configured, sink_record, wide):
    schema, value = wide
    transform = configured(MaskFieldValue, {"fields": "b", "replacement": "x"})
    with pytest.raises(DataError, match="'b' is of type boolean"):
        transform.apply(sink_record(value, schema))


def test_schemaless_masks_by_python_type(configured, sink_record):
    original = {"n": 5, "s": "x", "flag": True, "keep": "me", "none": None, "m": {"a": 1}}
    out = configured(MaskFieldValue, {"fields": "n,s,flag,none,m,absent"}).apply(
        sink_record(original))
    assert out.value == {"n": 0, "s": "", "flag": False, "keep": "me", "none": None, "m": {}}
    assert original["s"] == "x"


def test_key_variant(configured, sink_record):
    out = configured(MaskFieldKey, {"fields": "ssn", "replacement": "***"}).apply(
        sink_record({"v": 1}, key={"ssn": "123"}))
    assert out.key == {"ssn": "***"} and out.value == {"v": 1}


def test_fields_are_required():
    from omconnect.transforms import TransformChain

    errors = TransformChain.validate({
        "transforms": "m",
        "transforms.m.type": "omconnect.transforms.mask_field:MaskFieldValue"})
    assert list(errors) == ["transforms.m.fields"]


def test_decimal_replacement_takes_the_field_scale(configured, sink_record, wide):
    schema, value = wide
    out = configured(MaskFieldValue, {"fields": "dec", "replacement": "1.5"}).apply(
        sink_record(value, schema))
    assert str(out.value["dec"]) == "1.50"
    too_precise = configured(MaskFieldValue, {"fields": "dec", "replacement": "1.555"})
    with pytest.raises(DataError, match="more than the field's 2 decimal places"):
        too_precise.apply(sink_record(value, schema))
