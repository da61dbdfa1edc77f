"""Redis: the raw redis-py produce+consume loop vs the omconnect transport API, and the
columnar calls with and without the transport's own ``send_batch``/``poll_batch``.

Usage::

    python benchmarks/transports_redis.py [--records 100000] [--size 100]
        [--batch 2000] [--url redis://...]

Starts a redis-server of its own with an append-only file (unless ``--url`` is given)
and, on fresh streams, runs:

* **raw**: redis-py as its documentation shows it: ``XADD`` of every record (``*`` ids,
  fields ``key`` and ``value``) through a pipeline flushed every ``--batch`` records;
  then a consumer group reading with ``XREADGROUP ... COUNT --batch`` and ``XACK`` of
  every batch.
* **omconnect**: :class:`~omconnect_redis.RedisTransport`: ``send`` of batches of
  ``--batch`` messages, waiting for every batch's future; then ``poll`` of batches and
  ``commit`` after each.
* **columnar**, twice: ``send_batch`` of Arrow batches of ``--batch`` rows then
  ``poll_batch`` and ``commit``, once through the store's native column paths (the
  script's arguments taken from the columns, ``XRANGE`` replies read into columns) and
  once through the kit's defaults (a message per row each way), to measure what the
  native paths give.

Records are ``--size`` bytes with one of 1,000 keys; the clock stops when the last
acknowledgement arrived (produce) or the last record was read (consume). Prints
records/s each way, the ratios and the peak RSS; the last line is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import tempfile
import time
import uuid
from pathlib import Path

from omconnect_redis import RedisTransport
from omconnect_redis.store import RedisLogStore
from omconnect_testbrokers.redis import start_broker

from omconnect.records import TopicPartition
from omconnect.transport import Message
from omconnect.transport.kit.log_store import LogStore


def peak_rss_mib() -> float:
    """Peak resident set size of this process so far, in MiB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def raw(url: str, args: argparse.Namespace) -> tuple[float, float]:
    """(produce records/s, consume records/s) of redis-py used directly."""
    import redis

    client = redis.Redis.from_url(url)
    stream = f"bench-raw-{uuid.uuid4().hex[:8]}"
    payload = b"x" * args.size
    keys = [f"k{i}".encode() for i in range(1000)]
    try:
        started = time.perf_counter()
        pipe = client.pipeline(transaction=False)
        for i in range(args.records):
            pipe.xadd(stream, {"key": keys[i % 1000], "value": payload})
            if (i + 1) % args.batch == 0:
                pipe.execute()
        pipe.execute()
        produced = args.records / (time.perf_counter() - started)
        client.xgroup_create(stream, "bench", id="0")
        started = time.perf_counter()
        count = 0
        while count < args.records:
            reply = client.xreadgroup("bench", "c", {stream: ">"}, count=args.batch,
                                      block=30_000)
            entries = reply[0][1]
            for _entry_id, fields in entries:
                fields[b"value"]
            count += len(entries)
            client.xack(stream, "bench", *(entry_id for entry_id, _ in entries))
        consumed = args.records / (time.perf_counter() - started)
        client.delete(stream)
    finally:
        client.close()
    return produced, consumed


def omconnect(url: str, args: argparse.Namespace) -> tuple[float, float]:
    """(produce records/s, consume records/s) through the omconnect transport API."""
    transport = RedisTransport({"url": url})
    topic = f"bench-omc-{uuid.uuid4().hex[:8]}"
    payload = b"x" * args.size
    try:
        producer = transport.producer()
        started = time.perf_counter()
        futures = []
        for start in range(0, args.records, args.batch):
            futures.append(producer.send(
                [Message(topic, key=f"k{i % 1000}".encode(), value=payload)
                 for i in range(start, min(start + args.batch, args.records))]))
        for future in futures:
            future.result(120)
        produced = args.records / (time.perf_counter() - started)
        consumer = transport.consumer("bench")
        consumer.subscribe([topic])
        started = time.perf_counter()
        count = 0
        while count < args.records:
            messages = consumer.poll(args.batch, 30)
            if not messages:
                raise RuntimeError(f"only {count} of {args.records} records arrived")
            count += len(messages)
            last = messages[-1]
            consumer.commit({TopicPartition(topic, last.partition or 0):
                             (last.offset or 0) + 1})
        consumed = args.records / (time.perf_counter() - started)
    finally:
        transport.close()
    return produced, consumed


