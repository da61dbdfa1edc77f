"""The object-store source on the columnar path: Parquet objects handed over as Arrow
batches (``poll_batch``) give the records ``poll`` gives, with each batch's offset the
last of its records'; formats without a column reader, and per-record headers, come as
records between the batches; through a worker both paths write the same topic, flat rows
as columns all the way through the JSON converter.
"""

from __future__ import annotations

import datetime as dt
import decimal
import time
from pathlib import Path
from typing import Any

import pytest
from objectstore_helpers import config, drain, start_task

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

from omconnect.columnar import SourceBatch  # noqa: E402
from omconnect.columnar.records import source_batch_to_records  # noqa: E402
from omconnect.records import SourceRecord, TopicPartition  # noqa: E402
from omconnect.runtime import StandaloneHerder  # noqa: E402
from omconnect.transport.memory import MemoryTransport  # noqa: E402

ROWS = 250


def _write(directory: Path, objects: int = 2, extra: str = "") -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for n in range(objects):
        columns = {"id": pa.array(range(n * ROWS, (n + 1) * ROWS), pa.int64()),
                   "city": pa.array([f"c{i % 7}" for i in range(ROWS)]),
                   "score": pa.array([i / 8 for i in range(ROWS)], pa.float64())}
        if extra == "date":
            columns["day"] = pa.array([dt.date(2024, 1, 1 + i % 28) for i in range(ROWS)])
        elif extra == "decimal":
            columns["price"] = pa.array([decimal.Decimal(i) / 100 for i in range(ROWS)],
                                        pa.decimal128(9, 2))
        elif extra == "list":
            columns["tags"] = pa.array([[f"t{i % 3}"] * (i % 3) for i in range(ROWS)])
        table = pa.table(columns)
        pq.write_table(table, directory / f"part-{n}.parquet", row_group_size=100)


def _poll_batches(settings: dict[str, Any], rows: int) -> list[Any]:
    task = start_task(settings)
    items: list[Any] = []
    got = 0
    deadline = time.monotonic() + 30
    try:
        while got < rows:
            assert time.monotonic() < deadline, f"{got} of {rows} rows"
            for item in task.poll_batch() or []:
                items.append(item)
                got += len(item) if isinstance(item, SourceBatch) else 1
    finally:
        task.stop()
    return items


def _fields(record: SourceRecord) -> tuple[Any, ...]:
    return (record.topic, record.key_schema, record.key, record.value_schema, record.value,
            dict(record.source_partition))


def test_parquet_batches_give_the_records_poll_gives_with_the_batch_end_as_offset(tmp_path):
    _write(tmp_path / "in")
    settings = config(tmp_path / "in", input_format="parquet", parquet_batch_size=40,
                      max_poll_records=1000)
    items = _poll_batches(settings, 2 * ROWS)
    assert items and all(isinstance(item, SourceBatch) for item in items)
    assert max(len(item) for item in items) == 40
    task = start_task(settings)
    try:
        records = drain(task, expect=2 * ROWS)
    finally:
        task.stop()
    from_batches = [record for item in items for record in source_batch_to_records(item)]
    assert [_fields(r) for r in from_batches] == [_fields(r) for r in records]
    ends = {}  # each batch's offset is that of its last record
    for record in records:
        ends[(record.source_partition["object"], record.source_offset["records"])] = \
            record.source_offset
    for item in items:
        offset = dict(item.source_offset)
        assert offset == ends[(item.source_partition["object"], offset["records"])]
    assert [dict(i.source_offset)["done"] for i in items].count(True) == 2


def test_other_formats_and_per_record_headers_come_as_records(tmp_path):
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.jsonl").write_text("".join(f'{{"n": {i}}}\n' for i in range(5)))
    items = _poll_batches(config(tmp_path / "in", input_format="jsonl"), 5)
    assert [type(item) for item in items] == [SourceRecord] * 5
    _write(tmp_path / "pq", objects=1)
    items = _poll_batches(config(tmp_path / "pq", input_format="parquet",
                                 objectstore_record_headers="true"), ROWS)
    assert {type(item) for item in items} == {SourceRecord}
    assert items[0].headers.last("objectstore.record").value == 1


