import datetime as dt
import decimal

import pytest

from omconnect.data import Schema, SchemaBuilder, Struct, Type
from omconnect.errors import ConfigError, DataError
from omconnect.transforms.cast import CastKey, CastValue


@pytest.fixture
def reading():
    schema = (SchemaBuilder.struct().name("Reading")
              .field("id", SchemaBuilder.string().build())
              .field("level", SchemaBuilder.float64().optional().build())
              .field("ok", SchemaBuilder.int32().default_value(1).build())
              .field("raw", SchemaBuilder.bytes().optional().build())
              .field("price", SchemaBuilder.decimal(2).optional().build())
              .field("at", SchemaBuilder.timestamp().optional().build())
              .build())
    value = Struct(schema, {"id": "17", "level": -2.9, "ok": 0, "raw": b"hi",
                            "price": decimal.Decimal("3.14"),
                            "at": dt.datetime(2024, 3, 5, 7, 8, 9, 123000, tzinfo=dt.UTC)})
    return schema, value


def test_struct_fields_and_their_schemas(configured, sink_record, reading):
    schema, value = reading
    transform = configured(CastValue, {
        "spec": "id:int64,level:int8,ok:boolean,raw:string,price:float64,at:string"})
    out = transform.apply(sink_record(value, schema))
    derived = out.value_schema
    assert derived.name == "Reading"
    assert derived.field("id").schema == Schema(type=Type.INT64)
    assert derived.field("level").schema == Schema(type=Type.INT8, optional=True)
    assert derived.field("ok").schema.default is True  # the default is cast too
    assert derived.field("price").schema == Schema(type=Type.FLOAT64, optional=True)
    assert out.value.to_dict() == {"id": 17, "level": -2, "ok": False, "raw": "aGk=",
                                   "price": 3.14, "at": "2024-03-05T07:08:09.123Z"}
    out.value.validate()


def test_null_field_stays_null(configured, sink_record, reading):
    schema, _ = reading
    value = Struct(schema, {"id": "1", "ok": 1})
    out = configured(CastValue, {"spec": "level:string"}).apply(sink_record(value, schema))
    assert out.value["level"] is None


def test_whole_value_with_schema(configured, sink_record):
    out = configured(CastValue, {"spec": "string"}).apply(
        sink_record(True, Schema(type=Type.BOOLEAN, optional=True)))
    assert out.value == "true"
    assert out.value_schema == Schema(type=Type.STRING, optional=True)


def test_whole_key_schemaless(configured, sink_record):
    out = configured(CastKey, {"spec": "int32"}).apply(sink_record("v", key="42"))
    assert out.key == 42 and out.key_schema is None and out.value == "v"


def test_schemaless_fields(configured, sink_record):
    out = configured(CastValue, {"spec": "a:float32,b:int16,c:boolean,absent:int8"}).apply(
        sink_record({"a": "1.5", "b": 7.9, "c": "TRUE", "d": "kept"}))
    assert out.value == {"a": 1.5, "b": 7, "c": True, "d": "kept"}


@pytest.mark.parametrize(("value", "spec", "message"), [
    (300, "int8", "out of range"),
    ("12.5", "int32", "not an integer"),
    ("yes", "boolean", "expected true or false"),
    (float("nan"), "int64", "cannot cast nan"),
    ([1], "string", "cannot cast list"),
])
def test_bad_values_are_data_errors(configured, sink_record, value, spec, message):
    transform = configured(CastValue, {"spec": spec})
    with pytest.raises(DataError, match=message):
        transform.apply(sink_record(value))


def test_field_error_names_the_field(configured, sink_record):
    transform = configured(CastValue, {"spec": "n:int8"})
    with pytest.raises(DataError, match=r"field 'n'.*out of range"):
        transform.apply(sink_record({"n": 1000}))


def test_unsupported_source_types_are_refused(configured, sink_record, reading):
    schema, value = reading
    with pytest.raises(DataError, match="'raw' is bytes, which can only be cast to string"):
        configured(CastValue, {"spec": "raw:int32"}).apply(sink_record(value, schema))
    nested = SchemaBuilder.struct().field("s", schema).build()
    with pytest.raises(DataError, match="only primitive values"):
        configured(CastValue, {"spec": "s:string"}).apply(
            sink_record(Struct(nested, {"s": value}), nested))


@pytest.mark.parametrize(("spec", "fragment"), [
    ("a:int8,string", "has no field name"),
    ("a:uuid", "cannot cast to 'uuid'"),
    (":int8", "has no field name"),
])
def test_bad_spec_names_the_option(spec, fragment):
    with pytest.raises(ConfigError, match=fragment) as caught:
        CastValue().configure({"spec": spec})
    assert caught.value.context["key"] == "spec"
