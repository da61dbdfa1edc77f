"""Record formats over real files: JSON lines, CSV, Avro, Parquet and raw bytes."""

from __future__ import annotations

import bz2
import gzip
import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from source_helpers import good, read

from omconnect.data import (
    BYTES_SCHEMA,
    OPTIONAL_INT64_SCHEMA,
    OPTIONAL_STRING_SCHEMA,
    STRING_SCHEMA,
    Schema,
    Type,
)
from omconnect.errors import ConfigError, DataError, MissingExtraError
from omconnect.source_base import (
    KeySource,
    SourceCommonConfig,
    create_format,
    open_decompressed,
)

# -- JSON lines -------------------------------------------------------------------------

JSONL = b'{"id": 1, "name": "a"}\n{"id": 2, "name": "b"}\n\n{"id": 3, "name": "c"}\n'


def test_jsonl_values_are_schemaless_and_keyed_by_object_name() -> None:
    records = read("in.jsonl", JSONL)
    assert good(records) == [{"id": 1, "name": "a"}, {"id": 2, "name": "b"},
                             {"id": 3, "name": "c"}]
    assert [r.number for r in records] == [1, 2, 4]  # line numbers: line 3 is blank
    assert {(r.key.schema, r.key.value) for r in records if r.key} == {(STRING_SCHEMA, "in.jsonl")}
    assert all(r.value is not None and r.value.schema is None for r in records)


def test_jsonl_skip_resumes_after_the_nth_record() -> None:
    records = read("in.jsonl", JSONL, skip=2)
    assert good(records) == [{"id": 3, "name": "c"}]
    assert records[0].number == 4


def test_jsonl_malformed_line_is_an_error_item_naming_its_line_and_reading_goes_on() -> None:
    data = b'{"id": 1}\n{"id": 2,,}\n{"id": 3}\n'
    records = read("bad.jsonl", data)
    assert [r.number for r in records] == [1, 2, 3]
    error = records[1].error
    assert isinstance(error, DataError)
    assert error.context == {"object": "bad.jsonl", "line": 2}
    assert "line=2" in str(error) and "bad.jsonl" in str(error)
    assert records[2].value is not None and records[2].value.value == {"id": 3}
    # The bad line counts as a record: skipping 2 resumes at line 3.
    assert [r.number for r in read("bad.jsonl", data, skip=2)] == [3]


@pytest.mark.parametrize("encoding", ["utf-8-sig", "latin-1", "utf-16"])
def test_jsonl_encodings(encoding: str) -> None:
    text = '{"name": "café"}\n{"name": "naïve"}\n'
    records = read("in.jsonl", text.encode(encoding), encoding=encoding)
    assert good(records) == [{"name": "café"}, {"name": "naïve"}]
    assert [r.number for r in records] == [1, 2]


def test_jsonl_invalid_utf8_is_an_error_item() -> None:
    records = read("in.jsonl", b'{"a": 1}\n{"a": "\xff"}\n{"a": 3}\n')
    assert [r.error is None for r in records] == [True, False, True]
    assert "not valid utf-8" in str(records[1].error)


def test_jsonl_key_from_a_field() -> None:
    records = read("in.jsonl", b'{"id": 7, "v": 1}\n{"v": 2}\n', key_source=KeySource.FIELD,
                   key_field="id")
    assert records[0].key is not None and records[0].key.value == 7
    assert records[1].error is not None and "no field 'id'" in str(records[1].error)


@pytest.mark.parametrize("suffix", [".gz", ".bz2", ".zst"])
def test_compressed_objects_are_decompressed_by_extension(suffix: str) -> None:
    if suffix == ".gz":
        data = gzip.compress(JSONL)
    elif suffix == ".bz2":
        data = bz2.compress(JSONL)
    else:
        zstandard = pytest.importorskip("zstandard")
        data = zstandard.ZstdCompressor().compress(JSONL)
    assert len(good(read("in.jsonl" + suffix, data))) == 3
    assert len(good(read("in.jsonl" + suffix, data, skip=1))) == 2