def test_a_corrupt_parquet_object_is_an_errant_record_after_the_good_ones(tmp_path):
    _write(tmp_path / "in", objects=1)
    (tmp_path / "in" / "part-9.parquet").write_bytes(b"PAR1 not parquet")
    items = _poll_batches(config(tmp_path / "in", input_format="parquet",
                                 errors_tolerance="all"), ROWS + 1)
    assert [type(item).__name__ for item in items][-1] == "ErrantSourceRecord"
    assert "not a Parquet file" in str(items[-1].error)


def _run(tmp_path: Path, columnar: bool,
         reading: dict[str, str] | None = None) -> tuple[list[tuple[bytes, bytes]], Any]:
    namespace = f"objects-{columnar}-{time.monotonic_ns()}"
    worker = {"transport": "memory", "memory.namespace": namespace,
              "offset.flush.interval.ms": 50, "columnar.enable": columnar,
              "key.converter": "string", "value.converter": "json",
              "value.converter.schemas.enable": "false"}
    try:
        with StandaloneHerder(worker) as herder:
            herder.create_connector({
                "name": "objects", "connector.class": "objectstore-source",
                "objectstore.url": str(tmp_path / "in"), "topic": "rows",
                "objectstore.list.interval.ms": "0",
                **(reading or {"input.format": "parquet", "parquet.batch.size": "64"})})
            deadline = time.monotonic() + 30
            while not (herder.offsets("objects").offsets and all(
                    o["offset"].get("done") and o["offset"]["records"] == ROWS
                    for o in herder.offsets("objects").offsets)
                    and len(herder.offsets("objects").offsets) == 2):
                assert time.monotonic() < deadline, herder.offsets("objects").offsets
                time.sleep(0.02)
            metrics = next(m for m in herder.metrics() if m.connector == "objects")
        transport = MemoryTransport({"namespace": namespace})
        consumer = transport.consumer()
        consumer.assign([TopicPartition("rows", 0)])
        consumer.seek(TopicPartition("rows", 0), 0)
        messages = []
        while batch := consumer.poll(10_000, 0.1):
            messages += [(m.key, m.value) for m in batch]
        consumer.close()
        return messages, metrics
    finally:
        MemoryTransport.reset(namespace)


@pytest.mark.parametrize("extra", ["", "date", "decimal", "list"],
                         ids=["flat", "with-a-date", "with-a-decimal", "with-a-list"])
def test_through_a_worker_both_paths_write_the_same_topic(tmp_path, extra):
    _write(tmp_path / "in", extra=extra)
    columnar, batch_metrics = _run(tmp_path, columnar=True)
    per_record, record_metrics = _run(tmp_path, columnar=False)
    assert len(columnar) == 2 * ROWS
    assert columnar == per_record
    assert record_metrics.columnar == record_metrics.columnar_fallback == 0
    if extra == "list":  # JSON has no column form for arrays: rows per record
        assert batch_metrics.columnar_fallback == 2 * ROWS
    else:  # JSON's struct column form (dates, decimals): no record to the transport
        assert batch_metrics.columnar == 2 * ROWS and batch_metrics.columnar_fallback == 0


def _write_csv(directory: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for n in range(2):
        lines = ["id, city ,score,ok,note"]
        lines += [f"{n * ROWS + i},c{i % 7},{i / 8 if i % 5 else ''},"
                  f"{('true', 'false', '1')[i % 3]},"
                  + ('"quoted, with ""marks"""' if i % 11 == 0 else "" if i % 4 else f"n{i}")
                  for i in range(ROWS)]
        (directory / f"part-{n}.csv").write_text("\n".join(lines) + "\n")


def test_csv_objects_come_as_batches_and_write_what_records_write(tmp_path):
    _write_csv(tmp_path / "in")
    reading = {"input.format": "csv", "csv.column.types": "id:int64,score:float32,ok:boolean"}
    items = _poll_batches(config(tmp_path / "in", input_format="csv",
                                 csv_column_types="id:int64,score:float32,ok:boolean",
                                 max_poll_records=1000), 2 * ROWS)
    assert items and all(isinstance(item, SourceBatch) for item in items)
    columnar, batch_metrics = _run(tmp_path, columnar=True, reading=reading)
    per_record, _ = _run(tmp_path, columnar=False, reading=reading)
    assert len(columnar) == 2 * ROWS
    assert columnar == per_record
    assert batch_metrics.columnar == 2 * ROWS and batch_metrics.columnar_fallback == 0
    assert b'"note":"quoted, with \\"marks\\""' in columnar[0][1]
