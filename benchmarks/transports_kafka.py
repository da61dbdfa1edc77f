"""Kafka: each driver's raw client produce+consume loop vs the omconnect transport API.

Usage::

    python benchmarks/transports_kafka.py [--records 100000] [--size 100]
        [--batch 2000] [--partitions 4] [--drivers kafka-python,confluent]
        [--repeat 3] [--bootstrap HOST:PORT]

Starts a Tansu broker (memory storage; unless ``--bootstrap`` is given) and, for each
driver, on fresh topics:

* **raw**: the client library as its documentation shows it, with the settings the
  transport uses (``acks=all``, the Java-compatible partitioner): kafka-python
  ``KafkaProducer.send`` per record then ``flush``; confluent-kafka ``produce`` per
  record with a delivery callback, serving reports with ``poll(0)``, then ``flush``.
  Then one consumer in a fresh group (auto-commit off) polls batches of ``--batch`` and
  commits synchronously after each, until it has every record.
* **omconnect**: :class:`~omconnect_kafka.KafkaTransport` with the same driver: ``send``
  of batches of ``--batch`` messages (built inside the timed loop), waiting for every
  batch's future; then ``poll`` of ``--batch`` and ``commit`` after each.
* **columnar**: the same transport's columnar calls: ``send_batch`` of Arrow batches of
  ``--batch`` rows (built inside the timed loop from the keys and values), then
  ``poll_batch`` and ``commit`` of each partition's last offset read from the batch's
  columns.

Records are ``--size`` bytes with one of 1000 keys. The produce clock stops when the last
acknowledgement arrived; the consume clock starts at the first record received (group
joins take seconds on Tansu and are not throughput) and stops at the last. Raw and
omconnect runs alternate ``--repeat`` times and the best of each is kept (the machine is
shared; the best run is the one least disturbed). Prints records/s each way, the
omconnect/raw ratios, the CPU microseconds per record of this process (all its threads;
the broker runs apart) and the peak RSS; the last line is one JSON object with those
figures.
"""

from __future__ import annotations

import argparse
import json
import operator
import os
import resource
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from omconnect_kafka import KafkaTransport
from omconnect_testbrokers.kafka import start_broker

from omconnect.records import TopicPartition
from omconnect.transport import Message, TopicSpec

PARTITION = operator.attrgetter("partition")
OFFSET = operator.attrgetter("offset")
GROUP_OPTIONS = {"session.timeout.ms": 6000, "heartbeat.interval.ms": 1000}


class Clock:
    """Wall and CPU time (this process, every thread) of one measured stretch."""

    def __init__(self) -> None:
        self.wall = self.cpu = 0.0

    def start(self) -> None:
        """Start measuring (again)."""
        self.wall, self.cpu = time.perf_counter(), time.process_time()

    def stop(self, records: int) -> tuple[float, float]:
        """(records/s, CPU microseconds per record) since :meth:`start`."""
        wall = time.perf_counter() - self.wall
        cpu = time.process_time() - self.cpu
        return records / wall, cpu * 1e6 / records


Result = tuple[tuple[float, float], tuple[float, float]]
"""((produce records/s, CPU us/record), (consume records/s, CPU us/record))."""


