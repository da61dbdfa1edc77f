"""AvroConverter: round trips, Confluent's schema conventions, single-object framing,
schemas from files, schema resolution and bad input.
"""

from __future__ import annotations

import datetime as dt
import decimal
import io
import json
import uuid

import fastavro
import pytest
from converter_catalog import ADDRESS, CASES, ORDER, order, schemas_and_values
from fastavro.schema import to_parsing_canonical_form
from hypothesis import given, settings

from omconnect.converters.avro import AvroConverter, register_schema
from omconnect.converters.avro_data import to_avro_schema
from omconnect.converters.avro_registry import MARKER, SchemaRegistry, avro_fingerprint
from omconnect.data import (
    INT8_SCHEMA,
    INT16_SCHEMA,
    INT32_SCHEMA,
    INT64_SCHEMA,
    OPTIONAL_STRING_SCHEMA,
    STRING_SCHEMA,
    SchemaAndValue,
    SchemaBuilder,
    Struct,
    Type,
    date_schema,
    decimal_schema,
    time_schema,
)
from omconnect.errors import ConfigError, DataError


def _converter(registry: SchemaRegistry | None = None, **config: object) -> AvroConverter:
    converter = AvroConverter() if registry is None else AvroConverter(registry)
    converter.configure(config, False)
    return converter


@pytest.mark.parametrize(("case", "schema", "value"), CASES, ids=[c[0] for c in CASES])
def test_every_type_round_trips(case, schema, value):
    converter = _converter()
    data = converter.from_connect("t", schema, value)
    if value is None:
        assert data is None  # a null is a tombstone, as with Confluent's converter
        return
    result = _converter().to_connect("t", data)
    assert result.schema == schema
    assert result.value == value


def test_connect_schema_details_survive_avro():
    schema = (SchemaBuilder.struct().name("com.example.Doc").version(7).doc("a doc")
              .parameter("p", "q")
              .field("small", INT8_SCHEMA)
              .field("medium", SchemaBuilder.int16().doc("sixteen").build())
              .field("n", SchemaBuilder.int32().optional().default_value(5).build())
              .build())
    converter = _converter()
    value = Struct(schema, {"small": 1, "medium": 2})
    result = converter.to_connect("t", converter.from_connect("t", schema, value))
    assert result.schema == schema
    assert result.schema.doc == "a doc"
    assert result.schema.field("medium").schema.doc == "sixteen"
    assert result.value == Struct(schema, {"small": 1, "medium": 2, "n": 5})


def test_without_connect_metadata_versions_docs_and_parameters_are_lost():
    schema = (SchemaBuilder.struct().name("com.example.N")
              .field("a", INT8_SCHEMA)
              .field("s", SchemaBuilder.string().version(2).doc("d").parameter("k", "v").build())
              .build())
    writer = _converter(**{"connect.meta.data": "false"})
    registry = SchemaRegistry()
    registry.register(to_avro_schema(schema, connect_meta=False))
    value = Struct(schema, {"a": 1, "s": "x"})
    result = _converter(registry).to_connect("t", writer.from_connect("t", schema, value))
    assert result.schema.field("a").schema == INT8_SCHEMA  # connect.type is always written
    assert result.schema.field("s").schema == STRING_SCHEMA
    assert result.value.to_dict() == {"a": 1, "s": "x"}


@settings(max_examples=300, deadline=None)
@given(schemas_and_values(float32_exact=True))
def test_random_schemas_and_values_round_trip(schema_and_value):
    schema, value = schema_and_value
    data = _converter().from_connect("t", schema, value)
    if value is None:
        assert data is None
        return
    result = _converter().to_connect("t", data)
    assert result.schema == schema
    assert result.value == value


def test_avro_schema_follows_confluent_conventions():
    schema = (SchemaBuilder.struct().name("com.example.Sample")
              .field("tiny", INT8_SCHEMA)
              .field("short", INT16_SCHEMA)
              .field("long", INT64_SCHEMA)
              .field("note", OPTIONAL_STRING_SCHEMA)
              .field("level", SchemaBuilder.int32().optional().default_value(3).build())
              .field("attrs", SchemaBuilder.map(STRING_SCHEMA, INT32_SCHEMA).build())
              .field("by_id", SchemaBuilder.map(INT32_SCHEMA, STRING_SCHEMA).build())
              .field("price", decimal_schema(2))
              .build())
    assert to_avro_schema(schema) == {
        "type": "record",
        "name": "com.example.Sample",
        "fields": [
            {"name": "tiny", "type": {"type": "int", "connect.type": "int8"}},
            {"name": "short", "type": {"type": "int", "connect.type": "int16"}},
            {"name": "long", "type": "long"},
            {"name": "note", "type": ["null", "string"], "default": None},
            {"name": "level", "type": ["int", "null"], "default": 3},
            {"name": "attrs", "type": {"type": "map", "values": "int"}},
            {"name": "by_id", "type": {"type": "array", "items": {
                "type": "record", "name": "io.confluent.connect.avro.MapEntry",
                "fields": [{"name": "key", "type": "int"}, {"name": "value", "type": "string"}],
            }}},
            {"name": "price", "type": {
                "type": "bytes", "logicalType": "decimal", "precision": 64, "scale": 2,
                "connect.version": 1, "connect.parameters": {"scale": "2"},
                "connect.name": "org.apache.kafka.connect.data.Decimal",
            }},
        ],
        "connect.name": "com.example.Sample",
    }


