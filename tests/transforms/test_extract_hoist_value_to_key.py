import pytest

from omconnect.data import Schema, SchemaBuilder, Struct, Type
from omconnect.errors import DataError
from omconnect.transforms.extract_field import ExtractFieldKey, ExtractFieldValue
from omconnect.transforms.hoist_field import HoistFieldKey, HoistFieldValue
from omconnect.transforms.value_to_key import ValueToKey


def test_extract_struct_field_takes_its_schema(configured, sink_record, order, order_schema):
    out = configured(ExtractFieldValue, {"field": "customer"}).apply(
        sink_record(order, order_schema))
    assert out.value == "ada"
    assert out.value_schema == order_schema.field("customer").schema


def test_extract_from_a_null_keeps_the_field_schema(configured, sink_record, order_schema):
    out = configured(ExtractFieldValue, {"field": "amount"}).apply(
        sink_record(None, order_schema))
    assert out.value is None and out.value_schema == order_schema.field("amount").schema


def test_extract_schemaless_and_absent(configured, sink_record):
    transform = configured(ExtractFieldKey, {"field": "id"})
    assert transform.apply(sink_record("v", key={"id": 7})).key == 7
    assert transform.apply(sink_record("v", key={"other": 7})).key is None


def test_extract_unknown_struct_field_lists_the_fields(configured, sink_record, order,
                                                      order_schema):
    transform = configured(ExtractFieldValue, {"field": "nope"})
    with pytest.raises(DataError, match="fields: id, customer, amount, note"):
        transform.apply(sink_record(order, order_schema))


def test_hoist_struct_wraps_in_a_single_field_schema(configured, sink_record, order,
                                                     order_schema):
    out = configured(HoistFieldValue, {"field": "order"}).apply(
        sink_record(order, order_schema))
    assert [f.name for f in out.value_schema.fields] == ["order"]
    assert out.value_schema.field("order").schema == order_schema
    assert out.value["order"] is order
    out.value.validate()


def test_hoist_primitive_key_and_schemaless(configured, sink_record):
    out = configured(HoistFieldKey, {"field": "id"}).apply(
        sink_record("v", key=5, key_schema=Schema(type=Type.INT32)))
    assert out.key.to_dict() == {"id": 5}
    out = configured(HoistFieldValue, {"field": "line"}).apply(sink_record("text"))
    assert out.value == {"line": "text"} and out.value_schema is None


def test_hoist_null_into_required_schema_is_an_error(configured, sink_record):
    transform = configured(HoistFieldValue, {"field": "x"})
    with pytest.raises(DataError):
        transform.apply(sink_record(None, Schema(type=Type.STRING)))
    out = transform.apply(sink_record(None, Schema(type=Type.STRING, optional=True)))
    assert out.value["x"] is None


def test_value_to_key_struct(configured, sink_record, order, order_schema):
    out = configured(ValueToKey, {"fields": "customer,id"}).apply(
        sink_record(order, order_schema, key="old"))
    assert [f.name for f in out.key_schema.fields] == ["customer", "id"]
    assert out.key.to_dict() == {"customer": "ada", "id": 42}
    assert out.key_schema.field("id").schema == order_schema.field("id").schema
    assert out.value is order


def test_value_to_key_schemaless(configured, sink_record):
    out = configured(ValueToKey, {"fields": ["a", "missing"]}).apply(
        sink_record({"a": 1, "b": 2}))
    assert out.key == {"a": 1, "missing": None} and out.key_schema is None


def test_value_to_key_missing_struct_field(configured, sink_record, order, order_schema):
    with pytest.raises(DataError, match="ValueToKey: field 'zip' is not in schema"):
        configured(ValueToKey, {"fields": "zip"}).apply(sink_record(order, order_schema))


def test_value_to_key_on_a_tombstone_says_so(configured, sink_record, order_schema):
    with pytest.raises(DataError, match="tombstone"):
        configured(ValueToKey, {"fields": "id"}).apply(sink_record(None, order_schema))


def test_value_to_key_cache_follows_schema_changes(configured, sink_record):
    transform = configured(ValueToKey, {"fields": "id"})
    v1 = SchemaBuilder.struct().field("id", SchemaBuilder.int32().build()).build()
    v2 = SchemaBuilder.struct().field("x", SchemaBuilder.string().build()).field(
        "id", SchemaBuilder.string().build()).build()
    first = transform.apply(sink_record(Struct(v1, {"id": 1}), v1))
    second = transform.apply(sink_record(Struct(v2, {"x": "a", "id": "b"}), v2))
    assert first.key_schema.field("id").schema.type is Type.INT32
    assert second.key_schema.field("id").schema.type is Type.STRING
    assert second.key["id"] == "b"