def peak_rss_mib() -> float:
    """Peak resident set size of this process so far, in MiB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def fresh_topic(bootstrap: str, partitions: int) -> str:
    """A new topic with ``partitions`` partitions."""
    name = f"bench-{uuid.uuid4().hex[:8]}"
    transport = KafkaTransport({"bootstrap.servers": bootstrap})
    admin = transport.admin()
    admin.create_topics([TopicSpec(name, partitions)])
    admin.close()
    transport.close()
    return name


def raw_kafka_python(bootstrap: str, topic: str, args: argparse.Namespace) -> Result:
    """kafka-python used directly."""
    from kafka import KafkaConsumer, KafkaProducer

    payload = b"x" * args.size
    keys = [f"k{i}".encode() for i in range(1000)]
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all")
    clock = Clock()
    clock.start()
    for i in range(args.records):
        producer.send(topic, payload, keys[i % 1000])
    producer.flush()
    produced = clock.stop(args.records)
    producer.close()
    consumer = KafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=f"raw-{topic}",
                             enable_auto_commit=False, auto_offset_reset="earliest",
                             session_timeout_ms=6000, heartbeat_interval_ms=1000)
    received = 0
    while received < args.records:
        batch = consumer.poll(timeout_ms=1000, max_records=args.batch)
        if batch:
            if not received:
                clock.start()
            received += sum(len(records) for records in batch.values())
            consumer.commit()
    consumed = clock.stop(args.records)
    consumer.close(autocommit=False)
    return produced, consumed


def raw_confluent(bootstrap: str, topic: str, args: argparse.Namespace) -> Result:
    """confluent-kafka used directly."""
    import confluent_kafka

    payload = b"x" * args.size
    keys = [f"k{i}".encode() for i in range(1000)]
    producer = confluent_kafka.Producer({"bootstrap.servers": bootstrap, "acks": "all",
                                         "partitioner": "murmur2_random"})
    acked = [0]

    def done(error: Any, message: Any) -> None:
        acked[0] += 1

    clock = Clock()
    clock.start()
    for i in range(args.records):
        while True:
            try:
                producer.produce(topic, payload, keys[i % 1000], on_delivery=done)
                break
            except BufferError:
                producer.poll(0.01)
        if i % 1000 == 0:
            producer.poll(0)
    producer.flush()
    produced = clock.stop(acked[0])
    consumer = confluent_kafka.Consumer({
        "bootstrap.servers": bootstrap, "group.id": f"raw-{topic}",
        "enable.auto.commit": False, "auto.offset.reset": "earliest",
        "session.timeout.ms": 6000, "heartbeat.interval.ms": 1000})
    consumer.subscribe([topic])
    received = 0
    while received < args.records:
        batch = consumer.consume(args.batch, 1.0)
        if batch:
            if not received:
                clock.start()
            received += sum(1 for m in batch if m.error() is None)
            consumer.commit(asynchronous=False)
    consumed = clock.stop(args.records)
    consumer.close()
    return produced, consumed


def omconnect(bootstrap: str, topic: str, driver: str, args: argparse.Namespace) -> Result:
    """The omconnect transport API."""
    transport = KafkaTransport({"bootstrap.servers": bootstrap, "client.driver": driver,
                                **{f"consumer.{k}": v for k, v in GROUP_OPTIONS.items()}})
    payload = b"x" * args.size
    keys = [f"k{i}".encode() for i in range(1000)]
    producer = transport.producer()
    futures = []
    clock = Clock()
    clock.start()
    for start in range(0, args.records, args.batch):
        count = min(args.batch, args.records - start)
        futures.append(producer.send([Message(topic, keys[(start + i) % 1000], payload)
                                      for i in range(count)]))
    for future in futures:
        future.result()
    produced = clock.stop(args.records)
    producer.close()
    consumer = transport.consumer(f"omc-{topic}")
    consumer.subscribe([topic])
    received = 0
    while received < args.records:
        batch = consumer.poll(args.batch, 1.0)
        if batch:
            if not received:
                clock.start()
            received += len(batch)
            # The last offset per partition, at C speed (dict keeps the last value).
            last = dict(zip(map(PARTITION, batch), map(OFFSET, batch), strict=True))
            consumer.commit({TopicPartition(topic, p): o + 1 for p, o in last.items()})
    consumed = clock.stop(args.records)
    consumer.close()
    transport.close()
    return produced, consumed


def omconnect_columnar(bootstrap: str, topic: str, driver: str, args: argparse.Namespace
                       ) -> Result:
    """The omconnect transport's columnar calls (``send_batch``, ``poll_batch``)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    transport = KafkaTransport({"bootstrap.servers": bootstrap, "client.driver": driver,
                                **{f"consumer.{k}": v for k, v in GROUP_OPTIONS.items()}})
    payload = b"x" * args.size
    keys = [f"k{i}".encode() for i in range(1000)]
    producer = transport.producer()
    futures = []
    clock = Clock()
    clock.start()
    for start in range(0, args.records, args.batch):
        count = min(args.batch, args.records - start)
        batch = pa.RecordBatch.from_arrays(
            [pa.array([keys[(start + i) % 1000] for i in range(count)], pa.binary()),
             pa.array([payload] * count, pa.binary())], names=["key", "value"])
        futures.append(producer.send_batch(topic, batch))
    for future in futures:
        future.result()
    produced = clock.stop(args.records)
    producer.close()
    consumer = transport.consumer(f"omc-col-{topic}")
    consumer.subscribe([topic])
    received = 0
    while received < args.records:
        polled = consumer.poll_batch(args.batch, 1.0)
        if polled.num_rows:
            if not received:
                clock.start()
            received += polled.num_rows
            partitions = polled.column("partition")
            offsets = polled.column("offset")
            consumer.commit({
                TopicPartition(topic, p): pc.max(offsets.filter(pc.equal(partitions, p)))
                .as_py() + 1 for p in pc.unique(partitions).to_pylist()})
    consumed = clock.stop(args.records)
    consumer.close()
    transport.close()
    return produced, consumed


