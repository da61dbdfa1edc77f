"""The data model: schema types, SchemaBuilder, Struct, logical types, Headers, projection."""

from __future__ import annotations

import datetime as dt
import decimal
from typing import Any

import attrs
import pytest

from omconnect.data import (
    BOOLEAN_SCHEMA,
    BYTES_SCHEMA,
    FLOAT32_SCHEMA,
    FLOAT64_SCHEMA,
    INT8_SCHEMA,
    INT16_SCHEMA,
    INT32_SCHEMA,
    INT64_SCHEMA,
    OPTIONAL_INT32_SCHEMA,
    OPTIONAL_STRING_SCHEMA,
    STRING_SCHEMA,
    Header,
    Headers,
    Schema,
    SchemaAndValue,
    SchemaBuilder,
    Struct,
    Type,
    date_schema,
    decimal_schema,
    project,
    time_schema,
    timestamp_schema,
)
from omconnect.data.logical import from_logical, to_logical
from omconnect.errors import DataError, SchemaProjectionError

D = decimal.Decimal
UTC = dt.UTC

# -- primitive types ---------------------------------------------------------------------

INTEGER_RANGES = [
    (INT8_SCHEMA, -(2**7), 2**7 - 1),
    (INT16_SCHEMA, -(2**15), 2**15 - 1),
    (INT32_SCHEMA, -(2**31), 2**31 - 1),
    (INT64_SCHEMA, -(2**63), 2**63 - 1),
]


@pytest.mark.parametrize(("schema", "low", "high"), INTEGER_RANGES,
                         ids=lambda v: str(v) if isinstance(v, Schema) else "")
def test_integers_accept_their_whole_range(schema: Schema, low: int, high: int) -> None:
    for value in (low, -1, 0, 1, high):
        schema.validate_value(value)


@pytest.mark.parametrize(("schema", "low", "high"), INTEGER_RANGES,
                         ids=lambda v: str(v) if isinstance(v, Schema) else "")
def test_integers_reject_values_out_of_range(schema: Schema, low: int, high: int) -> None:
    name = schema.type.value
    with pytest.raises(DataError, match=rf"^{high + 1} is out of range for {name} "
                                        rf"\({low}\.\.{high}\) at count$"):
        schema.validate_value(high + 1, path="count")
    with pytest.raises(DataError, match=rf"^{low - 1} is out of range for {name}"):
        schema.validate_value(low - 1)


@pytest.mark.parametrize("schema", [INT8_SCHEMA, INT16_SCHEMA, INT32_SCHEMA, INT64_SCHEMA])
@pytest.mark.parametrize("value", [True, 1.0, "1", None])
def test_integers_reject_bools_floats_strings_and_null(schema: Schema, value: Any) -> None:
    with pytest.raises(DataError):
        schema.validate_value(value)


def test_a_bool_is_not_an_int() -> None:
    with pytest.raises(DataError, match="int32 schema needs an int, got bool at flag"):
        INT32_SCHEMA.validate_value(True, path="flag")


@pytest.mark.parametrize("schema", [FLOAT32_SCHEMA, FLOAT64_SCHEMA])
def test_floats_accept_floats_and_ints_but_not_bools_or_strings(schema: Schema) -> None:
    schema.validate_value(1.5)
    schema.validate_value(-3)
    schema.validate_value(float("inf"))
    with pytest.raises(DataError, match=f"{schema.type.value} schema needs float or int, "
                                        "got bool"):
        schema.validate_value(False)
    with pytest.raises(DataError, match="got str"):
        schema.validate_value("1.5")


def test_boolean_accepts_only_bools() -> None:
    BOOLEAN_SCHEMA.validate_value(True)
    with pytest.raises(DataError, match="boolean schema needs bool, got int"):
        BOOLEAN_SCHEMA.validate_value(1)


def test_string_accepts_only_str() -> None:
    STRING_SCHEMA.validate_value("")
    with pytest.raises(DataError, match="string schema needs str, got bytes"):
        STRING_SCHEMA.validate_value(b"x")


