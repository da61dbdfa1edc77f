"""Schemas and values of every type, and hypothesis strategies for random ones, shared by
the converter tests.
"""

from __future__ import annotations

import datetime as dt
import decimal
import string
from typing import Any

from hypothesis import strategies as st

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
    Schema,
    SchemaBuilder,
    Struct,
    Type,
    date_schema,
    decimal_schema,
    time_schema,
    timestamp_schema,
)
from omconnect.data.logical import DECIMAL, LOGICAL_NAMES, TIME, TIMESTAMP, decimal_scale
from omconnect.data.schema import integer_range

ADDRESS = (SchemaBuilder.struct().name("com.example.Address").version(2).doc("where")
           .field("street", STRING_SCHEMA)
           .field("zip", SchemaBuilder.string().optional().build())
           .build())

ORDER = (SchemaBuilder.struct().name("com.example.Order")
         .field("id", INT64_SCHEMA)
         .field("qty", SchemaBuilder.int16().default_value(1).build())
         .field("note", OPTIONAL_STRING_SCHEMA)
         .field("price", decimal_schema(2))
         .field("placed", timestamp_schema())
         .field("tags", SchemaBuilder.array(STRING_SCHEMA).build())
         .field("counts", SchemaBuilder.map(STRING_SCHEMA, INT32_SCHEMA).build())
         .field("by_day", SchemaBuilder.map(date_schema(), FLOAT64_SCHEMA).optional().build())
         .field("ship_to", ADDRESS)
         .field("bill_to", ADDRESS.with_optional(True))
         .build())


def order() -> Struct:
    """A value of :data:`ORDER` using every kind of field."""
    return Struct(ORDER, {
        "id": 42,
        "note": None,
        "price": decimal.Decimal("19.99"),
        "placed": dt.datetime(2024, 5, 1, 13, 45, 0, 250000, tzinfo=dt.UTC),
        "tags": ["a", "b"],
        "counts": {"x": 1, "y": -2},
        "by_day": {dt.date(2024, 5, 1): 1.5},
        "ship_to": Struct(ADDRESS, {"street": "1 Main St", "zip": None}),
    })


# (id, schema, value): one case per type and shape, each a value the schema accepts.
CASES: list[tuple[str, Schema, Any]] = [
    ("int8", INT8_SCHEMA, -128),
    ("int16", INT16_SCHEMA, 32767),
    ("int32", INT32_SCHEMA, -(2**31)),
    ("int64", INT64_SCHEMA, 2**63 - 1),
    ("float32", FLOAT32_SCHEMA, 1.5),
    ("float64", FLOAT64_SCHEMA, 3.141592653589793),
    ("boolean", BOOLEAN_SCHEMA, True),
    ("string", STRING_SCHEMA, "héllo, wörld ✓"),
    ("bytes", BYTES_SCHEMA, b"\x00\x01\xfe\xff"),
    ("array", SchemaBuilder.array(INT32_SCHEMA).build(), [1, 2, 3]),
    ("array-of-optional", SchemaBuilder.array(OPTIONAL_INT32_SCHEMA).build(), [1, None, 3]),
    ("map-string-keys", SchemaBuilder.map(STRING_SCHEMA, INT32_SCHEMA).build(), {"a": 1, "b": 2}),
    ("map-int-keys", SchemaBuilder.map(INT32_SCHEMA, STRING_SCHEMA).build(), {1: "a", 2: "b"}),
    ("map-struct-values", SchemaBuilder.map(STRING_SCHEMA, ADDRESS).build(),
     {"home": Struct(ADDRESS, {"street": "x"})}),
    ("struct", ADDRESS, Struct(ADDRESS, {"street": "1 Main St", "zip": "12345"})),
    ("nested-struct", ORDER, order()),
    ("decimal", decimal_schema(2), decimal.Decimal("-1234.56")),
    ("decimal-large", decimal_schema(10), decimal.Decimal("12345678901234567890.0123456789")),
    ("date", date_schema(), dt.date(1997, 5, 19)),
    ("date-before-epoch", date_schema(), dt.date(1900, 1, 1)),
    ("time", time_schema(), dt.time(4, 0, 0, 123000)),
    ("timestamp", timestamp_schema(), dt.datetime(1970, 2, 16, 7, 6, 40, tzinfo=dt.UTC)),
    ("optional-null", OPTIONAL_STRING_SCHEMA, None),
    ("optional-set", OPTIONAL_STRING_SCHEMA, "x"),
]


# -- hypothesis: random schemas and their values -------------------------------------

FIELD_NAMES = st.text(alphabet=string.ascii_letters + "_", min_size=1, max_size=8)
STRUCT_NAMES = st.sampled_from([None, "com.example.A", "com.example.B", "Rec"])

