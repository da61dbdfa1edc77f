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
from omconnect.source_base import KeySource, create_format, open_decompressed
from omconnect.source_base.formats import ParsedBatch

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


# -- the columnar path: batches() gives the records() rows as Arrow columns -------------

def _batches(name: str, data: bytes, skip: int = 0, **options: Any) -> list[Any]:
    stream = io.BytesIO(data)
    record_format = create_format("parquet", batch_size=options.pop("batch_size", 4096),
                                  **options)
    with open_decompressed(name, stream) as decompressed:
        return list(record_format.batches(decompressed, object_name=name, skip=skip))


def _as_records(items: list[Any]) -> list[tuple[int, Any, Any]]:
    """Each batch row, or record, as (number, key, value) the way the runtime sees it."""
    from omconnect.columnar import SourceBatch
    from omconnect.columnar.records import source_batch_to_records

    out = []
    for item in items:
        if isinstance(item, ParsedBatch):
            rows = source_batch_to_records(SourceBatch(
                topic="t", records=item.rows, key_schema=item.key_schema,
                value_schema=item.value_schema))
            for offset, row in enumerate(rows):
                out.append((item.number + offset, (row.key_schema, row.key),
                            (row.value_schema, row.value)))
        else:
            assert item.error is None
            out.append((item.number, (item.key.schema, item.key.value) if item.key else
                        (None, None), (item.value.schema, item.value.value)))
    return out


@pytest.mark.parametrize(("key_source", "key_field"), [
    (KeySource.OBJECT, None), (KeySource.FIELD, "name"), (KeySource.NONE, None)])
@pytest.mark.parametrize("skip", [0, 6])
def test_parquet_batches_give_the_records_rows_as_columns(key_source, key_field, skip) -> None:
    data = parquet_file(25, 4)
    options = {"key_source": key_source, "key_field": key_field}
    items = _batches("t.parquet", data, skip, batch_size=3, **options)
    assert items and all(isinstance(item, ParsedBatch) for item in items)
    assert sum(item.num_rows for item in items) == 25 - skip
    records = read("t.parquet", data, skip=skip, **options)
    assert _as_records(items) == _as_records(records)


def test_parquet_batches_from_a_compressed_stream_skip_into_a_row_group() -> None:
    items = _batches("t.parquet.gz", gzip.compress(parquet_file(25, 4)), skip=5)
    assert items[0].number == 6
    assert [row["id"] for item in items for row in item.rows.column("value").to_pylist()] == \
        list(range(5, 25))


def test_parquet_with_uint64_is_read_record_by_record_on_the_columnar_path() -> None:
    out = io.BytesIO()
    pq.write_table(pa.table({"n": pa.array([1, 2, 2**64 - 1, 4], pa.uint64())}), out)
    items = _batches("u.parquet", out.getvalue())
    assert not any(isinstance(item, ParsedBatch) for item in items)
    assert [item.value.value["n"] for item in items[:2]] == [1, 2]
    assert items[2].error is not None and items[2].error.context["record"] == 3


def test_parquet_batches_of_a_broken_file_are_one_error_item() -> None:
    items = _batches("x.parquet", b"PAR1 nope")
    assert len(items) == 1 and "not a Parquet file" in str(items[0].error)
