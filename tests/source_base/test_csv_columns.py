"""CSV read as Arrow batches (the columnar path) gives what the record reader gives: the
same rows, keys and values, every bad row reported in its place by the record reader.
"""

from __future__ import annotations

import io
from typing import Any

import pytest

pa = pytest.importorskip("pyarrow", reason="the columnar extra is not installed")

from omconnect.source_base.formats.base import KeySource, ParsedBatch  # noqa: E402
from omconnect.source_base.formats.csv import CsvFormat  # noqa: E402
from omconnect.source_base.formats.csv_columns import BLOCK_SIZE  # noqa: E402

TYPES = ["id:int64", "price:float32", "ok:boolean", "n:int8"]


def _records(fmt: CsvFormat, data: bytes, skip: int = 0) -> list[tuple[Any, ...]]:
    return [(r.key.value if r.key else None, r.value.value.to_dict() if r.value else None,
             r.error.message if r.error else None)
            for r in fmt.records(io.BytesIO(data), object_name="o.csv", skip=skip)]


def _from_batches(fmt: CsvFormat, data: bytes | io.RawIOBase, skip: int = 0
                  ) -> tuple[list[tuple[Any, ...]], list[str]]:
    stream = io.BytesIO(data) if isinstance(data, bytes) else data
    rows: list[tuple[Any, ...]] = []
    kinds = []
    for item in fmt.batches(stream, object_name="o.csv", skip=skip):
        if isinstance(item, ParsedBatch):
            kinds.append("batch")
            rows += [(row.get("key"), row["value"], None) for row in item.rows.to_pylist()]
        else:
            kinds.append("record")
            rows.append((item.key.value if item.key else None,
                         item.value.value.to_dict() if item.value else None,
                         item.error.message if item.error else None))
    return rows, kinds


@pytest.mark.parametrize(("data", "options"), [
    (b"id,name,price,ok,n\n1,a,1.5,true,-3\n2,,,0,\n3,\"c, \"\"d\"\"\",0.1,yes,127\n", {}),
    (b"\xef\xbb\xbf id , name \r\n1,x\r\n\r\n2,\"two\nlines\"\r\n", {}),
    (b"1,x\n2,y\n", {"header": False}),
    (b"1;x\n2;y\n", {"header": False, "delimiter": ";", "column_names": ["id", "name"]}),
    (b"id,name\n1,x\n", {"key_source": KeySource.FIELD, "key_field": "name"}),
    (b"id,name\n1,x\n", {"key_source": KeySource.NONE}),
], ids=["typed", "bom-crlf-blank-multiline", "no-header", "named", "field-key", "no-key"])
def test_good_objects_come_as_batches_of_the_records_rows(data, options):
    header = data.decode("utf-8-sig").splitlines()[0].split(",")
    types = [t for t in TYPES if t.split(":")[0] in {name.strip() for name in header}] \
        if options.get("header", True) else []
    fmt = CsvFormat(column_types=types, **options)
    rows, kinds = _from_batches(fmt, data)
    assert kinds == ["batch"]
    assert rows == _records(fmt, data)


@pytest.mark.parametrize("bad", [
    b"4\n",                 # a row of the wrong width
    b"+4,x\n",              # an int pyarrow does not read (Python does: 4)
    b"4,YES\n",             # a boolean only the record reader reads
    b"4,maybe\n",           # a boolean nobody reads
    b"4,\xff\n",            # not UTF-8
], ids=["width", "plus-sign", "upper-yes", "bad-boolean", "not-utf8"])
def test_from_a_row_pyarrow_refuses_the_record_reader_goes_on_in_place(bad):
    fmt = CsvFormat(column_types=["id:int64", "ok:boolean"])
    good = b"".join(b"%d,%s\n" % (i, b"true" if i % 2 else b"false")
                    for i in range(BLOCK_SIZE // 8))  # more than one block before it
    data = b"id,ok\n" + good + bad + b"9,true\n"
    rows, kinds = _from_batches(fmt, data)
    assert kinds[0] == "batch" and kinds[-1] == "record"
    assert rows == _records(fmt, data)
    if bad != b"4,\xff\n":  # (the record reader stops at bytes it cannot decode)
        assert len(rows) == BLOCK_SIZE // 8 + 2


def test_a_bad_header_is_the_record_readers_error():
    fmt = CsvFormat()
    data = b"a,a\n1,2\n"
    rows, kinds = _from_batches(fmt, data)
    assert kinds == ["record"] and "appears twice" in rows[0][2]


class _Unseekable(io.RawIOBase):
    def __init__(self, data: bytes) -> None:
        self._data = io.BytesIO(data)

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        chunk = self._data.read(len(buffer))
        buffer[:len(chunk)] = chunk
        return len(chunk)


def test_a_stream_that_cannot_seek_is_spooled_and_still_falls_back():
    fmt = CsvFormat(column_types=["id:int64"])
    data = b"id,x\n1,a\n2\n3,c\n"
    rows, _ = _from_batches(fmt, io.BufferedReader(_Unseekable(data)))
    assert rows == _records(fmt, data)


def test_resumed_objects_and_other_encodings_are_read_record_by_record():
    data = b"id,x\n1,a\n2,b\n3,c\n"
    fmt = CsvFormat(column_types=["id:int64"])
    rows, kinds = _from_batches(fmt, data, skip=2)
    assert kinds == ["record"] and rows == _records(fmt, data, skip=2)
    latin = CsvFormat(encoding="latin-1")
    assert not latin.reads_columns
    rows, kinds = _from_batches(latin, "id,x\n1,é\n".encode("latin-1"))
    assert kinds == ["record"] and rows[0][1] == {"id": "1", "x": "é"}