def test_a_big_object_streams_without_being_read_whole() -> None:
    class CountingReader(io.RawIOBase):
        def __init__(self, lines: int) -> None:
            self.remaining = lines
            self.max_read = 0

        def readable(self) -> bool:
            return True

        def readinto(self, buffer: Any) -> int:
            self.max_read = max(self.max_read, len(buffer))
            line = b'{"n": 1}\n'
            count = min(len(buffer) // len(line), self.remaining)
            buffer[: count * len(line)] = line * count
            self.remaining -= count
            return count * len(line)

    raw = CountingReader(200_000)  # 1.8 MB
    records = create_format("jsonl").records(io.BufferedReader(raw), object_name="big")
    first = next(records)
    assert first.value is not None and first.value.value == {"n": 1}
    assert raw.remaining > 190_000  # only a buffer's worth was read for the first record
    assert sum(1 for _ in records) == 199_999


def test_unknown_compression_and_format_name_their_keys() -> None:
    with pytest.raises(ConfigError, match=r"file.compression.type"):
        open_decompressed("x", io.BytesIO(b""), "lz4")
    with pytest.raises(ConfigError, match=r"unknown input.format 'xml'"):
        create_format("xml")


# -- CSV --------------------------------------------------------------------------------

CSV = (b'id,name,price,active\n'
       b'1,apple,0.5,true\n'
       b'2,"multi\nline",,false\n'
       b'3,cherry,2.25,\n')


def test_csv_header_becomes_a_struct_of_optional_strings() -> None:
    records = read("fruit.csv", CSV)
    schema = records[0].value.schema if records[0].value else None
    assert schema is not None and schema.type is Type.STRUCT
    assert [(f.name, f.schema) for f in schema.fields] == [
        (n, OPTIONAL_STRING_SCHEMA) for n in ("id", "name", "price", "active")]
    rows = [v.to_dict() for v in good(records)]
    assert rows == [
        {"id": "1", "name": "apple", "price": "0.5", "active": "true"},
        {"id": "2", "name": "multi\nline", "price": "", "active": "false"},
        {"id": "3", "name": "cherry", "price": "2.25", "active": ""},
    ]
    assert [r.number for r in records] == [2, 3, 5]  # the line each record starts on


def test_csv_typed_columns() -> None:
    records = read("fruit.csv", CSV, column_types=["id:int64", "price:float64",
                                                     "active:boolean"])
    schema = records[0].value.schema if records[0].value else None
    assert schema is not None
    assert schema.field("id").schema == OPTIONAL_INT64_SCHEMA
    assert schema.field("price").schema.type is Type.FLOAT64
    assert [v.to_dict() for v in good(records)] == [
        {"id": 1, "name": "apple", "price": 0.5, "active": True},
        {"id": 2, "name": "multi\nline", "price": None, "active": False},
        {"id": 3, "name": "cherry", "price": 2.25, "active": None},
    ]


def test_csv_bad_rows_are_error_items_naming_line_and_column() -> None:
    data = b"id,name\n1,a\nx,b\n3\n4,d\n"
    records = read("t.csv", data, column_types=["id:int32"])
    assert [(r.number, r.error is None) for r in records] == [
        (2, True), (3, False), (4, False), (5, True)]
    assert "column 'id'" in str(records[1].error) and "line=3" in str(records[1].error)
    assert "1 fields where the header has 2" in str(records[2].error)
    assert [r.number for r in read("t.csv", data, skip=2, column_types=["id:int32"])] == [4, 5]


@pytest.mark.parametrize("encoding", ["utf-8", "utf-16"])
def test_csv_a_row_that_does_not_decode_is_an_error_item_and_every_other_row_is_read(
        encoding: str) -> None:
    # 2,000 rows span several of the text reader's 8 KiB decode chunks; the bad byte
    # sits in the middle of one, with good rows before and after it in the same chunk.
    lines = ["id,name"] + [f"{n},name-{n:05d}" for n in range(2000)]
    data = "\n".join(lines).encode(encoding) + "\n".encode(encoding)
    plain = "utf-16-le" if encoding == "utf-16" else encoding  # no BOM in the middle
    bad_at = data.index("name-01000".encode(plain))
    bad = b"\x00\xdc" if encoding == "utf-16" else b"\xff\xfe"  # utf-16: a lone surrogate
    data = data[:bad_at] + bad + data[bad_at + 2:]
    records = read("t.csv", data, encoding=encoding)
    failures = [r for r in records if r.error is not None]
    assert [r.number for r in failures] == [1002]  # the header is line 1
    assert "not valid" in str(failures[0].error)
    assert f"0x{bad[0]:02x}" in str(failures[0].error)
    ids = [r.value.value.to_dict()["id"] for r in records if r.error is None]
    assert ids == [str(n) for n in range(2000) if n != 1000]


def test_csv_a_first_row_that_does_not_decode_ends_the_object_with_an_error() -> None:
    records = read("t.csv", b"id,n\xffame\n1,a\n")
    assert [(r.number, r.error is not None) for r in records] == [(1, True)]
    assert "first row" in str(records[0].error)


def test_jsonl_a_line_that_does_not_decode_in_utf16_is_an_error_item() -> None:
    text = "".join(f'{{"n": {n}}}\n' for n in range(2000))
    data = text.encode("utf-16")
    bad_at = data.index('{"n": 1000}'.encode("utf-16-le"))
    data = data[:bad_at] + b"\x00\xdc" + data[bad_at + 2:]  # a lone low surrogate
    records = read("in.jsonl", data, encoding="utf-16")
    assert [r.number for r in records if r.error is not None] == [1001]
    assert [r.value.value["n"] for r in records if r.error is None] == [
        n for n in range(2000) if n != 1000]


def test_csv_skip_and_no_header_mode() -> None:
    data = b"1,a\n2,b\n3,c\n"
    records = read("t.csv", data, header=False, skip=1)
    assert [v.to_dict() for v in good(records)] == [
        {"column1": "2", "column2": "b"}, {"column1": "3", "column2": "c"}]
    named = read("t.csv", data, header=False, column_names=["n", "letter"])
    assert good(named)[0].to_dict() == {"n": "1", "letter": "a"}


def test_csv_configuration_errors_name_their_keys() -> None:
    with pytest.raises(ConfigError, match=r"csv.column.types"):
        create_format("csv", column_types=["id:uuid"])
    with pytest.raises(ConfigError, match=r"csv.delimiter"):
        create_format("csv", delimiter=";;")
    with pytest.raises(ConfigError, match=r"record.key.field"):
        create_format("csv", key_source=KeySource.FIELD)
    records = read("t.csv", b"id,id\n1,2\n")
    assert len(records) == 1 and "appears twice" in str(records[0].error)


def test_csv_key_from_a_typed_field() -> None:
    records = read("fruit.csv", CSV, column_types=["id:int64"], key_source=KeySource.FIELD,
                   key_field="id")
    assert [(r.key.schema, r.key.value) for r in records if r.key] == [
        (OPTIONAL_INT64_SCHEMA, 1), (OPTIONAL_INT64_SCHEMA, 2), (OPTIONAL_INT64_SCHEMA, 3)]


# -- bytes ------------------------------------------------------------------------------

def test_bytes_chunks_and_skip() -> None:
    data = bytes(range(256)) * 10  # 2560 bytes
    records = read("blob.bin", data, fmt="bytes", chunk_size=1000)
    chunks = good(records)
    assert [len(c) for c in chunks] == [1000, 1000, 560]
    assert b"".join(chunks) == data
    assert all(r.value is not None and r.value.schema == BYTES_SCHEMA for r in records)
    skipped = read("blob.bin", data, fmt="bytes", chunk_size=1000, skip=2)
    assert [(r.number, len(r.value.value)) for r in skipped if r.value] == [(3, 560)]
    gz = read("blob.bin.gz", gzip.compress(data), fmt="bytes", chunk_size=1000, skip=1)
    assert b"".join(good(gz)) == data[1000:]
    assert read("empty.bin", b"", fmt="bytes") == []


def test_bytes_has_no_fields_for_a_key() -> None:
    with pytest.raises(ConfigError, match=r"record.key"):
        create_format("bytes", key_source=KeySource.FIELD, key_field="x")


def test_parquet_without_pyarrow_names_the_extra_at_configuration(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    with pytest.raises(MissingExtraError, match=r"omconnect\[parquet\]"):
        create_format("parquet")
    with pytest.raises(MissingExtraError, match=r"omconnect\[parquet\]"):
        SourceCommonConfig.from_config({"input.format": "parquet"})


def test_zstd_without_zstandard_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "zstandard", None)
    with pytest.raises(MissingExtraError, match=r"omconnect\[objectstore\]"):
        open_decompressed("a.jsonl.zst", io.BytesIO(b""))


def test_files_on_disk(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl.gz"
    with gzip.open(path, "wt") as out:
        for i in range(1000):
            out.write(json.dumps({"i": i}) + "\n")
    with path.open("rb") as raw, open_decompressed(path.name, raw) as stream:
        records = list(create_format("jsonl").records(stream, object_name=path.name,
                                                           skip=990))
    assert [r.value.value["i"] for r in records if r.value] == list(range(990, 1000))


def test_schemas_are_shared_between_records_of_one_file() -> None:
    records = read("fruit.csv", CSV)
    schemas: set[int] = {id(r.value.schema) for r in records if r.value}
    assert len(schemas) == 1
    assert isinstance(records[0].value.schema if records[0].value else None, Schema)
