"""The Parquet record format over files written with pyarrow, several row groups each."""

from __future__ import annotations

import datetime as dt
import decimal
import gzip
import io
from typing import Any

import pytest
from source_helpers import good, read

from omconnect.data import (
    OPTIONAL_INT64_SCHEMA,
    OPTIONAL_STRING_SCHEMA,
    Type,
    date_schema,
    decimal_schema,
    timestamp_schema,
)
from omconnect.source_base import KeySource

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")


def parquet_table(rows: int) -> Any:
    ts = [dt.datetime(2024, 1, 1, tzinfo=dt.UTC) + dt.timedelta(seconds=i) for i in range(rows)]
    return pa.table({
        "id": pa.array(range(rows), pa.int64()),
        "small": pa.array([i % 100 for i in range(rows)], pa.uint8()),
        "name": pa.array([None if i % 5 == 0 else f"n{i}" for i in range(rows)]),
        "score": pa.array([i / 4 for i in range(rows)], pa.float64()),
        "ok": pa.array([i % 2 == 0 for i in range(rows)]),
        "at": pa.array(ts, pa.timestamp("ns", tz="UTC")),
        "day": pa.array([dt.date(2024, 1, 1)] * rows, pa.date32()),
        "price": pa.array([decimal.Decimal(i).scaleb(-2) for i in range(rows)],
                          pa.decimal128(10, 2)),
        "tags": pa.array([[i, i + 1] for i in range(rows)], pa.list_(pa.int32())),
        "attrs": pa.array([[("k", i)] for i in range(rows)], pa.map_(pa.string(), pa.int64())),
        "point": pa.array([{"x": i, "y": None} for i in range(rows)],
                          pa.struct([("x", pa.int32()), ("y", pa.string())])),
        "color": pa.array([("red", "blue")[i % 2] for i in range(rows)]).dictionary_encode(),
    })


def parquet_file(rows: int, row_group_size: int) -> bytes:
    out = io.BytesIO()
    pq.write_table(parquet_table(rows), out, row_group_size=row_group_size)
    return out.getvalue()


def test_parquet_schema_maps_to_connect() -> None:
    records = read("t.parquet", parquet_file(10, 4))
    schema = records[0].value.schema if records[0].value else None
    assert schema is not None
    fields = {f.name: f.schema for f in schema.fields}
    assert fields["id"] == OPTIONAL_INT64_SCHEMA
    assert fields["small"].type is Type.INT16
    assert fields["name"] == OPTIONAL_STRING_SCHEMA
    assert fields["at"] == timestamp_schema(optional=True)
    assert fields["day"] == date_schema(optional=True)
    assert fields["price"] == decimal_schema(2, optional=True)
    assert fields["tags"].type is Type.ARRAY and fields["tags"].value_schema.type is Type.INT32
    assert fields["attrs"].type is Type.MAP
    assert [f.name for f in fields["point"].fields] == ["x", "y"]
    assert fields["color"] == OPTIONAL_STRING_SCHEMA


def test_parquet_values_round_trip_over_several_row_groups() -> None:
    data = parquet_file(25, 4)
    assert pq.ParquetFile(io.BytesIO(data)).metadata.num_row_groups == 7
    records = read("t.parquet", data)
    values = good(records)
    assert [r.number for r in records] == list(range(1, 26))
    expected = parquet_table(25).to_pylist()
    for value, row in zip(values, expected, strict=True):
        value.validate()
        got = value.to_dict()
        assert got["attrs"] == dict(row.pop("attrs"))
        assert got["point"] == row.pop("point")
        for name, cell in row.items():
            assert got[name] == cell, name


def test_parquet_skip_passes_over_row_groups_and_into_one() -> None:
    records = read("t.parquet", parquet_file(25, 4), skip=10)
    assert [v["id"] for v in good(records)] == list(range(10, 25))
    assert records[0].number == 11


def test_parquet_from_a_non_seekable_compressed_stream() -> None:
    data = gzip.compress(parquet_file(25, 4))
    records = read("t.parquet.gz", data, skip=3)
    assert [v["id"] for v in good(records)] == list(range(3, 25))


def test_parquet_out_of_range_uint64_is_an_error_item_at_its_row() -> None:
    out = io.BytesIO()
    pq.write_table(pa.table({"n": pa.array([1, 2, 2**64 - 1, 4], pa.uint64())}), out)
    records = read("u.parquet", out.getvalue())
    assert [v["n"] for v in good(records[:2])] == [1, 2]
    assert records[2].error is not None and records[2].error.context["record"] == 3
    assert len(records) == 3


def test_parquet_not_a_parquet_file() -> None:
    records = read("x.parquet", b"PAR1 nope")
    assert len(records) == 1 and "not a Parquet file" in str(records[0].error)


def test_parquet_key_from_a_field() -> None:
    records = read("t.parquet", parquet_file(3, 2), key_source=KeySource.FIELD, key_field="id")
    assert [r.key.value for r in records if r.key] == [0, 1, 2]
    bad = read("t.parquet", parquet_file(3, 2), key_source=KeySource.FIELD, key_field="zz")
    assert len(bad) == 1 and "record.key.field 'zz' is not a field" in str(bad[0].error)