_PRIMITIVES = [INT8_SCHEMA, INT16_SCHEMA, INT32_SCHEMA, INT64_SCHEMA, FLOAT32_SCHEMA,
               FLOAT64_SCHEMA, BOOLEAN_SCHEMA, STRING_SCHEMA, BYTES_SCHEMA]
_LOGICALS = [decimal_schema(0), decimal_schema(3), date_schema(), time_schema(),
             timestamp_schema()]
KEY_SCHEMAS = st.sampled_from(_PRIMITIVES + _LOGICALS)


def _maybe_optional(schema_strategy: st.SearchStrategy[Schema]) -> st.SearchStrategy[Schema]:
    return st.tuples(schema_strategy, st.booleans()).map(
        lambda pair: pair[0].with_optional(True) if pair[1] else pair[0])


def _struct_of(children: st.SearchStrategy[Schema]) -> st.SearchStrategy[Schema]:
    def build(name: str | None, fields: list[tuple[str, Schema]]) -> Schema:
        builder = SchemaBuilder.struct()
        if name:
            builder.name(name)
        for field_name, schema in fields:
            builder.field(field_name, schema)
        return builder.build()

    fields = st.lists(st.tuples(FIELD_NAMES, children), max_size=5,
                      unique_by=lambda pair: pair[0])
    return st.builds(build, STRUCT_NAMES, fields)


def schemas() -> st.SearchStrategy[Schema]:
    """Random schemas: every primitive and logical type, arrays, maps (string and
    non-string keys) and structs, nested, optional or not.
    """
    leaves = _maybe_optional(st.sampled_from(_PRIMITIVES + _LOGICALS))

    def extend(children: st.SearchStrategy[Schema]) -> st.SearchStrategy[Schema]:
        arrays = children.map(lambda s: SchemaBuilder.array(s).build())
        maps = st.builds(lambda k, v: SchemaBuilder.map(k, v).build(), KEY_SCHEMAS, children)
        return _maybe_optional(st.one_of(arrays, maps, _struct_of(children)))

    return st.recursive(leaves, extend, max_leaves=12)


_TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=12)


def values(schema: Schema, *, float32_exact: bool = False) -> st.SearchStrategy[Any]:
    """Random values of ``schema`` (``None`` included when it is optional).

    Args:
        schema: The schema.
        float32_exact: Draw FLOAT32 values that a 32-bit float holds exactly (for Avro).

    """
    strategy = _non_null_values(schema, float32_exact)
    if schema.optional:
        return st.one_of(st.none(), strategy)
    return strategy


def _non_null_values(schema: Schema, float32_exact: bool) -> st.SearchStrategy[Any]:
    if schema.name in LOGICAL_NAMES:
        return _logical_values(schema)
    type_ = schema.type
    if type_.is_integer:
        low, high = integer_range(type_)
        return st.integers(low, high)
    if type_ is Type.FLOAT32:
        return st.floats(allow_nan=False, width=32 if float32_exact else 64)
    if type_ is Type.FLOAT64:
        return st.floats(allow_nan=False)
    if type_ is Type.BOOLEAN:
        return st.booleans()
    if type_ is Type.STRING:
        return _TEXT
    if type_ is Type.BYTES:
        return st.binary(max_size=12)
    if type_ is Type.ARRAY:
        assert schema.value_schema is not None
        return st.lists(values(schema.value_schema, float32_exact=float32_exact), max_size=4)
    if type_ is Type.MAP:
        assert schema.key_schema is not None and schema.value_schema is not None
        return st.dictionaries(_non_null_values(schema.key_schema, float32_exact),
                               values(schema.value_schema, float32_exact=float32_exact),
                               max_size=4)
    field_values = {
        field.name: values(field.schema, float32_exact=float32_exact)
        for field in schema.fields
    }
    return st.fixed_dictionaries(field_values).map(lambda fields: Struct(schema, fields))


def _logical_values(schema: Schema) -> st.SearchStrategy[Any]:
    if schema.name == DECIMAL:
        scale = decimal_scale(schema)
        return st.integers(-(10**20), 10**20).map(
            lambda unscaled: decimal.Decimal(unscaled).scaleb(-scale))
    if schema.name == TIME:
        return st.integers(0, 86_399_999).map(
            lambda ms: (dt.datetime.min + dt.timedelta(milliseconds=ms)).time())
    if schema.name == TIMESTAMP:
        return st.integers(-(10**13), 10**13).map(
            lambda ms: dt.datetime(1970, 1, 1, tzinfo=dt.UTC) + dt.timedelta(milliseconds=ms))
    return st.dates()


def schemas_and_values(*, float32_exact: bool = False) -> st.SearchStrategy[tuple[Schema, Any]]:
    """A random schema with a random value of it."""
    return schemas().flatmap(
        lambda schema: st.tuples(st.just(schema), values(schema, float32_exact=float32_exact)))
