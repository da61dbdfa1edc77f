"""JsonConverter: every schema type, nulls, defaults and options survive the round trip."""

from __future__ import annotations

import datetime as dt
import decimal

import pytest
from converter_catalog import ADDRESS, CASES, ORDER, order, schemas_and_values
from hypothesis import given, settings
from hypothesis import strategies as st

from omconnect.converters.json import JsonConverter
from omconnect.data import (
    INT32_SCHEMA,
    OPTIONAL_STRING_SCHEMA,
    STRING_SCHEMA,
    SchemaBuilder,
    Struct,
    date_schema,
    decimal_schema,
)
from omconnect.errors import DataError


def _converter(**config: object) -> JsonConverter:
    converter = JsonConverter()
    converter.configure(config, False)
    return converter


@pytest.mark.parametrize("decimal_format", ["BASE64", "NUMERIC"])
@pytest.mark.parametrize(("case", "schema", "value"), CASES, ids=[c[0] for c in CASES])
def test_every_type_round_trips_with_schemas(case, schema, value, decimal_format):
    converter = _converter(**{"decimal.format": decimal_format})
    data = converter.from_connect("t", schema, value)
    result = converter.to_connect("t", data)
    assert result.schema == schema
    assert result.value == value


@pytest.mark.parametrize(("case", "schema", "value"), CASES, ids=[c[0] for c in CASES])
def test_a_fresh_converter_reads_what_another_wrote(case, schema, value):
    # No shared cache: the schema travels in the envelope.
    data = _converter().from_connect("t", schema, value)
    assert _converter().to_connect("t", data).value == value


def test_schema_details_round_trip():
    schema = (SchemaBuilder.struct().name("com.example.Doc").version(7).doc("a doc")
              .parameter("p", "q")
              .field("n", SchemaBuilder.int32().doc("a number").build())
              .build())
    converter = _converter()
    result = converter.to_connect("t", converter.from_connect("t", schema, Struct(schema,
                                                                                  {"n": 1})))
    assert result.schema == schema
    assert result.schema.doc == "a doc"  # doc is not part of schema equality: check it
    assert result.schema.field("n").schema.doc == "a number"
    assert result.schema.version == 7
    assert result.schema.parameters == {"p": "q"}


def test_defaults_of_every_kind_round_trip_in_the_schema():
    schema = (SchemaBuilder.struct()
              .field("i", SchemaBuilder.int64().default_value(5).build())
              .field("s", SchemaBuilder.string().optional().default_value("x").build())
              .field("b", SchemaBuilder.bytes().default_value(b"\x01").build())
              .field("d", SchemaBuilder.decimal(2).default_value(decimal.Decimal("1.25")).build())
              .field("day", SchemaBuilder.date().default_value(dt.date(2020, 2, 29)).build())
              .field("a", SchemaBuilder.array(INT32_SCHEMA).default_value([1, 2]).build())
              .build())
    converter = _converter()
    data = converter.from_connect("t", schema, Struct(schema))
    result = converter.to_connect("t", data)
    assert result.schema == schema
    assert result.value == Struct(schema, {
        "i": 5, "s": "x", "b": b"\x01", "d": decimal.Decimal("1.25"),
        "day": dt.date(2020, 2, 29), "a": [1, 2],
    })


def test_a_struct_default_round_trips_in_the_schema():
    with_default = (SchemaBuilder.struct().name("com.example.Address").version(2).doc("where")
                    .field("street", STRING_SCHEMA).field("zip", OPTIONAL_STRING_SCHEMA)
                    .default_value(Struct(ADDRESS, {"street": "x"})).build())
    schema = SchemaBuilder.struct().field("addr", with_default).build()
    converter = _converter()
    result = converter.to_connect("t", converter.from_connect("t", schema, Struct(schema)))
    assert result.schema == schema
    assert result.value.get("addr").to_dict() == {"street": "x", "zip": None}


def test_a_null_field_with_a_default_reads_as_the_default():
    schema = SchemaBuilder.struct().field(
        "n", SchemaBuilder.int32().optional().default_value(7).build()).build()
    text = b'{"schema":{"type":"struct","fields":[{"type":"int32","optional":true,"default":7,' \
           b'"field":"n"}],"optional":false},"payload":{"n":null}}'
    assert _converter().to_connect("t", text).value == Struct(schema, {"n": 7})
    kept = _converter(**{"replace.null.with.default": "false"}).to_connect("t", text)
    assert kept.value.get("n") is None


def test_a_missing_field_reads_as_null_or_its_default():
    text = (b'{"schema":{"type":"struct","fields":['
            b'{"type":"string","optional":true,"field":"a"},'
            b'{"type":"int32","optional":false,"default":3,"field":"b"}],"optional":false},'
            b'"payload":{}}')
    value = _converter().to_connect("t", text).value
    assert value.get("a") is None
    assert value.get("b") == 3


def test_tombstones():
    converter = _converter()
    assert converter.from_connect("t", None, None) is None
    result = converter.to_connect("t", None)
    assert result.schema is None and result.value is None


