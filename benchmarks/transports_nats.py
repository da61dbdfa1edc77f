"""NATS JetStream: the raw nats-py loop vs the omconnect transport API, per message and
columnar.

Usage::

    python benchmarks/transports_nats.py [--records 100000] [--size 100]
        [--batch 2000] [--url nats://...]

Starts a nats-server with JetStream (unless ``--url`` is given) and, on fresh topics,
runs:

* **raw**: nats-py producing and consuming at once (``raw_concurrent.nats_py``:
  ``publish_async`` per record; a durable pull consumer fetching ``--batch`` and
  acknowledging the last of each batch).
* **send / poll**: :class:`~omconnect_nats.NatsTransport`'s ``send`` of batches of
  ``--batch`` messages (waiting for every future at the end), then ``poll`` of
  batches with a ``commit`` after each.
* **send_batch / poll_batch**: the columnar calls on Arrow batches of ``--batch`` rows,
  as the transport implements them (rows published from the columns; consumed batches
  built from the client's messages), and **before**: the SPI's defaults
  (``Producer.send_batch`` through ``send`` with a ``Message`` per row,
  ``Consumer.poll_batch`` through ``poll``) on the same transport.

Records are ``--size`` bytes with one of 1000 keys; the clock stops when the last
acknowledgement arrived (produce) or the last record was read (consume). Prints
records/s of each, the ratios to raw and the machine's load average; the last line is
one JSON object with those figures.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from omconnect_nats import NatsTransport

from omconnect.records import TopicPartition
from omconnect.transport import Message
from omconnect.transport.spi import Consumer, Producer


def _commit_rows(consumer: Any, topics: list[str], partitions: list[int],
                 offsets: list[int]) -> None:
    positions: dict[TopicPartition, int] = {}
    for topic, partition, offset in zip(topics, partitions, offsets, strict=True):
        positions[TopicPartition(topic, partition)] = offset + 1
    consumer.commit(positions)


def per_message(transport: NatsTransport, args: argparse.Namespace) -> tuple[float, float]:
    """(produce records/s, consume records/s) with ``send`` and ``poll``."""
    topic = f"bench-{uuid.uuid4().hex[:8]}"
    payload = b"x" * args.size
    producer = transport.producer()
    started = time.perf_counter()
    futures = [producer.send([Message(topic, key=f"k{i % 1000}".encode(), value=payload)
                              for i in range(start, min(start + args.batch, args.records))])
               for start in range(0, args.records, args.batch)]
    for future in futures:
        future.result(120)
    produced = args.records / (time.perf_counter() - started)
    consumer = transport.consumer(f"bench-{topic}")
    consumer.subscribe([topic])
    started = time.perf_counter()
    count = 0
    while count < args.records:
        messages = consumer.poll(args.batch, 30)
        if not messages:
            raise RuntimeError(f"only {count} of {args.records} records arrived")
        count += len(messages)
        _commit_rows(consumer, [m.topic for m in messages],
                     [m.partition or 0 for m in messages], [m.offset or 0 for m in messages])
    consumed = args.records / (time.perf_counter() - started)
    consumer.close()
    return produced, consumed


def columnar(transport: NatsTransport, args: argparse.Namespace, *, native: bool
             ) -> tuple[float, float]:
    """(produce, consume) records/s with ``send_batch`` and ``poll_batch``: the
    transport's own (``native``) or the SPI's defaults through ``send``/``poll``.
    """
    import pyarrow as pa

    topic = f"bench-{uuid.uuid4().hex[:8]}"
    keys = [f"k{i}".encode() for i in range(1000)]
    batches = []
    for start in range(0, args.records, args.batch):
        rows = range(start, min(start + args.batch, args.records))
        batches.append(pa.RecordBatch.from_pydict({
            "key": pa.array([keys[i % 1000] for i in rows], pa.binary()),
            "value": pa.array([b"x" * args.size] * len(rows), pa.binary())}))
    producer = transport.producer()
    send: Callable[[str, Any], Any] = (producer.send_batch if native else
                                       lambda t, b: Producer.send_batch(producer, t, b))
    started = time.perf_counter()
    futures = [send(topic, batch) for batch in batches]
    for future in futures:
        future.result(120)
    produced = args.records / (time.perf_counter() - started)
    consumer = transport.consumer(f"bench-{topic}")
    consumer.subscribe([topic])
    poll: Callable[[int, float], Any] = (consumer.poll_batch if native else
                                         lambda n, t: Consumer.poll_batch(consumer, n, t))
    started = time.perf_counter()
    count = 0
    while count < args.records:
        batch = poll(args.batch, 30)
        if not batch.num_rows:
            raise RuntimeError(f"only {count} of {args.records} records arrived")
        count += batch.num_rows
        _commit_rows(consumer, batch.column("topic").to_pylist(),
                     batch.column("partition").to_pylist(),
                     batch.column("offset").to_pylist())
    consumed = args.records / (time.perf_counter() - started)
    consumer.close()
    return produced, consumed


def main() -> None:
    """Run every loop and print the figures."""
    import raw_concurrent

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--size", type=int, default=100)
    parser.add_argument("--batch", type=int, default=2000)
    parser.add_argument("--url", default=None, help="an existing server (default: start "
                                                    "nats-server)")
    args = parser.parse_args()
    broker = None
    url = args.url
    if url is None:
        from omconnect_testbrokers.nats import start_broker

        broker = start_broker(Path(tempfile.mkdtemp(prefix="omc-bench-nats-")))
        url = broker.url
    figures: dict[str, Any] = {"benchmark": "transports_nats", "records": args.records,
                               "size": args.size, "batch": args.batch}
    try:
        figures["load_average_at_start"] = round(os.getloadavg()[0], 2)
        raw = raw_concurrent.nats_py(url, args)["records_per_s"]
        transport = NatsTransport({"servers": url})
        try:
            loops = {"messages": per_message(transport, args),
                     "columnar_default": columnar(transport, args, native=False),
                     "columnar": columnar(transport, args, native=True)}
        finally:
            transport.close()
        figures["load_average_at_end"] = round(os.getloadavg()[0], 2)
    finally:
        if broker is not None:
            broker.stop()
    figures["raw_concurrent_per_s"] = round(raw)
    print(f"raw nats-py (produce and consume at once): {raw:,.0f} records/s")
    for name, (produce, consume) in loops.items():
        figures[f"{name}_produce_per_s"] = round(produce)
        figures[f"{name}_consume_per_s"] = round(consume)
        both = args.records / (args.records / produce + args.records / consume)
        figures[f"{name}_records_per_s"] = round(both)
        print(f"{name:17s} produce {produce:>9,.0f}/s, consume {consume:>9,.0f}/s "
              f"(end to end {both:,.0f}/s, {both / raw:.2f} of raw)")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