def test_bytes_accepts_bytes_bytearray_memoryview_not_str() -> None:
    for value in (b"", bytearray(b"ab"), memoryview(b"cd")):
        BYTES_SCHEMA.validate_value(value)
    with pytest.raises(DataError, match="bytes schema needs bytes or bytearray or memoryview"):
        BYTES_SCHEMA.validate_value("text")


def test_required_schemas_reject_null_optional_ones_accept_it() -> None:
    with pytest.raises(DataError, match="missing value for required string schema at name"):
        STRING_SCHEMA.validate_value(None, path="name")
    OPTIONAL_STRING_SCHEMA.validate_value(None)


def test_a_required_schema_with_a_default_accepts_null() -> None:
    schema = SchemaBuilder.int32().default_value(7).build()
    schema.validate_value(None)


def test_arrays_validate_each_element_and_name_its_index() -> None:
    schema = SchemaBuilder.array(INT8_SCHEMA).build()
    schema.validate_value([1, 2, 3])
    schema.validate_value(())
    with pytest.raises(DataError, match=r"300 is out of range for int8 \(-128\.\.127\) "
                                        r"at scores\[2\]"):
        schema.validate_value([1, 2, 300], path="scores")
    with pytest.raises(DataError, match="array schema needs list or tuple, got set"):
        schema.validate_value({1, 2})


def test_maps_validate_keys_and_values() -> None:
    schema = SchemaBuilder.map(STRING_SCHEMA, INT64_SCHEMA).build()
    schema.validate_value({"a": 1})
    with pytest.raises(DataError, match=r"string schema needs str, got int at counts\{key 1\}"):
        schema.validate_value({1: 1}, path="counts")
    with pytest.raises(DataError, match=r"int64 schema needs an int, got str at counts\['a'\]"):
        schema.validate_value({"a": "1"}, path="counts")
    with pytest.raises(DataError, match="map schema needs Mapping, got list"):
        schema.validate_value([("a", 1)])


def test_nested_containers_validate_all_the_way_down() -> None:
    schema = SchemaBuilder.map(
        STRING_SCHEMA, SchemaBuilder.array(OPTIONAL_INT32_SCHEMA).build()).build()
    schema.validate_value({"a": [1, None, 3]})
    with pytest.raises(DataError, match=r"at m\['b'\]\[1\]"):
        schema.validate_value({"a": [], "b": [1, "2"]}, path="m")


def test_array_and_map_schemas_need_their_element_schemas() -> None:
    with pytest.raises(DataError, match="ARRAY schema needs a value"):
        Schema(type=Type.ARRAY)
    with pytest.raises(DataError, match="MAP schema needs a key schema and a value schema"):
        Schema(type=Type.MAP, value_schema=INT32_SCHEMA)


def test_type_parse_is_case_insensitive_and_lists_the_valid_names() -> None:
    assert Type.parse("INT16") is Type.INT16
    with pytest.raises(DataError, match="unknown schema type 'integer'; expected one of: "
                                        "int8, int16, int32, int64, float32"):
        Type.parse("integer")


def test_type_properties() -> None:
    assert Type.INT8.is_integer and Type.INT8.is_primitive
    assert not Type.FLOAT32.is_integer
    assert not Type.STRUCT.is_primitive and not Type.ARRAY.is_primitive


# -- SchemaBuilder -----------------------------------------------------------------------


def _address() -> Schema:
    return (SchemaBuilder.struct().name("com.example.Address")
            .field("street", STRING_SCHEMA)
            .field("zip", SchemaBuilder.string().optional())
            .build())


def _order() -> Schema:
    return (SchemaBuilder.struct().name("com.example.Order").version(2).doc("An order.")
            .parameter("source", "shop")
            .field("id", INT64_SCHEMA)
            .field("qty", SchemaBuilder.int32().default_value(1).build())
            .field("note", OPTIONAL_STRING_SCHEMA)
            .field("address", _address())
            .field("tags", SchemaBuilder.array(STRING_SCHEMA).optional().build())
            .build())


