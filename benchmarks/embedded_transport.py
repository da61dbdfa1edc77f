"""Throughput of the embedded transport: produce N records, then consume them in a group.

Usage::

    python benchmarks/embedded_transport.py [--records 1000000] [--size 100]
        [--batch 2000] [--partitions 4] [--keys 10000] [--synchronous full]

Produce: batches of ``--batch`` messages (value ``--size`` bytes, key one of ``--keys``
distinct keys, or none with ``--keys 0``) sent back to back; the clock stops when the
last acknowledgement arrived. Consume: one consumer in a fresh group polls batches of
``--batch`` and commits after each poll, until it has every record. Message objects are
built inside the timed loop, as a caller would. Prints records/s each way (wall clock),
the CPU seconds each way took (all threads; less sensitive than the wall clock to other
work on a shared machine), the load average when it started, and the peak RSS of the
process; the last line is one JSON object with those figures.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

from omconnect.records import TopicPartition
from omconnect.transport import Message, TopicSpec
from omconnect.transport.embedded import EmbeddedTransport


def peak_rss_mib() -> float:
    """Peak resident set size of this process so far, in MiB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def produce(transport: EmbeddedTransport, args: argparse.Namespace) -> tuple[float, float]:
    value = b"x" * args.size
    keys = [f"key-{i}".encode() for i in range(args.keys)] or [None]
    producer = transport.producer()
    futures = []
    started, cpu = time.perf_counter(), time.process_time()
    sent = 0
    while sent < args.records:
        count = min(args.batch, args.records - sent)
        batch = [Message(args.topic, keys[(sent + i) % len(keys)], value)
                 for i in range(count)]
        futures.append(producer.send(batch))
        sent += count
        if len(futures) >= 64:  # keep a bounded window of unacknowledged batches
            futures.pop(0).result()
    for future in futures:
        future.result()
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    producer.close()
    return elapsed, cpu


def consume(transport: EmbeddedTransport, args: argparse.Namespace) -> tuple[float, float]:
    consumer = transport.consumer("benchmark")
    consumer.subscribe([args.topic])
    received = 0
    started, cpu = time.perf_counter(), time.process_time()
    while received < args.records:
        batch = consumer.poll(args.batch, timeout=5.0)
        if not batch:
            raise SystemExit(f"consumer stalled after {received} of {args.records} records")
        received += len(batch)
        last: dict[int | None, int | None] = {}  # one topic: the partition is enough
        for message in batch:
            last[message.partition] = message.offset
        consumer.commit({TopicPartition(args.topic, p): o + 1  # type: ignore[arg-type, operator]
                         for p, o in last.items()})
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    consumer.close()
    return elapsed, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--size", type=int, default=100)
    parser.add_argument("--batch", type=int, default=2000)
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--keys", type=int, default=10_000)
    parser.add_argument("--synchronous", choices=("full", "normal"), default="full")
    parser.add_argument("--path", help="data directory (default: a fresh temporary one)")
    args = parser.parse_args()
    args.topic = "benchmark"

    directory = Path(args.path) if args.path else Path(tempfile.mkdtemp(prefix="omc-bench-"))
    try:
        transport = EmbeddedTransport({"path": str(directory),
                                       "synchronous": args.synchronous})
        admin = transport.admin()
        admin.create_topics([TopicSpec(args.topic, args.partitions)])
        admin.close()
        load = os.getloadavg()[0]
        produce_s, produce_cpu = produce(transport, args)
        consume_s, consume_cpu = consume(transport, args)
        transport.close()
        database_mib = sum(f.stat().st_size for f in directory.iterdir()) / 2**20
    finally:
        if not args.path:
            shutil.rmtree(directory, ignore_errors=True)

    result = {
        "benchmark": "embedded_transport",
        "records": args.records,
        "record_bytes": args.size,
        "batch": args.batch,
        "partitions": args.partitions,
        "keys": args.keys,
        "synchronous": args.synchronous,
        "produce_records_per_s": round(args.records / produce_s),
        "consume_records_per_s": round(args.records / consume_s),
        "produce_s": round(produce_s, 3),
        "consume_s": round(consume_s, 3),
        "produce_cpu_s": round(produce_cpu, 3),
        "consume_cpu_s": round(consume_cpu, 3),
        "load_average_at_start": round(load, 2),
        "database_mib": round(database_mib, 1),
        "peak_rss_mib": round(peak_rss_mib(), 1),
        "python": sys.version.split()[0],
    }
    print(f"produce: {result['produce_records_per_s']:>10,} records/s "
          f"({produce_s:.2f} s wall, {produce_cpu:.2f} s CPU)")
    print(f"consume: {result['consume_records_per_s']:>10,} records/s "
          f"({consume_s:.2f} s wall, {consume_cpu:.2f} s CPU)")
    print(f"load average at start: {load:.2f} on {os.cpu_count()} CPUs")
    print(f"peak RSS: {result['peak_rss_mib']} MiB; database: {result['database_mib']} MiB")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
