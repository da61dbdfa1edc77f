"""Spark reading records through the omconnect adapter vs Spark's own JSON reader.

Usage::

    python benchmarks/spark.py [--records 1000000] [--partitions 2] [--rounds 2]
        [--decoded]

Setup (not timed): ``--records`` JSON orders of about 100 bytes each are sent to an
embedded topic with ``--partitions`` partitions, and the same values are written one per
line to a JSON-lines file. One local[2] SparkSession then times, ``--rounds`` times each
(interleaved, best round reported, after one warm-up of each):

* ``adapter``: ``spark.read.format("omconnect")`` of the whole topic (the Kafka-like
  columns, value as raw bytes), written to Parquet;
* ``json``: ``spark.read.json`` of the file with its schema given (no inference pass),
  written to Parquet;
* ``decoded`` (with ``--decoded``): the adapter with ``value.converter=json`` and
  ``value.schema``, so each value is parsed by omconnect's JSON converter into typed
  columns, written to Parquet.

Prints rows/s of each, the ratio adapter / json (target: at least 0.6), and the load
average when the timing started; the last line is one JSON object with those figures.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from omconnect.transport import Message, TopicSpec
from omconnect.transports.embedded import EmbeddedTransport

VALUE_SCHEMA = "id BIGINT, customer STRING, item STRING, qty INT, price DOUBLE, note STRING"


def order(i: int) -> bytes:
    return json.dumps({"id": i, "customer": f"c-{i % 9973:05d}", "item": f"sku-{i % 501:04d}",
                       "qty": i % 9 + 1, "price": round((i % 10000) / 100, 2),
                       "note": "x" * 8}, separators=(",", ":")).encode()


def prepare(directory: Path, records: int, partitions: int) -> tuple[Path, Path]:
    data, lines = directory / "data", directory / "orders.jsonl"
    transport = EmbeddedTransport({"path": str(data), "synchronous": "normal"})
    try:
        admin = transport.admin()
        admin.create_topics([TopicSpec("orders", partitions)])
        admin.close()
        producer = transport.producer()
        pending = []
        with lines.open("wb") as out:
            for start in range(0, records, 5000):
                values = [order(i) for i in range(start, min(records, start + 5000))]
                out.write(b"\n".join(values) + b"\n")
                pending.append(producer.send([
                    Message("orders", None, value, partition=(start // 5000) % partitions)
                    for value in values]))
        for future in pending:
            future.result()
        producer.close()
    finally:
        transport.close()
    return data, lines


def session() -> Any:
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    import omconnect_spark

    spark = omconnect_spark.local_session("omconnect-benchmark",
                                          conf={"spark.driver.memory": "2g"})
    return spark


def timed(write: Any, out: Path) -> float:
    shutil.rmtree(out, ignore_errors=True)
    started = time.perf_counter()
    write(str(out))
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--partitions", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--decoded", action="store_true")
    args = parser.parse_args()
    directory = Path(tempfile.mkdtemp(prefix="omc-spark-bench-"))
    try:
        data, lines = prepare(directory, args.records, args.partitions)
        spark = session()

        def adapter(path: str) -> None:
            (spark.read.format("omconnect").option("embedded.path", str(data))
             .option("topics", "orders").load().write.parquet(path))

        def decoded(path: str) -> None:
            (spark.read.format("omconnect").option("embedded.path", str(data))
             .option("topics", "orders").option("value.converter", "json")
             .option("value.converter.schemas.enable", "false")
             .option("value.schema", VALUE_SCHEMA).load().write.parquet(path))

        def json_reader(path: str) -> None:
            spark.read.schema(VALUE_SCHEMA).json(str(lines)).write.parquet(path)

        runs = {"adapter": adapter, "json": json_reader}
        if args.decoded:
            runs["decoded"] = decoded
        for name, run in runs.items():  # warm-up: JIT, Python workers, file cache
            timed(run, directory / f"warm-{name}")
        load = os.getloadavg()[0]
        best = {name: float("inf") for name in runs}
        for _ in range(args.rounds):
            for name, run in runs.items():
                best[name] = min(best[name], timed(run, directory / f"out-{name}"))
        counts = {name: spark.read.parquet(str(directory / f"out-{name}")).count()
                  for name in runs}
        spark.stop()
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    assert all(count == args.records for count in counts.values()), counts
    rate = {name: round(args.records / seconds) for name, seconds in best.items()}
    result: dict[str, Any] = {
        "benchmark": "spark",
        "records": args.records,
        "partitions": args.partitions,
        "rounds": args.rounds,
        "adapter_rows_per_s": rate["adapter"],
        "json_rows_per_s": rate["json"],
        "ratio": round(rate["adapter"] / rate["json"], 3),
        "adapter_s": round(best["adapter"], 3),
        "json_s": round(best["json"], 3),
        "load_average_at_start": round(load, 2),
        "python": sys.version.split()[0],
    }
    if "decoded" in rate:
        result["decoded_rows_per_s"] = rate["decoded"]
        result["decoded_ratio"] = round(rate["decoded"] / rate["json"], 3)
    for name in runs:
        print(f"{name:>8}: {rate[name]:>10,} rows/s ({best[name]:.2f} s)")
    print(f"ratio adapter/json: {result['ratio']} (target >= 0.6); load average at start "
          f"{load:.2f} on {os.cpu_count()} CPUs")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
