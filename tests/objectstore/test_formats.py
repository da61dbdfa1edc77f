"""Each input format, read from a local directory through the task, becomes records with
the right schema, key, topic and offsets.
"""

from __future__ import annotations

import gzip
import io
import json

import fastavro
import pytest
import zstandard
from objectstore_helpers import config, drain, start_task, write_jsonl

from omconnect.data import INT64_SCHEMA, STRING_SCHEMA, Struct, Type
from omconnect.records import SourceRecord


def _read_all(directory, count: int, **settings) -> list[SourceRecord]:
    task = start_task(config(directory, **settings))
    try:
        return drain(task, expect=count)
    finally:
        task.stop()


def test_json_lines_are_schemaless_values_keyed_by_object_with_their_offsets(tmp_path):
    rows = [{"id": i, "name": f"n{i}", "tags": ["a", i]} for i in range(5)]
    write_jsonl(tmp_path / "in" / "a.jsonl", rows)
    records = _read_all(tmp_path / "in", 5, input_format="jsonl")
    assert [r.value for r in records] == rows
    assert {r.value_schema for r in records} == {None}
    assert {(r.key_schema, r.key) for r in records} == {(STRING_SCHEMA, "a.jsonl")}
    assert {r.topic for r in records} == {"out"}
    location = (tmp_path / "in").as_uri()
    assert {json.dumps(r.source_partition, sort_keys=True) for r in records} == {
        json.dumps({"object": "a.jsonl", "url": location}, sort_keys=True)}
    offsets = [r.source_offset for r in records]
    assert [o["records"] for o in offsets] == [1, 2, 3, 4, 5]
    assert [o["done"] for o in offsets] == [False] * 4 + [True]
    size = (tmp_path / "in" / "a.jsonl").stat().st_size
    assert {o["size"] for o in offsets} == {size}
    assert {o["version"] for o in offsets} == {str((tmp_path / "in" / "a.jsonl").stat().st_ino)}
    # offsets survive a JSON round trip unchanged (what the runtime stores)
    assert [json.loads(json.dumps(o)) for o in offsets] == offsets


def test_csv_header_row_becomes_a_struct_schema_with_typed_columns(tmp_path):
    (tmp_path / "orders.csv").write_text("id,customer,price\n1,ada,9.5\n2,bob,\n")
    records = _read_all(tmp_path, 2, input_format="csv",
                        csv_column_types="id:int64,price:float64")
    schema = records[0].value_schema
    assert schema.type is Type.STRUCT
    assert [(f.name, f.schema.type, f.schema.optional) for f in schema.fields] == [
        ("id", Type.INT64, True), ("customer", Type.STRING, True),
        ("price", Type.FLOAT64, True)]
    assert all(isinstance(r.value, Struct) and r.value.schema == schema for r in records)
    assert [(r.value.get("id"), r.value.get("customer"), r.value.get("price"))
            for r in records] == [(1, "ada", 9.5), (2, "bob", None)]


def test_avro_container_file_records_keep_the_writer_schema(tmp_path):
    schema = {"type": "record", "name": "Order", "namespace": "shop", "fields": [
        {"name": "id", "type": "long"}, {"name": "note", "type": ["null", "string"]}]}
    buffer = io.BytesIO()
    fastavro.writer(buffer, schema, [{"id": i, "note": None if i % 2 else f"n{i}"}
                                     for i in range(300)], sync_interval=100)
    (tmp_path / "orders.avro").write_bytes(buffer.getvalue())
    records = _read_all(tmp_path, 300, input_format="avro")
    value_schema = records[0].value_schema
    assert value_schema.name == "shop.Order"
    assert [(f.name, f.schema.type, f.schema.optional) for f in value_schema.fields] == [
        ("id", Type.INT64, False), ("note", Type.STRING, True)]
    assert [r.value.get("id") for r in records] == list(range(300))
    assert records[2].value.get("note") == "n2" and records[1].value.get("note") is None