def test_unnamed_structs_are_connect_default_records_and_read_back_unnamed():
    inner = SchemaBuilder.struct().field("a", INT32_SCHEMA).build()
    outer = SchemaBuilder.struct().field("x", inner).field("y", inner).build()
    avro = to_avro_schema(outer)
    assert avro["name"] == "io.confluent.connect.avro.ConnectDefault"
    assert avro["fields"][0]["type"]["name"] == "io.confluent.connect.avro.ConnectDefault2"
    assert avro["fields"][1]["type"] == "io.confluent.connect.avro.ConnectDefault2"  # reuse
    converter = _converter()
    value = Struct(outer, {"x": Struct(inner, {"a": 1}), "y": Struct(inner, {"a": 2})})
    result = converter.to_connect("t", converter.from_connect("t", outer, value))
    assert result.schema == outer and result.value == value


def test_two_different_structs_with_one_name_both_survive():
    first = SchemaBuilder.struct().name("com.example.Item").field("a", INT32_SCHEMA).build()
    second = SchemaBuilder.struct().name("com.example.Item").field("b", STRING_SCHEMA).build()
    outer = SchemaBuilder.struct().field("x", first).field("y", second).build()
    converter = _converter()
    value = Struct(outer, {"x": Struct(first, {"a": 1}), "y": Struct(second, {"b": "z"})})
    result = converter.to_connect("t", converter.from_connect("t", outer, value))
    assert result.schema == outer and result.value == value


def _crc64_avro(data: bytes) -> bytes:
    """CRC-64-AVRO (Rabin) as the Avro specification gives it, written independently."""
    empty = 0xC15D213AA4D7A795
    table = []
    for i in range(256):
        fp = i
        for _ in range(8):
            fp = (fp >> 1) ^ (empty & -(fp & 1))
        table.append(fp)
    fp = empty
    for byte in data:
        fp = (fp >> 8) ^ table[(fp ^ byte) & 0xFF]
    return fp.to_bytes(8, "little")


def test_messages_are_avro_single_object_encoded():
    data = _converter().from_connect("t", ADDRESS, Struct(ADDRESS, {"street": "s", "zip": "z"}))
    avro = to_avro_schema(ADDRESS)
    canonical = to_parsing_canonical_form(fastavro.parse_schema(avro)).encode()
    assert data[:2] == MARKER == b"\xc3\x01"
    assert data[2:10] == _crc64_avro(canonical)
    # Any Avro library holding the schema decodes the body.
    body = fastavro.schemaless_reader(io.BytesIO(data[10:]), fastavro.parse_schema(avro), None)
    assert body == {"street": "s", "zip": "z"}


def test_a_reader_in_another_process_needs_the_schema_file(tmp_path):
    data = _converter().from_connect("t", ORDER, order())
    elsewhere = SchemaRegistry()  # another process: knows nothing
    with pytest.raises(DataError, match=r"unknown Avro writer schema \(fingerprint "
                                        r"[0-9a-f]{16}\).*avro\.schemas"):
        _converter(elsewhere).to_connect("t", data)
    avsc = tmp_path / "order.avsc"
    avsc.write_text(json.dumps(to_avro_schema(ORDER)))
    result = _converter(SchemaRegistry(), **{"avro.schemas": str(avsc)}).to_connect("t", data)
    assert result.schema == ORDER and result.value == order()


def test_register_schema_makes_a_schema_known_to_the_process():
    avro = {"type": "record", "name": "com.example.Registered",
            "fields": [{"name": "n", "type": "long"}]}
    key = register_schema(avro, "t-value")
    buffer = io.BytesIO()
    fastavro.schemaless_writer(buffer, fastavro.parse_schema(avro), {"n": 7})
    result = _converter().to_connect("t", MARKER + key + buffer.getvalue())
    assert result.value.get("n") == 7
    assert result.schema.name == "com.example.Registered"


