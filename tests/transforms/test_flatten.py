import pytest

from omconnect.data import SchemaBuilder, Struct, Type
from omconnect.errors import DataError
from omconnect.transforms.flatten import FlattenKey, FlattenValue


@pytest.fixture
def nested():
    city = SchemaBuilder.string().build()
    address = (SchemaBuilder.struct().name("Address")
               .field("city", city)
               .field("geo", SchemaBuilder.struct()
                      .field("lat", SchemaBuilder.float64().build())
                      .field("lon", SchemaBuilder.float64().build()).build())
               .optional().build())
    schema = (SchemaBuilder.struct().name("Customer")
              .field("id", SchemaBuilder.int64().build())
              .field("address", address)
              .field("tags", SchemaBuilder.array(SchemaBuilder.string().build()).build())
              .build())
    geo = Struct(address.field("geo").schema, {"lat": 1.5, "lon": 2.5})
    value = Struct(schema, {"id": 1, "address": Struct(address, {"city": "Oslo", "geo": geo}),
                            "tags": ["a"]})
    return schema, value


def test_struct_paths_joined_by_the_delimiter(configured, sink_record, nested):
    schema, value = nested
    out = configured(FlattenValue, {"delimiter": "_"}).apply(sink_record(value, schema))
    flat = out.value_schema
    assert [f.name for f in flat.fields] == [
        "id", "address_city", "address_geo_lat", "address_geo_lon", "tags"]
    assert flat.name == "Customer"
    # below an optional struct every field becomes optional
    assert flat.field("address_city").schema.optional
    assert flat.field("address_geo_lat").schema.optional
    assert not flat.field("id").schema.optional
    assert flat.field("tags").schema.type is Type.ARRAY  # arrays are kept as they are
    assert out.value.to_dict() == {"id": 1, "address_city": "Oslo", "address_geo_lat": 1.5,
                                   "address_geo_lon": 2.5, "tags": ["a"]}
    out.value.validate()


def test_null_nested_struct_gives_nulls(configured, sink_record, nested):
    schema, _ = nested
    value = Struct(schema, {"id": 2, "address": None, "tags": []})
    out = configured(FlattenValue).apply(sink_record(value, schema))
    assert out.value.to_dict() == {"id": 2, "address.city": None, "address.geo.lat": None,
                                   "address.geo.lon": None, "tags": []}


def test_schemaless_nested_maps(configured, sink_record):
    original = {"a": {"b": 1, "c": {"d": [1, 2]}}, "e": None}
    out = configured(FlattenKey).apply(sink_record("v", key=original))
    assert out.key == {"a.b": 1, "a.c.d": [1, 2], "e": None}
    assert original["a"]["b"] == 1


def test_defaults_come_from_the_parent_default(configured, sink_record):
    inner = (SchemaBuilder.struct().field("x", SchemaBuilder.int32().optional().build())
             .build())
    parent_default = Struct(inner, {"x": 5})
    inner_with_default = (SchemaBuilder.struct()
                          .field("x", SchemaBuilder.int32().optional().build())
                          .default_value(parent_default).build())
    schema = SchemaBuilder.struct().field("in", inner_with_default).build()
    value = Struct(schema, {"in": Struct(inner_with_default, {"x": 1})})
    out = configured(FlattenValue).apply(sink_record(value, schema))
    assert out.value_schema.field("in.x").schema.default == 5


def test_name_collision_is_an_error(configured, sink_record):
    inner = SchemaBuilder.struct().field("b", SchemaBuilder.int32().build()).build()
    schema = (SchemaBuilder.struct().field("a", inner)
              .field("a.b", SchemaBuilder.int32().build()).build())
    value = Struct(schema, {"a": Struct(inner, {"b": 1}), "a.b": 2})
    with pytest.raises(DataError, match=r"two fields named 'a\.b'"):
        configured(FlattenValue).apply(sink_record(value, schema))


def test_flat_struct_is_unchanged(configured, sink_record, order, order_schema):
    record = sink_record(order, order_schema)
    assert configured(FlattenValue).apply(record) is record
