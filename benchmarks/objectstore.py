"""Throughput of the object-store source: JSON lines, CSV or Parquet objects in a local
directory.

Writes ``--records`` records (8 fields each; as JSON lines about 150 bytes a line, with
``--format csv`` as CSV with a header row (``id``, ``quantity`` and ``price`` typed by
``csv.column.types``), or with ``--format parquet`` as Parquet files of 10,000-row
groups) spread evenly over
``--objects`` objects in a temporary directory, then measures:

* ``task_poll``: an ``ObjectStoreSourceTask`` polled in a loop until it returned every
  record: listing, offsets, opening each object, the JSON lines format and the
  per-record offset entry, as a worker's task thread runs them (nothing sent). Best of
  ``--repeat`` runs, each with a new task and empty offsets.
* ``runtime`` (``--runtime``): the connector in a worker (``StandaloneHerder``) on the
  embedded transport, JSON converter without schemas: poll, convert, send, acknowledge,
  commit offsets; the clock runs from creating the connector until the transport
  acknowledged every record. One run. With ``--format parquet`` or ``csv`` twice: on the
  columnar path (the task hands over Arrow batches, JSON writes them as columns) and with
  ``columnar.enable=false`` (records from the task on).
* ``task_poll_batch`` (``--format parquet`` or ``csv``): the same loop calling
  ``poll_batch``, counting rows.

Rates are records per second of wall time and, for ``task_poll``, of this process's CPU
time too (the machine is shared; the load average at the end says how busy it was).
The last line is one JSON object with the figures.

Usage: python benchmarks/objectstore.py [--records N] [--objects N] [--repeat N]
    [--format jsonl|csv|parquet] [--runtime]
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import tempfile
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from omconnect_objectstore.source import ObjectStoreSourceTask

from omconnect.connector import OffsetStorageReader, SourceTaskContext


def row(i: int) -> dict[str, Any]:
    return {"id": i, "customer": f"c{i % 977}", "sku": f"sku-{i % 131}", "quantity": i % 7,
            "price": (i % 1000) / 4, "currency": "EUR", "status": "NEW", "note": "n" * 20}


def write_objects(directory: Path, records: int, objects: int, input_format: str) -> int:
    """``records`` records over ``objects`` files; returns the bytes written."""
    per_object, extra = divmod(records, objects)
    number = 0
    total = 0
    for n in range(objects):
        count = per_object + (1 if n < extra else 0)
        rows = [row(number + i) for i in range(count)]
        path = directory / f"part-{n:05d}.{input_format}"
        if input_format == "parquet":
            import pyarrow as pa
            import pyarrow.parquet as pq

            pq.write_table(pa.Table.from_pylist(rows), path, row_group_size=10_000)
        elif input_format == "csv":
            with path.open("w", newline="") as out:
                writer = csv.DictWriter(out, fieldnames=list(rows[0]))
                writer.writeheader()
                writer.writerows(rows)
        else:
            path.write_bytes("".join(json.dumps(r) + "\n" for r in rows).encode())
        number += count
        total += path.stat().st_size
    return total


COLUMNAR_FORMATS = ("parquet", "csv")
"""Formats the object-store source reads as Arrow batches."""


def reading(input_format: str) -> dict[str, str]:
    """The connector settings that read ``input_format``."""
    settings = {"input.format": input_format, "parquet.batch.size": "2000"}
    if input_format == "csv":
        settings["csv.column.types"] = "id:int64,quantity:int32,price:float64"
    return settings


class _NoOffsets(OffsetStorageReader):
    def offsets(self, partitions: Iterable[Mapping[str, Any]]) -> dict[Any, dict[str, Any]]:
        return {}


class _Context(SourceTaskContext):
    def __init__(self, configs: Mapping[str, Any]) -> None:
        self._configs = configs

    @property
    def offset_storage_reader(self) -> OffsetStorageReader:
        return _NoOffsets()

    @property
    def configs(self) -> Mapping[str, Any]:
        return self._configs


def task_poll(directory: Path, records: int, input_format: str,
              batches: bool = False) -> tuple[float, float]:
    """(wall seconds, CPU seconds) for one task to poll ``records`` records (with
    ``batches``, through ``poll_batch``).
    """
    config = {"objectstore.url": str(directory), "topic": "bench",
              "max.poll.records": "2000", **reading(input_format)}
    task = ObjectStoreSourceTask()
    task.initialize(_Context(config))
    wall, cpu = time.perf_counter(), time.process_time()
    task.start(config)
    got = 0
    while got < records:
        items = task.poll_batch() if batches else task.poll()
        if items:
            got += sum(len(item) if batches else 1 for item in items)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    task.stop()
    assert got == records, (got, records)
    return wall, cpu


def runtime(directory: Path, workdir: Path, records: int, input_format: str,
            columnar: bool = True) -> float:
    """Wall seconds for a worker to read and send ``records`` records."""
    from omconnect.runtime import StandaloneHerder

    data = workdir / f"data-{columnar}"
    worker = {"transport": "embedded", "embedded.path": str(data),
              "offset.flush.interval.ms": 1000, "columnar.enable": columnar}
    with StandaloneHerder(worker) as herder:
        started = time.perf_counter()
        herder.create_connector({
            "name": "bench", "connector.class": "objectstore-source",
            "objectstore.url": str(directory), "topic": "bench", **reading(input_format),
            "max.poll.records": "2000", "value.converter": "json",
            "value.converter.schemas.enable": "false", "key.converter": "string"})
        while True:
            metrics = herder.metrics()
            if metrics and metrics[0].acknowledged >= records:
                break
            time.sleep(0.01)
        elapsed = time.perf_counter() - started
        assert metrics[0].acknowledged == records, metrics[0]
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--objects", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--format", choices=("jsonl", "csv", "parquet"), default="jsonl")
    parser.add_argument("--runtime", action="store_true",
                        help="also run the connector in a worker on the embedded transport")
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="omconnect-objectstore-bench-"))
    try:
        directory = workdir / "objects"
        directory.mkdir()
        size = write_objects(directory, args.records, args.objects, args.format)
        figures: dict[str, Any] = {"format": args.format, "records": args.records,
                                   "objects": args.objects, "bytes": size}
        runs = [task_poll(directory, args.records, args.format) for _ in range(args.repeat)]
        wall = min(w for w, _ in runs)
        cpu = min(c for _, c in runs)
        figures["task_poll_records_per_s"] = round(args.records / wall)
        figures["task_poll_records_per_cpu_s"] = round(args.records / cpu)
        figures["task_poll_mib_per_s"] = round(size / wall / 2**20, 1)
        print(f"task poll loop: {args.records / wall:>12,.0f} records/s wall, "
              f"{args.records / cpu:>12,.0f} records/s CPU ({size / wall / 2**20:.1f} MiB/s)")
        if args.format in COLUMNAR_FORMATS:
            runs = [task_poll(directory, args.records, args.format, batches=True)
                    for _ in range(args.repeat)]
            wall = min(w for w, _ in runs)
            cpu = min(c for _, c in runs)
            figures["task_poll_batch_records_per_s"] = round(args.records / wall)
            figures["task_poll_batch_records_per_cpu_s"] = round(args.records / cpu)
            print(f"task poll_batch loop: {args.records / wall:>12,.0f} records/s wall, "
                  f"{args.records / cpu:>12,.0f} records/s CPU")
        if args.runtime:
            elapsed = runtime(directory, workdir, args.records, args.format)
            figures["runtime_records_per_s"] = round(args.records / elapsed)
            print(f"runtime (embedded): {args.records / elapsed:>12,.0f} records/s wall")
            if args.format in COLUMNAR_FORMATS:
                elapsed = runtime(directory, workdir, args.records, args.format,
                                  columnar=False)
                figures["runtime_per_record_records_per_s"] = round(args.records / elapsed)
                print(f"runtime (embedded), columnar.enable=false: "
                      f"{args.records / elapsed:>12,.0f} records/s wall")
        figures["load_average_1m"] = round(os.getloadavg()[0], 2)
        print(f"load average (1 min): {figures['load_average_1m']}")
        print(json.dumps(figures))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