def columnar(url: str, args: argparse.Namespace, *, native: bool) -> tuple[float, float]:
    """(produce rows/s, consume rows/s) of ``send_batch`` then ``poll_batch``; with
    ``native`` false, through the kit's default column paths (a message per row).
    """
    import pyarrow as pa

    saved = RedisLogStore.append_runs, RedisLogStore.read_columns
    if not native:
        RedisLogStore.append_runs = LogStore.append_runs  # type: ignore[method-assign]
        RedisLogStore.read_columns = LogStore.read_columns  # type: ignore[method-assign]
    transport = RedisTransport({"url": url})
    topic = f"bench-columns-{uuid.uuid4().hex[:8]}"
    batch = pa.RecordBatch.from_arrays(
        [pa.array([f"k{i % 1000}".encode() for i in range(args.batch)], pa.binary()),
         pa.array([b"x" * args.size] * args.batch, pa.binary())], names=["key", "value"])
    try:
        producer = transport.producer()
        started = time.perf_counter()
        futures = [producer.send_batch(topic, batch)
                   for _ in range(args.records // args.batch)]
        for future in futures:
            future.result(120)
        total = args.records // args.batch * args.batch
        produced = total / (time.perf_counter() - started)
        consumer = transport.consumer("bench")
        consumer.subscribe([topic])
        started = time.perf_counter()
        count = 0
        while count < total:
            polled = consumer.poll_batch(args.batch, 30)
            if not polled.num_rows:
                raise RuntimeError(f"only {count} of {total} rows arrived")
            count += polled.num_rows
            consumer.commit({TopicPartition(topic, 0): polled.column("offset")[-1].as_py()
                             + 1})
        consumed = total / (time.perf_counter() - started)
    finally:
        transport.close()
        RedisLogStore.append_runs, RedisLogStore.read_columns = saved  # type: ignore[method-assign]
    return produced, consumed


def main() -> None:
    """Run the loops and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--size", type=int, default=100)
    parser.add_argument("--batch", type=int, default=2000)
    parser.add_argument("--url", default=None,
                        help="an existing server (default: start redis-server)")
    args = parser.parse_args()
    server = None
    url = args.url
    if url is None:
        server = start_broker(Path(tempfile.mkdtemp(prefix="omc-bench-redis-")))
        url = server.url
    try:
        load = os.getloadavg()[0]
        raw_produce, raw_consume = raw(url, args)
        omc_produce, omc_consume = omconnect(url, args)
        col_produce, col_consume = columnar(url, args, native=True)
        default_produce, default_consume = columnar(url, args, native=False)
        end_load = os.getloadavg()[0]
    finally:
        if server is not None:
            server.stop()
    figures = {
        "benchmark": "transports_redis", "records": args.records, "size": args.size,
        "batch": args.batch, "load_average_at_start": round(load, 2),
        "load_average_at_end": round(end_load, 2),
        "raw_produce_per_s": round(raw_produce), "raw_consume_per_s": round(raw_consume),
        "omconnect_produce_per_s": round(omc_produce),
        "omconnect_consume_per_s": round(omc_consume),
        "produce_ratio": round(omc_produce / raw_produce, 3),
        "consume_ratio": round(omc_consume / raw_consume, 3),
        "columnar_native_produce_per_s": round(col_produce),
        "columnar_native_consume_per_s": round(col_consume),
        "columnar_default_produce_per_s": round(default_produce),
        "columnar_default_consume_per_s": round(default_consume),
        "peak_rss_mib": round(peak_rss_mib(), 1),
    }
    print(f"raw redis-py:       produce {raw_produce:,.0f}/s, consume {raw_consume:,.0f}/s")
    print(f"omconnect API:      produce {omc_produce:,.0f}/s, consume {omc_consume:,.0f}/s")
    print(f"ratio:              produce {figures['produce_ratio']}, "
          f"consume {figures['consume_ratio']}")
    print(f"columnar, native:   send_batch {col_produce:,.0f}/s, poll_batch "
          f"{col_consume:,.0f}/s")
    print(f"columnar, defaults: send_batch {default_produce:,.0f}/s, poll_batch "
          f"{default_consume:,.0f}/s; peak RSS {figures['peak_rss_mib']} MiB")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