def test_builder_is_fluent_and_builds_everything_it_was_told() -> None:
    order = _order()
    assert order.type is Type.STRUCT
    assert (order.name, order.version, order.doc) == ("com.example.Order", 2, "An order.")
    assert order.parameters == {"source": "shop"}
    assert [f.name for f in order.fields] == ["id", "qty", "note", "address", "tags"]
    assert [f.index for f in order.fields] == [0, 1, 2, 3, 4]
    assert order.field("qty").schema.default == 1
    assert order.field("address").schema.field("zip").schema.optional
    assert not order.optional


def test_builder_type_accepts_a_name() -> None:
    assert SchemaBuilder.type("float64").optional().build() == Schema(
        type=Type.FLOAT64, optional=True)


def test_builder_refuses_duplicate_fields() -> None:
    builder = SchemaBuilder.struct().field("id", INT64_SCHEMA)
    with pytest.raises(DataError, match="duplicate field 'id'"):
        builder.field("id", STRING_SCHEMA)


def test_builder_refuses_fields_on_non_structs() -> None:
    with pytest.raises(DataError, match="cannot add field 'x' to a int32 schema"):
        SchemaBuilder.int32().field("x", INT32_SCHEMA)


def test_builder_validates_the_default() -> None:
    with pytest.raises(DataError, match=r"300 is out of range for int8 .* at default"):
        SchemaBuilder.int8().default_value(300).build()
    with pytest.raises(DataError, match="string schema needs str, got int at default"):
        SchemaBuilder.string().default_value(5).build()


def test_builder_keeps_falsy_defaults() -> None:
    assert SchemaBuilder.int32().default_value(0).build().default == 0
    assert SchemaBuilder.boolean().default_value(False).build().default is False
    assert SchemaBuilder.string().default_value("").build().default == ""


@pytest.mark.parametrize(
    ("setter", "first", "second"),
    [("name", "a.B", "a.C"), ("version", 1, 2), ("doc", "one", "two"),
     ("default_value", 1, 2)],
)
def test_builder_setters_are_set_once(setter: str, first: Any, second: Any) -> None:
    builder = getattr(SchemaBuilder.int32(), setter)(first)
    getattr(builder, setter)(first)  # the same value again is fine
    with pytest.raises(DataError, match=f"already set to {first!r}; cannot set {second!r}"):
        getattr(builder, setter)(second)


def test_builders_of_logical_types_equal_the_helpers() -> None:
    assert SchemaBuilder.decimal(2).build() == decimal_schema(2)
    assert SchemaBuilder.date().build() == date_schema()
    assert SchemaBuilder.time().build() == time_schema()
    assert SchemaBuilder.timestamp().build() == timestamp_schema()
    assert SchemaBuilder.date().optional().build() == date_schema(optional=True)


# -- Schema equality and immutability --------------------------------------------------


def test_schemas_compare_and_hash_by_value() -> None:
    assert _order() == _order()
    assert hash(_order()) == hash(_order())
    assert len({_order(), _order(), _address()}) == 2
    assert {_order(): "x"}[_order()] == "x"


@pytest.mark.parametrize(
    "change",
    [lambda b: b.name("other.Name"), lambda b: b.version(9), lambda b: b.optional(),
     lambda b: b.parameter("k", "v"), lambda b: b.field("extra", INT8_SCHEMA)],
)
def test_any_difference_but_doc_makes_schemas_unequal(change: Any) -> None:
    def base() -> SchemaBuilder:
        return SchemaBuilder.struct().field("a", INT32_SCHEMA)
    assert change(base()).build() != base().build()
    assert base().doc("documentation only").build() == base().build()


def test_field_defaults_count_for_equality() -> None:
    assert SchemaBuilder.int32().default_value(1).build() != SchemaBuilder.int32().build()


def test_parameters_compare_regardless_of_order_and_cannot_be_mutated() -> None:
    a = SchemaBuilder.string().parameters({"x": "1", "y": "2"}).build()
    b = SchemaBuilder.string().parameter("y", "2").parameter("x", "1").build()
    assert a == b and hash(a) == hash(b)
    a.parameters["x"] = "changed"
    assert a.parameters == {"x": "1", "y": "2"}


