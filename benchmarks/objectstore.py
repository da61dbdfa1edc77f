"""Throughput of the object-store source: JSON lines objects in a local directory.

Writes ``--records`` JSON-lines records (8 fields each, about 150 bytes a line) spread
evenly over ``--objects`` objects in a temporary directory, then measures:

* ``task_poll``: an ``ObjectStoreSourceTask`` polled in a loop until it returned every
  record: listing, offsets, opening each object, the JSON lines format and the
  per-record offset entry, as a worker's task thread runs them (nothing sent). Best of
  ``--repeat`` runs, each with a new task and empty offsets.
* ``runtime`` (``--runtime``): the connector in a worker (``StandaloneHerder``) on the
  embedded transport, JSON converter without schemas: poll, convert, send, acknowledge,
  commit offsets; the clock runs from creating the connector until the transport
  acknowledged every record. One run.

Rates are records per second of wall time and, for ``task_poll``, of this process's CPU
time too (the machine is shared; the load average at the end says how busy it was).
The last line is one JSON object with the figures.

Usage: python benchmarks/objectstore.py [--records N] [--objects N] [--repeat N] [--runtime]
"""

from __future__ import annotations

import argparse
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


def write_objects(directory: Path, records: int, objects: int) -> int:
    """``records`` JSON lines over ``objects`` files; returns the bytes written."""
    per_object, extra = divmod(records, objects)
    number = 0
    total = 0
    for n in range(objects):
        count = per_object + (1 if n < extra else 0)
        data = "".join(json.dumps(row(number + i)) + "\n" for i in range(count)).encode()
        (directory / f"part-{n:05d}.jsonl").write_bytes(data)
        number += count
        total += len(data)
    return total


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


def task_poll(directory: Path, records: int) -> tuple[float, float]:
    """(wall seconds, CPU seconds) for one task to poll ``records`` records."""
    config = {"objectstore.url": str(directory), "topic": "bench", "input.format": "jsonl",
              "max.poll.records": "2000"}
    task = ObjectStoreSourceTask()
    task.initialize(_Context(config))
    wall, cpu = time.perf_counter(), time.process_time()
    task.start(config)
    got = 0
    while got < records:
        batch = task.poll()
        if batch:
            got += len(batch)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    task.stop()
    assert got == records, (got, records)
    return wall, cpu


def runtime(directory: Path, workdir: Path, records: int) -> float:
    """Wall seconds for a worker to read and send ``records`` records."""
    from omconnect.runtime import StandaloneHerder

    worker = {"transport": "embedded", "embedded.path": str(workdir / "data"),
              "offset.flush.interval.ms": 1000}
    with StandaloneHerder(worker) as herder:
        started = time.perf_counter()
        herder.create_connector({
            "name": "bench", "connector.class": "objectstore-source",
            "objectstore.url": str(directory), "topic": "bench", "input.format": "jsonl",
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
    parser.add_argument("--runtime", action="store_true",
                        help="also run the connector in a worker on the embedded transport")
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="omconnect-objectstore-bench-"))
    try:
        directory = workdir / "objects"
        directory.mkdir()
        size = write_objects(directory, args.records, args.objects)
        figures: dict[str, Any] = {"records": args.records, "objects": args.objects,
                                   "bytes": size}
        runs = [task_poll(directory, args.records) for _ in range(args.repeat)]
        wall = min(w for w, _ in runs)
        cpu = min(c for _, c in runs)
        figures["task_poll_records_per_s"] = round(args.records / wall)
        figures["task_poll_records_per_cpu_s"] = round(args.records / cpu)
        figures["task_poll_mib_per_s"] = round(size / wall / 2**20, 1)
        print(f"task poll loop: {args.records / wall:>12,.0f} records/s wall, "
              f"{args.records / cpu:>12,.0f} records/s CPU ({size / wall / 2**20:.1f} MiB/s)")
        if args.runtime:
            elapsed = runtime(directory, workdir, args.records)
            figures["runtime_records_per_s"] = round(args.records / elapsed)
            print(f"runtime (embedded): {args.records / elapsed:>12,.0f} records/s wall")
        figures["load_average_1m"] = round(os.getloadavg()[0], 2)
        print(f"load average (1 min): {figures['load_average_1m']}")
        print(json.dumps(figures))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