def test_a_reader_schema_resolves_old_data_into_the_new_shape(tmp_path):
    v1 = SchemaBuilder.struct().name("com.example.User").field("id", INT64_SCHEMA).build()
    v2_avro = {"type": "record", "name": "com.example.User", "fields": [
        {"name": "id", "type": "long"},
        {"name": "email", "type": ["null", "string"], "default": None},
    ]}
    reader_file = tmp_path / "user-v2.avsc"
    reader_file.write_text(json.dumps(v2_avro))
    data = _converter().from_connect("t", v1, Struct(v1, {"id": 9}))
    result = _converter(**{"avro.reader.schema": str(reader_file)}).to_connect("t", data)
    assert [f.name for f in result.schema.fields] == ["id", "email"]
    assert result.value.get("id") == 9 and result.value.get("email") is None


EXTERNAL = {
    "type": "record", "name": "Event", "namespace": "org.example", "doc": "from elsewhere",
    "fields": [
        {"name": "kind", "type": {"type": "enum", "name": "Kind", "symbols": ["A", "B"]}},
        {"name": "hash", "type": {"type": "fixed", "name": "Hash", "size": 4}},
        {"name": "id", "type": {"type": "string", "logicalType": "uuid"}},
        {"name": "at_us", "type": {"type": "long", "logicalType": "timestamp-micros"}},
        {"name": "on", "type": {"type": "int", "logicalType": "date"}},
        {"name": "amount", "type": {"type": "bytes", "logicalType": "decimal",
                                    "precision": 10, "scale": 3}},
        {"name": "tags", "type": {"type": "map", "values": {"type": "array", "items": "int"}}},
        {"name": "prev", "type": ["null", "Kind"], "default": None},
        {"name": "count", "type": "int", "default": 1},
    ],
}


def _framed(avro: dict, datum: dict) -> bytes:
    buffer = io.BytesIO()
    fastavro.schemaless_writer(buffer, fastavro.parse_schema(avro), datum)
    return MARKER + avro_fingerprint(avro) + buffer.getvalue()


def test_avro_written_elsewhere_reads_into_connect_types(tmp_path):
    avsc = tmp_path / "event.avsc"
    avsc.write_text(json.dumps(EXTERNAL))
    event_id = uuid.UUID("0b5a1c1e-2d3f-4a5b-8c7d-9e0f1a2b3c4d")
    data = _framed(EXTERNAL, {
        "kind": "B", "hash": b"\x01\x02\x03\x04", "id": str(event_id), "at_us": 1_000_001,
        "on": 19000, "amount": b"\x30\x39", "tags": {"x": [1, 2]}, "prev": "A", "count": 2,
    })
    converter = _converter(SchemaRegistry(), **{"avro.schemas": [str(avsc)]})
    result = converter.to_connect("t", data)
    schema, value = result.schema, result.value
    assert schema.name == "org.example.Event" and schema.doc == "from elsewhere"
    assert schema.field("kind").schema.type is Type.STRING
    assert schema.field("kind").schema.parameters["io.confluent.connect.avro.Enum"] == \
        "org.example.Kind"
    assert schema.field("hash").schema.type is Type.BYTES
    assert schema.field("id").schema.type is Type.STRING
    assert schema.field("at_us").schema.type is Type.INT64
    assert schema.field("count").schema.default == 1
    assert value.to_dict() == {
        "kind": "B", "hash": b"\x01\x02\x03\x04", "id": str(event_id), "at_us": 1_000_001,
        "on": dt.date(2022, 1, 8), "amount": value.get("amount"), "tags": {"x": [1, 2]},
        "prev": "A", "count": 2,
    }
    assert str(value.get("amount")) == "12.345"
    # Written back through Connect, the Avro body is byte-identical (enum and fixed kept).
    rewritten = _converter().from_connect("t", schema, value)
    assert rewritten[10:] == data[10:]


@pytest.mark.parametrize(("avro", "message"), [
    ({"type": "record", "name": "U", "fields": [{"name": "v", "type": ["int", "string"]}]},
     r"the Avro union \['int', 'string'\] at v has no Connect form"),
    ({"type": "record", "name": "Node", "fields": [
        {"name": "next", "type": ["null", "Node"]}]},
     r"recursive Avro record 'Node' at next"),
])
def test_avro_schemas_with_no_connect_form_are_refused(avro, message):
    key = register_schema(avro)
    with pytest.raises(DataError, match=message):
        _converter().to_connect("t", MARKER + key + b"\x00")


def test_tombstones():
    converter = _converter()
    assert converter.from_connect("t", ORDER, None) is None
    assert converter.from_connect("t", None, None) is None
    result = converter.to_connect("t", None)
    assert result.schema is None and result.value is None