def test_schemas_are_frozen() -> None:
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        INT32_SCHEMA.optional = True  # type: ignore[misc]
    assert INT32_SCHEMA.with_optional() == OPTIONAL_INT32_SCHEMA
    assert not INT32_SCHEMA.optional


def test_field_lookup_names_the_known_fields() -> None:
    with pytest.raises(DataError, match=r"schema com.example.Address has no field 'city'; "
                                        "fields: street, zip"):
        _address().field("city")
    with pytest.raises(DataError, match="cannot look up field 'x' in a non-struct schema"):
        INT32_SCHEMA.field("x")
    assert _address().has_field("zip") and not _address().has_field("city")


def test_str_describes_the_schema() -> None:
    assert str(_address()) == ("struct name=com.example.Address {street: string, "
                               "zip: string optional}")
    assert str(SchemaBuilder.map(STRING_SCHEMA, INT8_SCHEMA).build()) == "map <string, int8>"


# -- Struct ------------------------------------------------------------------------------


def _an_order(**overrides: Any) -> Struct:
    values = {"id": 1, "address": Struct(_address(), {"street": "Main St"}), **overrides}
    return Struct(_order(), values)


def test_struct_validates_values_on_construction() -> None:
    with pytest.raises(DataError, match="int64 schema needs an int, got str at id"):
        Struct(_order(), {"id": "1"})


def test_struct_validates_each_put_and_chains() -> None:
    order = _an_order()
    assert order.put("qty", 5).put("note", "fragile") is order
    assert order["qty"] == 5
    with pytest.raises(DataError, match=r"at qty"):
        order.put("qty", 2**40)
    assert order["qty"] == 5  # a rejected put changes nothing


def test_struct_refuses_unknown_fields_naming_the_known_ones() -> None:
    with pytest.raises(DataError, match="has no field 'colour'; fields: id, qty, note"):
        _an_order().put("colour", "red")


def test_struct_refuses_a_nested_struct_of_another_schema() -> None:
    wrong = Struct(SchemaBuilder.struct().field("street", STRING_SCHEMA).build(),
                   {"street": "x"})
    with pytest.raises(DataError, match=r"Struct has schema .* expected .* at address"):
        _an_order().put("address", wrong)
    with pytest.raises(DataError, match="struct schema needs a Struct, got dict at address"):
        _an_order().put("address", {"street": "x"})


def test_struct_needs_a_struct_schema() -> None:
    with pytest.raises(DataError, match="a Struct needs a STRUCT schema"):
        Struct(INT32_SCHEMA)


def test_unset_fields_read_as_their_default() -> None:
    order = _an_order()
    assert order.get("qty") == 1
    assert order.get("note") is None


def test_validate_names_the_missing_required_field() -> None:
    order = Struct(_order(), {"address": Struct(_address(), {"street": "x"})})
    with pytest.raises(DataError, match=r"required field 'id' of com.example.Order has no value"):
        order.validate()


def test_validate_passes_when_required_fields_are_set_or_defaulted() -> None:
    _an_order().validate()


def test_validate_checks_nested_structs() -> None:
    order = _an_order(address=Struct(_address()))
    with pytest.raises(DataError, match=r"required field 'street' of com.example.Address"):
        order.validate()


def test_validate_checks_structs_inside_arrays_and_maps() -> None:
    line = SchemaBuilder.struct().name("Line").field("sku", STRING_SCHEMA).build()
    schema = (SchemaBuilder.struct().name("Cart")
              .field("lines", SchemaBuilder.array(line).build())
              .field("by_sku", SchemaBuilder.map(STRING_SCHEMA, line).build())
              .build())
    Struct(schema, {"lines": [Struct(line, {"sku": "a"})], "by_sku": {}}).validate()
    with pytest.raises(DataError, match="required field 'sku' of Line"):
        Struct(schema, {"lines": [Struct(line)], "by_sku": {}}).validate()
    with pytest.raises(DataError, match="required field 'sku' of Line"):
        Struct(schema, {"lines": [], "by_sku": {"a": Struct(line)}}).validate()


