"""Spark reading records through the omconnect adapter vs Spark's own JSON reader.

Usage::

    python benchmarks/spark.py [--records 1000000] [--partitions 2] [--rounds 2]
        [--decoded] [--transport embedded,kafka,rabbitmq,pulsar]

Setup (not timed): ``--records`` JSON orders of about 100 bytes each are sent to a topic
with ``--partitions`` partitions on each ``--transport`` (embedded by default; Kafka on a
Tansu broker, RabbitMQ with stream queues on the local server, Pulsar on pulsar-lite,
each started by its launcher), and the same values are written one per line to a
JSON-lines file. One local[2] SparkSession then times, ``--rounds`` times each
(interleaved, best round reported, after one warm-up of each):

* ``adapter``: ``spark.read.format("omconnect")`` of the whole topic (the Kafka-like
  columns, value as raw bytes), written to Parquet. Pulsar cannot replay, so the adapter
  refuses batch reads of it: there the adapter run is a streaming query
  (``readStream``, ``Trigger.AvailableNow``, a Parquet sink with a checkpoint) reading
  in a consumer group of its own, each group subscribed before the records were sent;
  the query ends after a poll of ``groupPollTimeoutMs`` (its default, 2 s) brings
  nothing, and that wait is inside its time (queries that ended after 48,004 and 56,394
  of 200,000 records were the Pulsar consumer returning an empty poll when it had
  received only redeliveries it dropped, fixed since; the run checks the count);
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

VALUE_SCHEMA = "id BIGINT, customer STRING, item STRING, qty INT, price DOUBLE, note STRING"


def order(i: int) -> bytes:
    return json.dumps({"id": i, "customer": f"c-{i % 9973:05d}", "item": f"sku-{i % 501:04d}",
                       "qty": i % 9 + 1, "price": round((i % 10000) / 100, 2),
                       "note": "x" * 8}, separators=(",", ":")).encode()


class Broker:
    """The transport to read from: its test broker started (none for embedded), its
    options for the worker and for Spark's reader.
    """

    def __init__(self, name: str, directory: Path) -> None:
        self.name = name
        self.handle: Any = None
        self.options: dict[str, Any] = {}
        if name == "embedded":
            self.options = {"path": str(directory / "data"), "synchronous": "normal"}
        elif name == "kafka":
            from omconnect_testbrokers.kafka import TEST_CLIENT_OPTIONS, start_broker

            self.handle = start_broker(directory / "tansu")
            self.options = {"bootstrap.servers": self.handle.url, **TEST_CLIENT_OPTIONS}
        elif name == "rabbitmq":
            from omconnect_testbrokers.rabbitmq import ensure_server_running, start_broker

            ensure_server_running()
            self.handle = start_broker()
            self.options = {"url": self.handle.url, "streams": "true"}
        elif name == "pulsar":
            from omconnect_testbrokers.pulsar import start_broker as start_pulsar

            self.handle = start_pulsar(directory / "pulsar-lite")
            self.options = {"service.url": self.handle.url}
        else:
            raise SystemExit(f"--transport: unknown {name!r}")

    def open(self) -> Any:
        """A transport client on the broker."""
        from omconnect.runtime.worker_config import WorkerConfig

        return WorkerConfig.parse({"transport": self.name, **{
            f"{self.name}.{k}": v for k, v in self.options.items()}}).open_transport()

    def reader_options(self) -> dict[str, str]:
        """The options of ``spark.read.format("omconnect")`` for this transport."""
        return {"transport": self.name, **{f"{self.name}.{k}": str(v)
                                           for k, v in self.options.items()}}

    def stop(self) -> None:
        """Stop the broker (if one was started)."""
        if self.handle is not None:
            self.handle.stop()


def prepare(broker: Broker, lines: Path, records: int, partitions: int,
            groups: list[str]) -> None:
    """Send the orders to topic ``orders`` (and write them to ``lines``). Each
    partition's last message goes in a send of its own: Tansu reports a partition's end
    as the base offset of its last record batch + 1, so a read stops short of a last
    batch of several messages (docs/spark.md, "A producer recipe"). ``groups`` are
    subscribed first (a Pulsar subscription keeps only what is sent after it exists);
    on Pulsar the messages name no partition (pulsar-lite takes a partition's own topic
    for a new topic: a pinned defect), so the client spreads them.
    """
    transport = broker.open()
    try:
        admin = transport.admin()
        admin.create_topics([TopicSpec("orders", partitions)])
        admin.close()
        for group in groups:
            consumer = transport.consumer(group)
            consumer.subscribe(["orders"])
            consumer.poll(1, 0.5)
            consumer.close()
        producer = transport.producer()
        pending = []
        chunks = list(range(0, records, 5000))
        last_chunk = {}
        for start in chunks:
            last_chunk[(start // 5000) % partitions] = start
        with lines.open("wb") as out:
            for start in chunks:
                values = [order(i) for i in range(start, min(records, start + 5000))]
                out.write(b"\n".join(values) + b"\n")
                partition = (start // 5000) % partitions
                messages = [Message("orders", None, value,
                                    partition=None if groups else partition)
                            for value in values]
                if last_chunk[partition] == start:
                    pending.append(producer.send(messages[:-1]))
                    pending[-1].result()
                    pending.append(producer.send(messages[-1:]))
                else:
                    pending.append(producer.send(messages))
        for future in pending:
            future.result()
        producer.close()
    finally:
        transport.close()


def session() -> Any:
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    import omconnect_spark

    spark = omconnect_spark.local_session("omconnect-benchmark",
                                          conf={"spark.driver.memory": "2g"})
    return spark


def timed(write: Any, out: Path) -> float:
    shutil.rmtree(out, ignore_errors=True)
    shutil.rmtree(f"{out}-checkpoint", ignore_errors=True)
    started = time.perf_counter()
    write(str(out))
    return time.perf_counter() - started


def measure(broker: Broker, spark: Any, args: argparse.Namespace, directory: Path
            ) -> dict[str, Any]:
    """Rows/s of the adapter (and decoded) and of spark.read.json on one transport."""
    lines = directory / f"orders-{broker.name}.jsonl"
    streaming = broker.name == "pulsar"
    groups = [f"bench-{i}" for i in range(1 + args.rounds)] if streaming else []
    prepare(broker, lines, args.records, args.partitions, groups)
    options = {**broker.reader_options(), "topics": "orders"}

    def adapter(path: str) -> None:
        if not streaming:
            spark.read.format("omconnect").options(**options).load().write.parquet(path)
            return
        query = (spark.readStream.format("omconnect").options(**options)
                 .option("groupId", groups.pop(0))
                 .load().writeStream.format("parquet")
                 .option("checkpointLocation", path + "-checkpoint")
                 .trigger(availableNow=True).start(path))
        query.awaitTermination()

    def decoded(path: str) -> None:
        (spark.read.format("omconnect").options(**options)
         .option("value.converter", "json")
         .option("value.converter.schemas.enable", "false")
         .option("value.schema", VALUE_SCHEMA).load().write.parquet(path))

    def json_reader(path: str) -> None:
        spark.read.schema(VALUE_SCHEMA).json(str(lines)).write.parquet(path)

    runs = {"adapter": adapter, "json": json_reader}
    if args.decoded and not streaming:
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
    assert all(count == args.records for count in counts.values()), counts
    rate = {name: round(args.records / seconds) for name, seconds in best.items()}
    result: dict[str, Any] = {
        "adapter_rows_per_s": rate["adapter"],
        "json_rows_per_s": rate["json"],
        "ratio": round(rate["adapter"] / rate["json"], 3),
        "adapter_s": round(best["adapter"], 3),
        "json_s": round(best["json"], 3),
        "load_average_at_start": round(load, 2),
    }
    if "decoded" in rate:
        result["decoded_rows_per_s"] = rate["decoded"]
        result["decoded_ratio"] = round(rate["decoded"] / rate["json"], 3)
    print(f"{broker.name}:")
    for name in runs:
        print(f"  {name:>8}: {rate[name]:>10,} rows/s ({best[name]:.2f} s)")
    print(f"  ratio adapter/json: {result['ratio']} (target >= 0.6); load average at start "
          f"{load:.2f} on {os.cpu_count()} CPUs")
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--partitions", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--decoded", action="store_true")
    parser.add_argument("--transport", default="embedded",
                        help="comma-separated: embedded, kafka, rabbitmq, pulsar")
    args = parser.parse_args()
    directory = Path(tempfile.mkdtemp(prefix="omc-spark-bench-"))
    results: dict[str, Any] = {}
    try:
        spark = session()
        for name in [n.strip() for n in args.transport.split(",") if n.strip()]:
            broker = Broker(name, directory)
            try:
                results[name] = measure(broker, spark, args, directory)
            finally:
                broker.stop()
        spark.stop()
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    headline = results.get("embedded") or next(iter(results.values()))
    print(json.dumps({"benchmark": "spark", "records": args.records,
                      "partitions": args.partitions, "rounds": args.rounds,
                      "python": sys.version.split()[0], "ratio": headline["ratio"],
                      "transports": results}))


if __name__ == "__main__":
    main()