def test_batches_convert_like_single_values():
    converter = _converter()
    items = [(ORDER, order()), (ADDRESS, Struct(ADDRESS, {"street": "x"})), (INT32_SCHEMA, 5),
             (STRING_SCHEMA, "s"), (decimal_schema(2), decimal.Decimal("1.25")), (ORDER, None)]
    encoded = converter.from_connect_batch("t", items)
    assert encoded == [converter.from_connect("t", s, v) for s, v in items]
    decoded = converter.to_connect_batch("t", encoded)
    assert [d.value for d in decoded] == [v for _, v in items]


def test_schemas_sharing_a_fingerprint_are_told_apart_by_topic_and_role():
    # INT32, Date and Time are all Avro "int": one fingerprint. Subjects keep them apart.
    writer_keys, writer_values = AvroConverter(), AvroConverter()
    writer_keys.configure({}, True)
    writer_values.configure({}, False)
    key = writer_keys.from_connect("events", INT32_SCHEMA, 7)
    day = writer_values.from_connect("events", date_schema(), dt.date(2024, 2, 29))
    moment = writer_values.from_connect("audit", time_schema(), dt.time(12, 30))
    assert key[2:10] == day[2:10] == moment[2:10]
    reader_keys, reader_values = AvroConverter(), AvroConverter()
    reader_keys.configure({}, True)
    reader_values.configure({}, False)
    assert reader_keys.to_connect("events", key) == SchemaAndValue(INT32_SCHEMA, 7)
    assert reader_values.to_connect("events", day) == SchemaAndValue(date_schema(),
                                                                     dt.date(2024, 2, 29))
    assert reader_values.to_connect("audit", moment) == SchemaAndValue(time_schema(),
                                                                       dt.time(12, 30))


@pytest.mark.parametrize(("data", "message"), [
    (b'{"json": true}', r"not Avro single-object encoding"),
    (b"\x00\x00\x00\x00\x01\x02", r"not Avro single-object encoding"),
])
def test_bytes_that_are_not_single_object_encoded(data, message):
    with pytest.raises(DataError, match=message) as info:
        _converter().to_connect("orders", data)
    assert info.value.context["topic"] == "orders"


def test_a_truncated_body_is_a_data_error():
    data = _converter().from_connect("t", ORDER, order())
    with pytest.raises(DataError, match=r"corrupt Avro body"):
        _converter().to_connect("t", data[:-5])


def test_trailing_bytes_are_a_data_error():
    data = _converter().from_connect("t", INT32_SCHEMA, 5)
    with pytest.raises(DataError, match=r"2 bytes left after the Avro body"):
        _converter().to_connect("t", data + b"\x00\x00")


def test_a_value_without_a_schema_is_refused():
    with pytest.raises(DataError, match=r"needs a schema.*json converter"):
        _converter().from_connect("t", None, {"a": 1})


def test_a_struct_without_a_schema_uses_its_own():
    value = Struct(ADDRESS, {"street": "x"})
    assert _converter().from_connect("t", None, value) == \
        _converter().from_connect("t", ADDRESS, value)


def test_a_field_name_avro_cannot_hold_is_refused_naming_it():
    schema = SchemaBuilder.struct().field("first-name", STRING_SCHEMA).build()
    with pytest.raises(DataError, match=r"field 'first-name' cannot be written as Avro"):
        _converter().from_connect("t", schema, Struct(schema, {"first-name": "x"}))


def test_a_value_not_matching_its_schema_is_refused():
    with pytest.raises(DataError, match=r"int32"):
        _converter().from_connect("t", INT32_SCHEMA, "seven")


def test_schema_registry_url_is_refused_not_ignored():
    with pytest.raises(ConfigError, match=r"value\.converter\.schema\.registry\.url.*not "
                                          r"supported yet"):
        _converter(**{"schema.registry.url": "http://localhost:8081"})


def test_a_missing_schema_file_is_a_config_error_naming_key_and_path(tmp_path):
    missing = tmp_path / "nope.avsc"
    with pytest.raises(ConfigError, match=r"value\.converter\.avro\.schemas: cannot read Avro "
                                          r"schema file .*nope\.avsc"):
        _converter(**{"avro.schemas": str(missing)})


def test_an_invalid_schema_file_is_a_config_error(tmp_path):
    bad = tmp_path / "bad.avsc"
    bad.write_text('{"type": "recrod", "name": "X"}')
    with pytest.raises(ConfigError, match=r"value\.converter\.avro\.schemas: .*bad\.avsc"):
        _converter(**{"avro.schemas": str(bad)})


def test_the_schema_written_last_on_a_topic_is_the_one_read():
    # A writer that moves a topic from INT32 to Date (one fingerprint) re-registers.
    writer, reader = _converter(), _converter()
    writer.from_connect("moving", INT32_SCHEMA, 1)
    data = writer.from_connect("moving", date_schema(), dt.date(2024, 1, 1))
    assert reader.to_connect("moving", data).value == dt.date(2024, 1, 1)