def test_structs_compare_by_schema_and_values() -> None:
    assert _an_order() == _an_order()
    assert hash(_an_order()) == hash(_an_order())
    assert _an_order(qty=2) != _an_order()
    assert _an_order(qty=1) == _an_order()  # explicitly set to the default


def test_struct_to_dict_and_items_follow_schema_order() -> None:
    order = _an_order(note="n")
    assert [name for name, _ in order.items()] == ["id", "qty", "note", "address", "tags"]
    assert order.to_dict() == {"id": 1, "qty": 1, "note": "n",
                               "address": {"street": "Main St", "zip": None}, "tags": None}


# -- SchemaAndValue ------------------------------------------------------------------------


def test_schema_and_value_is_a_frozen_pair() -> None:
    pair = SchemaAndValue(INT32_SCHEMA, 5)
    assert pair == SchemaAndValue(INT32_SCHEMA, 5)
    assert pair != SchemaAndValue(INT64_SCHEMA, 5)
    assert SchemaAndValue(None, None).value is None
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        pair.value = 6  # type: ignore[misc]


# -- logical types ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("scale", "value"),
    [(2, D("12.34")), (2, D("-12.34")), (2, D("0.00")), (0, D("-1")), (2, D("-0.01")),
     (5, D("123456789012345678901234567890.12345")), (3, D("-99999999.999")),
     (-2, D("1.2E+3")), (2, D("1.5"))],
)
def test_decimal_round_trips(scale: int, value: decimal.Decimal) -> None:
    schema = decimal_schema(scale)
    encoded = from_logical(schema, value)
    assert isinstance(encoded, bytes)
    decoded = to_logical(schema, encoded)
    assert decoded == value
    assert decoded.as_tuple().exponent == -scale


@pytest.mark.parametrize(
    ("value", "encoded"),
    [(D("1.00"), b"\x64"), (D("1.27"), b"\x7f"), (D("1.28"), b"\x00\x80"),
     (D("-1.28"), b"\x80"), (D("-1.29"), b"\xff\x7f"), (D("0.00"), b"\x00"),
     (D("-0.01"), b"\xff")],
)
def test_decimal_encodes_like_kafka_connect(value: decimal.Decimal, encoded: bytes) -> None:
    # Java's BigInteger.toByteArray(): minimal big-endian two's complement.
    assert from_logical(decimal_schema(2), value) == encoded


def test_decimal_refuses_to_round() -> None:
    with pytest.raises(DataError, match=r"1.235 has more than 2 digits after the point"):
        from_logical(decimal_schema(2), D("1.235"))


@pytest.mark.parametrize("value", [D("NaN"), D("Infinity"), D("-Infinity")])
def test_decimal_refuses_non_finite_values(value: decimal.Decimal) -> None:
    with pytest.raises(DataError, match="finite"):
        from_logical(decimal_schema(2), value)


def test_decimal_needs_a_decimal_and_a_scale() -> None:
    with pytest.raises(DataError, match=r"needs a decimal.Decimal, got float"):
        from_logical(decimal_schema(2), 1.5)
    no_scale = SchemaBuilder.bytes().name("org.apache.kafka.connect.data.Decimal").build()
    with pytest.raises(DataError, match="has no integer 'scale' parameter"):
        from_logical(no_scale, D("1"))


@pytest.mark.parametrize(
    ("day", "days"),
    [(dt.date(1970, 1, 1), 0), (dt.date(1970, 1, 2), 1), (dt.date(1969, 12, 31), -1),
     (dt.date(1900, 1, 1), -25567), (dt.date(1, 1, 1), -719162), (dt.date(2038, 1, 19), 24855)],
)
def test_date_is_days_since_the_epoch_both_sides_of_1970(day: dt.date, days: int) -> None:
    assert from_logical(date_schema(), day) == days
    assert to_logical(date_schema(), days) == day


def test_date_refuses_a_datetime() -> None:
    with pytest.raises(DataError, match=r"Date schema needs a datetime.date, got datetime"):
        from_logical(date_schema(), dt.datetime(2024, 1, 1))
    with pytest.raises(DataError, match="logical type Date needs a date, got datetime"):
        date_schema().validate_value(dt.datetime(2024, 1, 1))


