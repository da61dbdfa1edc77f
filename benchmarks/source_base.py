"""Throughput of the iterator-style source base and its formats.

Measures, in records per second (best of ``--repeat`` runs):

* ``poll_overhead``: ``IteratorSourceTask.poll`` over an iterator that yields one
  pre-built record again and again: the cost the base adds per record;
* ``<format>_read``: a record format reading an in-memory object of ``--records`` records
  (JSON lines, CSV untyped and typed, Avro, Parquet; 8 fields each);
* ``jsonl_pipeline``: the whole per-record path a source runs: JSON lines format,
  ``entry.increment`` + ``offset_manager.add_entry`` + ``entry.to_record`` in the
  iterator, batches taken by ``poll`` (as in docs/source-base.md).

Rates are records per second of this process's CPU time (``time.process_time``), so that
other work on a shared machine does not skew them; the load average at the end says how
busy the machine was. Peak RSS is printed too. The last line is one JSON object with the
figures.

Usage: python benchmarks/source_base.py [--records N] [--repeat N]
"""

from __future__ import annotations

import argparse
import csv
import gc
import io
import json
import os
import platform
import resource
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import fastavro

from omconnect.data import INT64_SCHEMA
from omconnect.records import SourceRecord
from omconnect.source_base import (
    Backoff,
    IteratorSourceTask,
    OffsetManagerEntry,
    SourceCommonConfig,
    create_format,
)

FIELDS = ["id", "customer", "sku", "quantity", "price", "currency", "status", "note"]


def row(i: int) -> dict[str, Any]:
    return {"id": i, "customer": f"c{i % 977}", "sku": f"sku-{i % 131}", "quantity": i % 7,
            "price": (i % 1000) / 4, "currency": "EUR", "status": "NEW", "note": "n" * 20}


def best(repeat: int, count: int, run: Callable[[], int]) -> float:
    rates = []
    for _ in range(repeat):
        started = time.process_time()
        got = run()
        elapsed = time.process_time() - started
        assert got == count, (got, count)
        rates.append(count / elapsed)
    return max(rates)


class Repeating(IteratorSourceTask[SourceCommonConfig]):
    """Yields one record ``count`` times: what the base itself costs per record."""

    def __init__(self, record: SourceRecord, count: int) -> None:
        super().__init__()
        self.record, self.count = record, count

    def version(self) -> str:  # noqa: D102
        return "bench"

    def configure(self, config: Mapping[str, Any]) -> SourceCommonConfig:  # noqa: D102
        return SourceCommonConfig.from_config(config)

    def iterator(self, backoff: Backoff) -> Iterator[SourceRecord | None]:  # noqa: D102
        record = self.record
        for _ in range(self.count):
            yield record
        while True:
            yield None

    def close_resources(self) -> None:  # noqa: D102
        pass


class JsonLinesSource(IteratorSourceTask[SourceCommonConfig]):
    """One JSON-lines object read the way docs/source-base.md reads each file."""

    def __init__(self, data: bytes) -> None:
        super().__init__()
        self.data = data

    def version(self) -> str:  # noqa: D102
        return "bench"

    def configure(self, config: Mapping[str, Any]) -> SourceCommonConfig:  # noqa: D102
        return SourceCommonConfig.from_config(config)

    def iterator(self, backoff: Backoff) -> Iterator[SourceRecord | None]:  # noqa: D102
        entry = OffsetManagerEntry({"object": "bench.jsonl"}, {"records": 0})
        add_entry = self.offset_manager.add_entry
        for item in self.config.record_format.records(io.BytesIO(self.data),
                                                    object_name="bench.jsonl"):
            entry.increment("records")
            add_entry(entry)
            yield entry.to_record(topic="t", key=item.key, value=item.value)
        while True:
            yield None

    def close_resources(self) -> None:  # noqa: D102
        pass


def drain(task: IteratorSourceTask[Any], count: int) -> int:
    got = 0
    while got < count:
        batch = task.poll()
        got += len(batch or ())
    return got


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    n, repeat = args.records, args.repeat
    figures: dict[str, Any] = {"records": n, "python": platform.python_version()}

    record = SourceRecord(topic="t", value_schema=INT64_SCHEMA, value=1,
                          source_partition={"o": "x"}, source_offset={"n": 1})
    polled = 5 * n

    def poll_overhead() -> int:
        task = Repeating(record, polled)
        task.start({})
        return drain(task, polled)

    figures["poll_overhead"] = best(repeat, polled, poll_overhead)

    rows = [row(i) for i in range(n)]
    jsonl = "".join(json.dumps(r) + "\n" for r in rows).encode()
    text = io.StringIO()
    writer = csv.DictWriter(text, FIELDS)
    writer.writeheader()
    writer.writerows(rows)
    csv_bytes = text.getvalue().encode()
    avro_out = io.BytesIO()
    avro_schema = {"type": "record", "name": "Order", "fields": [
        {"name": "id", "type": "long"}, {"name": "customer", "type": "string"},
        {"name": "sku", "type": "string"}, {"name": "quantity", "type": "int"},
        {"name": "price", "type": "double"}, {"name": "currency", "type": "string"},
        {"name": "status", "type": "string"}, {"name": "note", "type": ["null", "string"]}]}
    fastavro.writer(avro_out, fastavro.parse_schema(avro_schema), rows)
    avro_bytes = avro_out.getvalue()
    objects: dict[str, tuple[bytes, dict[str, Any]]] = {
        "jsonl": (jsonl, {}),
        "csv": (csv_bytes, {}),
        "csv_typed": (csv_bytes, {"column_types": ["id:int64", "quantity:int32",
                                                   "price:float64"]}),
        "avro": (avro_bytes, {}),
    }
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq

        parquet_out = io.BytesIO()
        pq.write_table(pa.Table.from_pylist(rows), parquet_out, row_group_size=50_000)
        objects["parquet"] = (parquet_out.getvalue(), {})
    except ImportError:
        print("pyarrow not installed: parquet skipped", file=sys.stderr)

    del rows  # 200k live dicts would make every garbage collection slower
    gc.collect()

    for name, (data, options) in objects.items():
        record_format = create_format(name.split("_")[0], **options)

        def read(record_format: Any = record_format, data: bytes = data) -> int:
            return sum(1 for _ in record_format.records(io.BytesIO(data), object_name="o"))

        figures[f"{name}_read"] = best(repeat, n, read)

    def pipeline() -> int:
        task = JsonLinesSource(jsonl)
        task.start({"input.format": "jsonl"})
        return drain(task, n)

    figures["jsonl_pipeline"] = best(repeat, n, pipeline)
    figures["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    figures["load_average_1m"] = round(os.getloadavg()[0], 2)

    for key, value in figures.items():
        if isinstance(value, float) and key != "load_average_1m":
            unit = "MB" if key.endswith("_mb") else "records/s"
            print(f"{key:>20}: {value:>12,.0f} {unit}")
    print(f"{'load average (1 min)':>20}: {figures['load_average_1m']}")
    print(json.dumps({k: round(v) if isinstance(v, float) and k != "load_average_1m" else v
                      for k, v in figures.items()}))


if __name__ == "__main__":
    main()
