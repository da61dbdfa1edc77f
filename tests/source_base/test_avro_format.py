"""The Avro record format over container files written with fastavro."""

from __future__ import annotations

import datetime as dt
import decimal
import io
import uuid
from typing import Any

import fastavro
import pytest
from source_helpers import good, read

from omconnect.data import (
    BYTES_SCHEMA,
    INT32_SCHEMA,
    OPTIONAL_STRING_SCHEMA,
    STRING_SCHEMA,
    SchemaBuilder,
    Struct,
    Type,
    date_schema,
    decimal_schema,
    timestamp_schema,
)
from omconnect.source_base.formats.avro import UNION_SCHEMA_NAME

AVRO_SCHEMA = {
    "type": "record", "name": "Order", "namespace": "com.example",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "note", "type": ["null", "string"], "default": None},
        {"name": "qty", "type": "int"},
        {"name": "ratio", "type": "float"},
        {"name": "paid", "type": "boolean"},
        {"name": "blob", "type": "bytes"},
        {"name": "status", "type": {"type": "enum", "name": "Status",
                                    "symbols": ["NEW", "DONE"]}},
        {"name": "hash", "type": {"type": "fixed", "name": "Hash", "size": 4}},
        {"name": "tags", "type": {"type": "array", "items": "string"}},
        {"name": "attrs", "type": {"type": "map", "values": "long"}},
        {"name": "address", "type": ["null", {
            "type": "record", "name": "Address",
            "fields": [{"name": "city", "type": "string"},
                       {"name": "zip", "type": ["null", "int"]}]}]},
        {"name": "previous", "type": ["null", "Address"], "default": None},
        {"name": "choice", "type": ["int", "string"]},
        {"name": "day", "type": {"type": "int", "logicalType": "date"}},
        {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "amount", "type": {"type": "bytes", "logicalType": "decimal",
                                    "precision": 10, "scale": 2}},
        {"name": "uid", "type": {"type": "string", "logicalType": "uuid"}},
    ],
}


def avro_order(i: int) -> dict[str, Any]:
    return {
        "id": i, "note": None if i % 2 else f"note {i}", "qty": i * 10, "ratio": 0.5,
        "paid": i % 2 == 0, "blob": bytes([i % 256]), "status": "NEW" if i % 2 else "DONE",
        "hash": b"\x00\x01\x02\x03", "tags": ["a", str(i)], "attrs": {"k": i},
        "address": None if i % 3 == 0 else {"city": f"c{i}", "zip": None},
        "previous": {"city": "old", "zip": 1000 + i} if i % 2 else None,
        "choice": i if i % 2 else f"s{i}",
        "day": dt.date(2024, 1, 1) + dt.timedelta(days=i),
        "at": dt.datetime(2024, 1, 1, tzinfo=dt.UTC) + dt.timedelta(seconds=i),
        "amount": decimal.Decimal(i).scaleb(-2),
        "uid": uuid.UUID(int=i),
    }


def avro_file(count: int, sync_interval: int = 16_000, codec: str = "null") -> bytes:
    out = io.BytesIO()
    fastavro.writer(out, fastavro.parse_schema(AVRO_SCHEMA),
                    (avro_order(i) for i in range(count)), sync_interval=sync_interval,
                    codec=codec)
    return out.getvalue()


def test_avro_schema_maps_to_connect() -> None:
    records = read("orders.avro", avro_file(3))
    schema = records[0].value.schema if records[0].value else None
    assert schema is not None and schema.name == "com.example.Order"
    fields = {f.name: f.schema for f in schema.fields}
    assert fields["id"].type is Type.INT64 and not fields["id"].optional
    assert fields["note"] == OPTIONAL_STRING_SCHEMA
    assert fields["qty"] == INT32_SCHEMA
    assert fields["ratio"].type is Type.FLOAT32
    assert fields["blob"] == BYTES_SCHEMA
    assert fields["status"].type is Type.STRING
    assert fields["status"].parameters == {"io.confluent.connect.avro.Enum": "com.example.Status"}
    assert fields["hash"].type is Type.BYTES
    assert fields["hash"].parameters == {"connect.fixed.size": "4"}
    assert fields["tags"] == SchemaBuilder.array(STRING_SCHEMA).build()
    assert fields["attrs"].type is Type.MAP and fields["attrs"].key_schema == STRING_SCHEMA
    address = fields["address"]
    assert address.optional and address.name == "com.example.Address"
    assert fields["previous"] == address
    assert address.field("zip").schema.optional
    choice = fields["choice"]
    assert choice.name == UNION_SCHEMA_NAME and not choice.optional
    assert [f.name for f in choice.fields] == ["int", "string"]
    assert fields["day"] == date_schema()
    assert fields["at"] == timestamp_schema()
    assert fields["amount"] == decimal_schema(2)
    assert fields["uid"] == STRING_SCHEMA


def test_avro_values_round_trip() -> None:
    values = good(read("orders.avro", avro_file(6)))
    assert len(values) == 6
    for i, value in enumerate(values):
        expected = avro_order(i)
        assert isinstance(value, Struct)
        value.validate()
        for name in ("id", "note", "qty", "ratio", "paid", "blob", "status", "hash", "tags",
                     "attrs", "day", "at", "amount"):
            assert value[name] == expected[name], name
        assert value["uid"] == str(expected["uid"])
        address = value["address"]
        if expected["address"] is None:
            assert address is None
        else:
            assert address.to_dict() == expected["address"]
        previous = value["previous"]
        assert (previous.to_dict() if previous else None) == expected["previous"]
        choice = value["choice"].to_dict()
        assert choice == ({"int": i, "string": None} if i % 2 else
                          {"int": None, "string": f"s{i}"})


@pytest.mark.parametrize("codec", ["null", "deflate"])
def test_avro_skip_crosses_blocks(codec: str) -> None:
    data = avro_file(500, sync_interval=1000, codec=codec)  # many small blocks
    assert sum(1 for _ in fastavro.block_reader(io.BytesIO(data))) > 5
    records = read("orders.avro", data, skip=321)
    assert [v["id"] for v in good(records)] == list(range(321, 500))
    assert records[0].number == 322


def test_avro_corrupt_file_yields_one_error_naming_the_record() -> None:
    data = bytearray(avro_file(200, sync_interval=1000))
    data[len(data) // 2: len(data) // 2 + 40] = b"\xff" * 40
    records = read("orders.avro", bytes(data))
    assert records[-1].error is not None
    assert all(r.error is None for r in records[:-1])
    assert records[-1].error.context["record"] == len(records)
    assert read("x.avro", b"not avro at all")[0].error is not None


def test_avro_recursive_types_are_refused_clearly() -> None:
    schema = {"type": "record", "name": "Node", "fields": [
        {"name": "value", "type": "int"}, {"name": "next", "type": ["null", "Node"]}]}
    out = io.BytesIO()
    fastavro.writer(out, fastavro.parse_schema(schema), [{"value": 1, "next": None}])
    records = read("list.avro", out.getvalue())
    assert len(records) == 1 and "recursive" in str(records[0].error)