@pytest.mark.parametrize(
    ("time", "ms"),
    [(dt.time(0, 0), 0), (dt.time(0, 0, 0, 1000), 1), (dt.time(12, 30, 15, 250_000), 45_015_250),
     (dt.time(23, 59, 59, 999_000), 86_399_999)],
)
def test_time_is_milliseconds_since_midnight(time: dt.time, ms: int) -> None:
    assert from_logical(time_schema(), time) == ms
    assert to_logical(time_schema(), ms) == time


def test_time_drops_sub_millisecond_precision() -> None:
    assert to_logical(time_schema(), from_logical(time_schema(), dt.time(0, 0, 0, 1999))) == (
        dt.time(0, 0, 0, 1000))


@pytest.mark.parametrize("ms", [-1, 86_400_000])
def test_time_refuses_values_outside_a_day(ms: int) -> None:
    with pytest.raises(DataError, match=r"outside 0..86399999"):
        to_logical(time_schema(), ms)


@pytest.mark.parametrize(
    ("instant", "ms"),
    [(dt.datetime(1970, 1, 1, tzinfo=UTC), 0),
     (dt.datetime(2024, 2, 29, 12, 0, 0, 123_000, tzinfo=UTC), 1_709_208_000_123),
     (dt.datetime(1969, 12, 31, 23, 59, 59, 999_000, tzinfo=UTC), -1),
     (dt.datetime(1901, 12, 13, 20, 45, 52, tzinfo=UTC), -2_147_483_648_000)],
)
def test_timestamp_is_milliseconds_since_the_epoch(instant: dt.datetime, ms: int) -> None:
    assert from_logical(timestamp_schema(), instant) == ms
    decoded = to_logical(timestamp_schema(), ms)
    assert decoded == instant
    assert decoded.tzinfo is UTC


def test_aware_timestamps_in_other_zones_encode_the_same_instant() -> None:
    plus_two = dt.timezone(dt.timedelta(hours=2))
    local = dt.datetime(2024, 6, 1, 14, 0, tzinfo=plus_two)
    ms = from_logical(timestamp_schema(), local)
    assert ms == from_logical(timestamp_schema(), dt.datetime(2024, 6, 1, 12, 0, tzinfo=UTC))
    assert to_logical(timestamp_schema(), ms) == local  # the same instant, now in UTC


def test_naive_timestamps_are_taken_as_utc_and_decode_aware() -> None:
    naive = dt.datetime(2024, 6, 1, 12, 0, 0, 5000)
    ms = from_logical(timestamp_schema(), naive)
    assert ms == from_logical(timestamp_schema(), naive.replace(tzinfo=UTC))
    assert to_logical(timestamp_schema(), ms) == naive.replace(tzinfo=UTC)


def test_logical_values_are_validated_by_their_python_type() -> None:
    schema = (SchemaBuilder.struct()
              .field("price", decimal_schema(2)).field("day", date_schema())
              .field("at", time_schema()).field("ts", timestamp_schema()).build())
    Struct(schema, {"price": D("1.00"), "day": dt.date(2024, 1, 1), "at": dt.time(1),
                    "ts": dt.datetime(2024, 1, 1, tzinfo=UTC)}).validate()
    with pytest.raises(DataError, match="logical type Decimal needs a Decimal, got float at price"):
        Struct(schema).put("price", 1.0)
    with pytest.raises(DataError, match="logical type Timestamp needs a datetime, got int at ts"):
        Struct(schema).put("ts", 0)


def test_non_logical_schemas_and_nulls_pass_through() -> None:
    assert from_logical(INT32_SCHEMA, 5) == 5
    assert to_logical(BYTES_SCHEMA, b"x") == b"x"
    assert from_logical(decimal_schema(2), None) is None
    assert to_logical(timestamp_schema(), None) is None


# -- Headers -----------------------------------------------------------------------------