RAW = {"kafka-python": raw_kafka_python, "confluent": raw_confluent}


def best(results: list[Result], way: int) -> tuple[float, float]:
    """The fastest run's (records/s, CPU us/record) for ``way`` (0 produce, 1 consume)."""
    return max((r[way] for r in results), key=lambda pair: pair[0])


def main() -> None:
    """Run the comparison and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--size", type=int, default=100)
    parser.add_argument("--batch", type=int, default=2000)
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--drivers", default="kafka-python,confluent")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--bootstrap", default=None,
                        help="an existing broker (default: start Tansu)")
    args = parser.parse_args()
    broker = None
    if args.bootstrap is None:
        broker = start_broker(Path(tempfile.mkdtemp(prefix="omconnect-bench-kafka-")))
    bootstrap = args.bootstrap or broker.url  # type: ignore[union-attr]
    figures: dict[str, Any] = {"transport": "kafka", "records": args.records,
                               "size": args.size, "batch": args.batch,
                               "partitions": args.partitions, "repeat": args.repeat,
                               "load_average": os.getloadavg()[0]}
    try:
        for driver in args.drivers.split(","):
            raws: list[Result] = []
            omcs: list[Result] = []
            columnars: list[Result] = []
            for _ in range(args.repeat):
                raws.append(RAW[driver](bootstrap, fresh_topic(bootstrap, args.partitions),
                                        args))
                omcs.append(omconnect(bootstrap, fresh_topic(bootstrap, args.partitions),
                                      driver, args))
                columnars.append(omconnect_columnar(
                    bootstrap, fresh_topic(bootstrap, args.partitions), driver, args))
            row: dict[str, Any] = {}
            for way, name in ((0, "produce"), (1, "consume")):
                (raw_rate, raw_cpu), (omc_rate, omc_cpu) = best(raws, way), best(omcs, way)
                col_rate, col_cpu = best(columnars, way)
                row[f"columnar_{name}_per_s"] = round(col_rate)
                row[f"columnar_{name}_ratio"] = round(col_rate / raw_rate, 3)
                row[f"columnar_{name}_cpu_us"] = round(col_cpu, 2)
                row[f"raw_{name}_per_s"] = round(raw_rate)
                row[f"omconnect_{name}_per_s"] = round(omc_rate)
                row[f"{name}_ratio"] = round(omc_rate / raw_rate, 3)
                row[f"raw_{name}_cpu_us"] = round(raw_cpu, 2)
                row[f"omconnect_{name}_cpu_us"] = round(omc_cpu, 2)
                print(f"{driver:>12} {name}: raw {raw_rate:>9,.0f}/s ({raw_cpu:5.1f} us CPU)  "
                      f"omconnect {omc_rate:>9,.0f}/s ({omc_cpu:5.1f} us CPU)  "
                      f"ratio {omc_rate / raw_rate:.2f}  columnar {col_rate:>9,.0f}/s "
                      f"({col_cpu:5.1f} us CPU) ratio {col_rate / raw_rate:.2f}", flush=True)
            figures[driver] = row
    finally:
        if broker is not None:
            broker.stop()
    figures["peak_rss_mib"] = round(peak_rss_mib(), 1)
    print(f"peak RSS {figures['peak_rss_mib']} MiB")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
