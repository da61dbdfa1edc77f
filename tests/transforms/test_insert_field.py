import datetime as dt

import pytest
from transform_testing import TS, TS_DATETIME

from omconnect.data import Schema, Struct, Type
from omconnect.data.logical import TIMESTAMP
from omconnect.errors import ConfigError, DataError
from omconnect.transforms.insert_field import InsertFieldKey, InsertFieldValue

ALL = {"topic.field": "topic", "partition.field": "partition!", "offset.field": "offset?",
       "timestamp.field": "ts", "static.field": "origin", "static.value": "lab"}


def test_struct_value_gets_every_field_with_a_derived_schema(configured, sink_record,
                                                             order, order_schema):
    record = configured(InsertFieldValue, ALL).apply(sink_record(order, order_schema))
    schema = record.value_schema
    assert [f.name for f in schema.fields] == [
        "id", "customer", "amount", "note", "topic", "partition", "offset", "ts", "origin"]
    assert (schema.name, schema.version) == ("com.example.Order", 2)
    assert schema.field("topic").schema == Schema(type=Type.STRING, optional=True)
    assert schema.field("partition").schema == Schema(type=Type.INT32)  # "!" = required
    assert schema.field("offset").schema == Schema(type=Type.INT64, optional=True)
    assert schema.field("ts").schema.name == TIMESTAMP
    value = record.value
    assert value.schema is schema
    assert value.to_dict() == {"id": 42, "customer": "ada", "amount": 9.5, "note": None,
                               "topic": "orders", "partition": 3, "offset": 17,
                               "ts": TS_DATETIME, "origin": "lab"}
    value.validate()  # the derived struct is complete and valid


def test_schemaless_value_gets_entries_and_the_raw_timestamp(configured, sink_record):
    original = {"id": 1}
    record = configured(InsertFieldValue, ALL).apply(sink_record(original))
    assert record.value_schema is None
    assert record.value == {"id": 1, "topic": "orders", "partition": 3, "offset": 17,
                            "ts": TS, "origin": "lab"}
    assert original == {"id": 1}  # the input is not mutated


def test_key_variant_changes_only_the_key(configured, sink_record, order, order_schema):
    record = sink_record(order, order_schema, key={"k": 1})
    out = configured(InsertFieldKey, {"topic.field": "t"}).apply(record)
    assert out.key == {"k": 1, "t": "orders"}
    assert out.value is order


def test_derived_schema_is_built_once_per_input_schema(configured, sink_record, order,
                                                       order_schema):
    transform = configured(InsertFieldValue, {"topic.field": "topic"})
    first = transform.apply(sink_record(order, order_schema))
    # an equal but distinct schema object still hits the cache (LRU by value)
    twin = Struct(Schema(type=order_schema.type, name=order_schema.name, version=2,
                         fields=order_schema.fields), {"id": 1, "customer": "x"})
    second = transform.apply(sink_record(twin, twin.schema))
    assert second.value_schema is first.value_schema


def test_tombstone_passes_through(configured, sink_record, order_schema):
    record = sink_record(None, order_schema)
    assert configured(InsertFieldValue, ALL).apply(record) is record


def test_offset_on_a_source_record_is_a_clear_error(configured, source_record):
    transform = configured(InsertFieldValue, {"offset.field": "offset"})
    with pytest.raises(DataError, match=r"offset\.field needs sink records"):
        transform.apply(source_record({"a": 1}))


def test_required_field_without_data_is_an_error(configured, source_record, order,
                                                 order_schema):
    transform = configured(InsertFieldValue, {"partition.field": "p!"})
    with pytest.raises(DataError, match=r"partition\.field 'p' is required"):
        transform.apply(source_record(order, order_schema, partition=None))


def test_optional_field_without_data_is_null(configured, source_record, order, order_schema):
    out = configured(InsertFieldValue, {"partition.field": "p"}).apply(
        source_record(order, order_schema, partition=None, timestamp=None))
    assert out.value["p"] is None


def test_name_collision_names_the_field(configured, sink_record, order, order_schema):
    transform = configured(InsertFieldValue, {"topic.field": "customer"})
    with pytest.raises(DataError, match="two fields named 'customer'"):
        transform.apply(sink_record(order, order_schema))


def test_schema_without_struct_value_is_an_error(configured, sink_record):
    transform = configured(InsertFieldValue, {"topic.field": "t"})
    with pytest.raises(DataError, match="needs a Struct"):
        transform.apply(sink_record("text", Schema(type=Type.STRING)))


def test_required_static_field_needs_a_value():
    transform = InsertFieldValue()
    with pytest.raises(ConfigError) as caught:
        transform.configure({"static.field": "origin!"})
    assert caught.value.context["key"] == "static.value"


def test_timestamp_is_a_timestamp_instance(configured, sink_record, order, order_schema):
    out = configured(InsertFieldValue, {"timestamp.field": "ts"}).apply(
        sink_record(order, order_schema))
    assert isinstance(out.value["ts"], dt.datetime) and out.value["ts"].tzinfo is not None