def test_headers_keep_order_and_repeated_keys() -> None:
    headers = Headers([("trace", "a"), ("retry", 1, INT32_SCHEMA), ("trace", "b")])
    assert headers.keys() == ["trace", "retry", "trace"]
    assert [h.value for h in headers.all("trace")] == ["a", "b"]
    assert headers.last("trace") == Header("trace", "b")
    assert headers.last("missing") is None
    assert headers[1] == Header("retry", 1, INT32_SCHEMA)
    assert len(headers) == 3


def test_headers_are_immutable_and_changes_return_new_headers() -> None:
    headers = Headers([("a", 1)])
    more = headers.with_header("a", 2)
    assert headers.keys() == ["a"]
    assert more.keys() == ["a", "a"]
    with pytest.raises(TypeError):
        headers[0] = Header("b", 2)  # type: ignore[index]
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        headers[0].value = 5  # type: ignore[misc]


def test_headers_without_and_replacing() -> None:
    headers = Headers([("a", 1), ("b", 2), ("a", 3)])
    assert headers.without("a").keys() == ["b"]
    assert headers.without("a", "b") == Headers.EMPTY
    replaced = headers.replacing("a", 9)
    assert [(h.key, h.value) for h in replaced] == [("b", 2), ("a", 9)]
    assert headers.keys() == ["a", "b", "a"]


def test_headers_compare_by_content_and_slice_to_headers() -> None:
    assert Headers([("a", 1)]) == Headers([Header("a", 1)])
    assert hash(Headers([("a", 1)])) == hash(Headers([("a", 1)]))
    assert Headers([("a", 1), ("b", 2)]) != Headers([("b", 2), ("a", 1)])
    assert isinstance(Headers([("a", 1), ("b", 2)])[1:], Headers)
    assert len(Headers.EMPTY) == 0


# -- projection ------------------------------------------------------------------------


def _v1() -> Schema:
    return (SchemaBuilder.struct().name("com.example.User").version(1)
            .field("id", INT8_SCHEMA)
            .field("name", STRING_SCHEMA)
            .field("legacy", OPTIONAL_STRING_SCHEMA)
            .build())


def test_projection_fills_added_optional_fields_and_defaults_and_drops_removed_ones() -> None:
    v2 = (SchemaBuilder.struct().name("com.example.User").version(2)
          .field("id", FLOAT64_SCHEMA)
          .field("name", STRING_SCHEMA)
          .field("email", OPTIONAL_STRING_SCHEMA)
          .field("active", SchemaBuilder.boolean().default_value(True).build())
          .build())
    old = Struct(_v1(), {"id": 7, "name": "ann", "legacy": "x"})
    new = project(_v1(), old, v2)
    assert isinstance(new, Struct) and new.schema == v2
    assert new.to_dict() == {"id": 7.0, "name": "ann", "email": None, "active": True}
    assert isinstance(new["id"], float)


NUMERIC = [INT8_SCHEMA, INT16_SCHEMA, INT32_SCHEMA, INT64_SCHEMA, FLOAT32_SCHEMA,
           FLOAT64_SCHEMA]


@pytest.mark.parametrize("i", range(len(NUMERIC)))
@pytest.mark.parametrize("j", range(len(NUMERIC)))
def test_numbers_widen_and_never_narrow(i: int, j: int) -> None:
    source, target = NUMERIC[i], NUMERIC[j]
    value = 5 if source.type.is_integer else 5.0
    if i <= j:
        result = project(source, value, target)
        assert result == 5
        assert isinstance(result, float) == (target.type in (Type.FLOAT32, Type.FLOAT64))
    else:
        with pytest.raises(SchemaProjectionError, match=(
                f"cannot project {source.type.value} onto {target.type.value}: only numeric "
                "widening")):
            project(source, value, target)


def test_projecting_across_kinds_is_an_error() -> None:
    with pytest.raises(SchemaProjectionError, match="cannot project string onto int32"):
        project(STRING_SCHEMA, "1", INT32_SCHEMA)
    with pytest.raises(SchemaProjectionError, match="cannot project boolean onto int8"):
        project(BOOLEAN_SCHEMA, True, INT8_SCHEMA)


