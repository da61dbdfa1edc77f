import pytest

from omconnect.data import Header, Headers, Schema, Type
from omconnect.errors import ConfigError, DataError
from omconnect.transforms.header_from import HeaderFromKey, HeaderFromValue
from omconnect.transforms.headers import DropHeaders, InsertHeader


@pytest.mark.parametrize(("literal", "type_", "value"), [
    ("true", Type.BOOLEAN, True),
    ("42", Type.INT8, 42),
    ("40000", Type.INT32, 40000),
    ("-2.5", Type.FLOAT64, -2.5),
    ("eu-west", Type.STRING, "eu-west"),
])
def test_insert_header_types_its_literal(configured, sink_record, literal, type_, value):
    record = sink_record("v", headers=[("h", "existing")])
    out = configured(InsertHeader, {"header": "h", "value.literal": literal}).apply(record)
    assert out.headers.keys() == ["h", "h"]  # appended; the existing header stays
    assert out.headers[1] == Header("h", value, Schema(type=type_))


def test_drop_headers_removes_every_occurrence(configured, sink_record):
    record = sink_record("v", headers=[("a", 1), ("b", 2), ("a", 3), ("c", 4)])
    out = configured(DropHeaders, {"headers": "a,c"}).apply(record)
    assert out.headers == Headers([("b", 2)])
    untouched = sink_record("v", headers=[("b", 2)])
    assert configured(DropHeaders, {"headers": "a"}).apply(untouched) is untouched


def test_header_from_move_struct(configured, sink_record, order, order_schema):
    transform = configured(HeaderFromValue, {"fields": "id,customer",
                                             "headers": "order-id,who", "operation": "move"})
    out = transform.apply(sink_record(order, order_schema, headers=[("x", 1)]))
    assert [f.name for f in out.value_schema.fields] == ["amount", "note"]
    assert out.value.to_dict() == {"amount": 9.5, "note": None}
    assert list(out.headers) == [
        Header("x", 1),
        Header("order-id", 42, order_schema.field("id").schema),
        Header("who", "ada", order_schema.field("customer").schema),
    ]


def test_header_from_copy_keeps_the_value(configured, sink_record, order, order_schema):
    record = sink_record(order, order_schema)
    out = configured(HeaderFromValue, {"fields": "id", "headers": "id",
                                       "operation": "copy"}).apply(record)
    assert out.value is order and out.value_schema is order_schema
    assert out.headers.last("id").value == 42


def test_header_from_key_schemaless(configured, sink_record):
    out = configured(HeaderFromKey, {"fields": "tenant,absent", "headers": "t,a",
                                     "operation": "move"}).apply(
        sink_record("v", key={"tenant": "acme", "id": 1}))
    assert out.key == {"id": 1}
    assert list(out.headers) == [Header("t", "acme"), Header("a", None)]


def test_header_from_unknown_struct_field(configured, sink_record, order, order_schema):
    transform = configured(HeaderFromValue, {"fields": "zip", "headers": "z",
                                             "operation": "copy"})
    with pytest.raises(DataError, match="field 'zip' is not in schema"):
        transform.apply(sink_record(order, order_schema))


def test_header_from_lists_must_pair_up():
    with pytest.raises(ConfigError, match="one header key per field") as caught:
        HeaderFromValue().configure({"fields": "a,b", "headers": "x", "operation": "copy"})
    assert caught.value.context["key"] == "headers"


def test_header_from_tombstone_passes_through(configured, sink_record, order_schema):
    record = sink_record(None, order_schema)
    transform = configured(HeaderFromValue, {"fields": "id", "headers": "id",
                                             "operation": "move"})
    assert transform.apply(record) is record
