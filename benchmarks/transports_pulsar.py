"""Pulsar: the raw pulsar-client produce+consume loop vs the omconnect transport API.

Usage::

    python benchmarks/transports_pulsar.py [--records 100000] [--size 100]
        [--batch 2000] [--subscription Shared] [--url pulsar://...]

Starts a pulsar-lite broker (unless ``--url`` is given) and, on fresh topics, runs:

* **raw**: pulsar-client as its documentation shows it: one producer with batching and
  ``block_if_queue_full``, ``send_async`` per record, ``flush``; then one consumer
  (``--subscription``) that receives and acknowledges every record.
* **omconnect**: :class:`~omconnect_pulsar.PulsarTransport` with the same producer
  settings: ``send`` of batches of ``--batch`` messages, waiting for every batch's
  future; then ``poll`` of batches and ``commit`` after each.

Records are ``--size`` bytes with a key; the clock stops when the last acknowledgement
arrived (produce) or the last record was read (consume). Prints records/s each way, the
ratios omconnect/raw and the peak RSS; the last line is one JSON object with those
figures. The default subscription is Shared because pulsar-lite delivers duplicates to
Failover subscriptions when the producer batches (see docs/transports/pulsar.md).
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
from typing import Any

from omconnect_pulsar import PulsarTransport
from omconnect_testbrokers.pulsar import start_broker

from omconnect.records import TopicPartition
from omconnect.transport import Message


def peak_rss_mib() -> float:
    """Peak resident set size of this process so far, in MiB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def raw(url: str, args: argparse.Namespace) -> tuple[float, float]:
    """(produce records/s, consume records/s) of pulsar-client used directly."""
    import pulsar

    client = pulsar.Client(url, logger=pulsar.ConsoleLogger(pulsar.LoggerLevel.Error))
    topic = f"persistent://public/default/bench-raw-{uuid.uuid4().hex[:8]}"
    payload = b"x" * args.size
    try:
        producer = client.create_producer(topic, batching_enabled=True,
                                          block_if_queue_full=True,
                                          max_pending_messages=10_000)
        acked = [0]

        def done(result: Any, message_id: Any) -> None:
            acked[0] += 1

        started = time.perf_counter()
        for i in range(args.records):
            producer.send_async(payload, done, partition_key=f"k{i % 1000}")
        producer.flush()
        while acked[0] < args.records:
            time.sleep(0.001)
        produced = args.records / (time.perf_counter() - started)
        consumer = client.subscribe(topic, "bench",
                                    consumer_type=getattr(pulsar.ConsumerType,
                                                          args.subscription),
                                    initial_position=pulsar.InitialPosition.Earliest)
        started = time.perf_counter()
        for _ in range(args.records):
            message = consumer.receive(30_000)
            message.data()
            consumer.acknowledge(message)
        consumed = args.records / (time.perf_counter() - started)
    finally:
        client.close()
    return produced, consumed


def omconnect(url: str, args: argparse.Namespace) -> tuple[float, float]:
    """(produce records/s, consume records/s) through the omconnect transport API."""
    transport = PulsarTransport({"service.url": url, "subscription.type": args.subscription,
                                 "max.pending.messages": 10_000})
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
            positions: dict[TopicPartition, int] = {}
            for message in messages:
                positions[TopicPartition(message.topic, message.partition or 0)] = \
                    (message.offset or 0) + 1
            consumer.commit(positions)
        consumed = args.records / (time.perf_counter() - started)
    finally:
        transport.close()
    return produced, consumed


def main() -> None:
    """Run both loops and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--size", type=int, default=100)
    parser.add_argument("--batch", type=int, default=2000)
    parser.add_argument("--subscription", default="Shared", choices=["Shared", "Failover"])
    parser.add_argument("--url", default=None, help="an existing broker (default: start "
                                                    "pulsar-lite)")
    args = parser.parse_args()
    broker = None
    url = args.url
    if url is None:
        broker = start_broker(Path(tempfile.mkdtemp(prefix="omc-bench-pulsar-")))
        url = broker.url
    try:
        load = os.getloadavg()[0]
        raw_produce, raw_consume = raw(url, args)
        omc_produce, omc_consume = omconnect(url, args)
    finally:
        if broker is not None:
            broker.stop()
    figures = {
        "benchmark": "transports_pulsar", "records": args.records, "size": args.size,
        "subscription": args.subscription, "load_average_at_start": round(load, 2),
        "raw_produce_per_s": round(raw_produce), "raw_consume_per_s": round(raw_consume),
        "omconnect_produce_per_s": round(omc_produce),
        "omconnect_consume_per_s": round(omc_consume),
        "produce_ratio": round(omc_produce / raw_produce, 3),
        "consume_ratio": round(omc_consume / raw_consume, 3),
        "peak_rss_mib": round(peak_rss_mib(), 1),
    }
    print(f"raw pulsar-client: produce {raw_produce:,.0f}/s, consume {raw_consume:,.0f}/s")
    print(f"omconnect API:     produce {omc_produce:,.0f}/s, consume {omc_consume:,.0f}/s")
    print(f"ratio:             produce {figures['produce_ratio']}, "
          f"consume {figures['consume_ratio']}; peak RSS {figures['peak_rss_mib']} MiB")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