def test_a_required_added_field_without_default_is_an_error_naming_it() -> None:
    v2 = (SchemaBuilder.struct().name("com.example.User")
          .field("id", INT8_SCHEMA).field("name", STRING_SCHEMA)
          .field("email", STRING_SCHEMA).build())
    old = Struct(_v1(), {"id": 7, "name": "ann"})
    with pytest.raises(SchemaProjectionError, match=(
            "required field 'email' is missing from the source schema and has no default; "
            "give it a default or make it optional")):
        project(_v1(), old, v2)


def test_names_must_match() -> None:
    other = SchemaBuilder.struct().name("com.example.Account").field("id", INT8_SCHEMA).build()
    with pytest.raises(SchemaProjectionError, match=(
            r"schema name 'com.example.User' does not match 'com.example.Account'")):
        project(_v1(), Struct(_v1(), {"id": 1, "name": "a"}), other)


def test_parameters_must_match() -> None:
    with pytest.raises(SchemaProjectionError, match=(
            r"schema parameters \{'scale': '2'\} do not match \{'scale': '3'\}")):
        project(decimal_schema(2), D("1.00"), decimal_schema(3))


def test_versions_may_differ_that_is_what_evolution_is() -> None:
    v7 = SchemaBuilder.struct().name("com.example.User").version(7).field(
        "id", INT16_SCHEMA).build()
    projected = project(_v1(), Struct(_v1(), {"id": 1, "name": "a"}), v7)
    assert projected["id"] == 1


def test_optional_onto_required_is_an_error_unless_the_target_has_a_default() -> None:
    with pytest.raises(SchemaProjectionError, match=(
            "cannot project an optional schema onto a required one without a default at "
            "legacy; make the target optional or give it a default")):
        project(OPTIONAL_STRING_SCHEMA, "x", STRING_SCHEMA, path="legacy")
    defaulted = SchemaBuilder.string().default_value("none").build()
    assert project(OPTIONAL_STRING_SCHEMA, None, defaulted) == "none"
    assert project(OPTIONAL_STRING_SCHEMA, "x", defaulted) == "x"


def test_nulls_project_to_null_on_optional_targets() -> None:
    assert project(OPTIONAL_INT32_SCHEMA, None, OPTIONAL_INT32_SCHEMA) is None


def test_errors_in_nested_structs_name_the_path() -> None:
    inner1 = SchemaBuilder.struct().name("Addr").field("zip", INT32_SCHEMA).build()
    inner2 = SchemaBuilder.struct().name("Addr").field("zip", INT16_SCHEMA).build()
    outer1 = SchemaBuilder.struct().name("U").field("address", inner1).build()
    outer2 = SchemaBuilder.struct().name("U").field("address", inner2).build()
    value = Struct(outer1, {"address": Struct(inner1, {"zip": 1})})
    with pytest.raises(SchemaProjectionError, match=r"int32 onto int16 at address.zip"):
        project(outer1, value, outer2)


def test_arrays_and_maps_project_element_by_element() -> None:
    ints = SchemaBuilder.array(INT8_SCHEMA).build()
    floats = SchemaBuilder.array(FLOAT64_SCHEMA).build()
    assert project(ints, [1, 2], floats) == [1.0, 2.0]
    source = SchemaBuilder.map(STRING_SCHEMA, INT16_SCHEMA).build()
    target = SchemaBuilder.map(STRING_SCHEMA, INT64_SCHEMA).build()
    assert project(source, {"a": 1}, target) == {"a": 1}
    with pytest.raises(SchemaProjectionError, match=r"at \[0\]"):
        project(floats, [1.0], ints)


def test_a_struct_schema_takes_a_struct_and_refuses_a_dict() -> None:
    from omconnect.data.schema import StructValue

    schema = SchemaBuilder.struct().field("id", INT32_SCHEMA).build()
    schema.validate_value(Struct(schema, {"id": 1}))
    with pytest.raises(DataError, match="struct schema needs a Struct, got dict"):
        schema.validate_value({"id": 1})
    assert isinstance(Struct(schema, {"id": 1}), StructValue)