def test_parquet_rows_become_structs_from_the_arrow_schema(tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    table = pa.table({"id": pa.array(range(50), pa.int64()),
                      "city": pa.array([f"c{i}" for i in range(50)], pa.string())})
    pq.write_table(table, tmp_path / "cities.parquet", row_group_size=20)
    records = _read_all(tmp_path, 50, input_format="parquet")
    schema = records[0].value_schema
    assert [(f.name, f.schema.type) for f in schema.fields] == [
        ("id", Type.INT64), ("city", Type.STRING)]
    assert [(r.value.get("id"), r.value.get("city")) for r in records] == [
        (i, f"c{i}") for i in range(50)]
    assert records[-1].source_offset["done"] is True


def test_bytes_format_streams_chunks_that_reassemble_the_object(tmp_path):
    data = bytes(range(256)) * 40
    (tmp_path / "blob.bin").write_bytes(data)
    records = _read_all(tmp_path, 11, input_format="bytes", bytes_chunk_size=1000)
    assert {r.value_schema.type for r in records} == {Type.BYTES}
    assert b"".join(r.value for r in records) == data


def test_compressed_objects_are_decompressed_by_extension(tmp_path):
    lines = "".join(json.dumps({"n": i}) + "\n" for i in range(10)).encode()
    (tmp_path / "a.jsonl.gz").write_bytes(gzip.compress(lines))
    (tmp_path / "b.jsonl.zst").write_bytes(zstandard.ZstdCompressor().compress(lines))
    records = _read_all(tmp_path, 20, input_format="jsonl", topic="t-{stem}")
    by_object: dict[str, list[int]] = {}
    for record in records:
        by_object.setdefault(record.key, []).append(record.value["n"])
    assert by_object == {"a.jsonl.gz": list(range(10)), "b.jsonl.zst": list(range(10))}
    assert {r.key: r.topic for r in records} == {"a.jsonl.gz": "t-a", "b.jsonl.zst": "t-b"}


def test_topic_template_uses_groups_of_the_name_pattern(tmp_path):
    write_jsonl(tmp_path / "sales" / "2024-01.jsonl", [{"n": 1}])
    write_jsonl(tmp_path / "stock" / "2024-01.jsonl", [{"n": 2}])
    records = _read_all(tmp_path, 2, input_format="jsonl", topic="raw-{table}",
                        file_name_pattern=r"^(?P<table>\w+)/")
    assert sorted((r.topic, r.value["n"]) for r in records) == [
        ("raw-sales", 1), ("raw-stock", 2)]


def test_record_headers_name_the_object_and_line(tmp_path):
    (tmp_path / "a.jsonl").write_text('{"n": 1}\n\n{"n": 2}\n')
    records = _read_all(tmp_path, 2, input_format="jsonl", objectstore_record_headers="true")
    assert [[(h.key, h.value) for h in r.headers] for r in records] == [
        [("objectstore.object", "a.jsonl"), ("objectstore.line", 1)],
        [("objectstore.object", "a.jsonl"), ("objectstore.line", 3)]]
    assert records[0].headers[1].schema == INT64_SCHEMA


def test_glob_and_recursion_choose_the_objects(tmp_path):
    for name in ("a.csv", "b.txt", "sub/c.csv", "sub/deeper/d.csv"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x\n1\n")
    def names(**settings) -> list[str]:
        task = start_task(config(tmp_path, input_format="csv", **settings))
        try:
            return sorted(r.key for r in drain(task))
        finally:
            task.stop()
    assert names(objectstore_name_glob="*.csv") == ["a.csv", "sub/c.csv", "sub/deeper/d.csv"]
    assert names(objectstore_name_glob="sub/*.csv") == ["sub/c.csv"]
    assert names(objectstore_name_glob="**/d.csv") == ["sub/deeper/d.csv"]
    assert names(objectstore_name_glob="*.csv", objectstore_recursive="false") == ["a.csv"]