def test_null_of_an_optional_schema_is_an_envelope_not_a_tombstone():
    converter = _converter()
    data = converter.from_connect("t", OPTIONAL_STRING_SCHEMA, None)
    assert data == b'{"schema":{"type":"string","optional":true},"payload":null}'
    result = converter.to_connect("t", data)
    assert result.schema == OPTIONAL_STRING_SCHEMA and result.value is None


def test_struct_without_a_schema_uses_its_own():
    converter = _converter()
    value = Struct(ADDRESS, {"street": "s"})
    assert converter.from_connect("t", None, value) == converter.from_connect("t", ADDRESS, value)


def test_schemaless_values_round_trip_with_schemas_disabled():
    converter = _converter(**{"schemas.enable": "false"})
    value = {"a": 1, "b": [1.5, "x", None, False], "c": {"d": {}}}
    assert converter.to_connect("t", converter.from_connect("t", None, value)).value == value


def test_empty_bytes_read_as_null_with_schemas_disabled():
    assert _converter(**{"schemas.enable": False}).to_connect("t", b"").value is None


def test_schema_content_reads_plain_payloads_with_the_configured_schema():
    schema_json = ('{"type":"struct","fields":[{"type":"int32","optional":false,"field":"id"},'
                   '{"type":"bytes","optional":false,"name":"org.apache.kafka.connect.data.Decimal",'
                   '"version":1,"parameters":{"scale":"1"},"field":"amount"}],"optional":false}')
    converter = _converter(**{"schema.content": schema_json})
    result = converter.to_connect("t", b'{"id": 4, "amount": 12.5}')
    assert result.value.get("id") == 4
    assert result.value.get("amount") == decimal.Decimal("12.5")
    # An envelope's own schema is ignored; its payload is read with the configured one.
    enveloped = converter.to_connect("t", b'{"schema":{"type":"string"},"payload":{"id":5,'
                                          b'"amount":"AH0="}}')
    assert enveloped.schema == result.schema
    assert enveloped.value.get("amount") == decimal.Decimal("12.5")


def test_schema_cache_size_one_still_converts_alternating_schemas():
    converter = _converter(**{"schemas.cache.size": 1})
    for _ in range(3):
        for schema, value in ((ADDRESS, Struct(ADDRESS, {"street": "a"})), (ORDER, order())):
            assert converter.to_connect("t", converter.from_connect("t", schema, value)).value \
                == value


def test_equal_schemas_built_separately_convert_the_same():
    def build():
        return SchemaBuilder.map(date_schema(), decimal_schema(1)).build()

    converter = _converter()
    value = {dt.date(2024, 1, 1): decimal.Decimal("0.5")}
    assert converter.from_connect("t", build(), value) == converter.from_connect("t", build(),
                                                                               value)


def test_batches_convert_like_single_values():
    converter = _converter()
    items = [(schema, value) for _, schema, value in CASES] + [(None, None)]
    encoded = converter.from_connect_batch("t", items)
    assert encoded == [converter.from_connect("t", s, v) for s, v in items]
    decoded = converter.to_connect_batch("t", encoded)
    assert [d.value for d in decoded] == [v for _, v in items]


@settings(max_examples=300, deadline=None)
@given(schemas_and_values(), st.sampled_from(["BASE64", "NUMERIC"]))
def test_random_schemas_and_values_round_trip(schema_and_value, decimal_format):
    schema, value = schema_and_value
    converter = _converter(**{"decimal.format": decimal_format})
    data = converter.from_connect("t", schema, value)
    result = _converter().to_connect("t", data)
    assert result.schema == schema
    assert result.value == value


_JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(st.characters(exclude_categories=("Cs",))),
    lambda children: st.lists(children) | st.dictionaries(st.text(), children),
    max_leaves=20,
)


@settings(max_examples=200, deadline=None)
@given(_JSON_VALUES.filter(lambda v: v is not None))
def test_random_schemaless_values_round_trip_with_schemas_disabled(value):
    converter = _converter(**{"schemas.enable": False})
    assert converter.to_connect("t", converter.from_connect("t", None, value)).value == value


def test_a_value_not_matching_its_schema_is_refused_naming_the_problem():
    with pytest.raises(DataError, match="int32") as info:
        _converter().from_connect("orders", INT32_SCHEMA, "seven")
    assert "topic='orders'" in str(info.value)


def test_a_struct_of_another_schema_is_refused():
    with pytest.raises(DataError, match="not the record's schema"):
        _converter().from_connect("t", ORDER, Struct(ADDRESS, {"street": "x"}))


def test_a_missing_required_field_is_refused_naming_it():
    with pytest.raises(DataError, match=r"required string field at street"):
        _converter().from_connect("t", ADDRESS, Struct(ADDRESS))


def test_a_schemaless_decimal_is_refused_with_the_fix():
    with pytest.raises(DataError, match="logical schema"):
        _converter().from_connect("t", None, decimal.Decimal("1.5"))
