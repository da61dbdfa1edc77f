"""RabbitMQ: the raw pika produce+consume loop vs the omconnect transport API.

Usage::

    python benchmarks/transports_rabbitmq.py [--records 100000] [--size 100]
        [--batch 2000] [--prefetch 1000] [--streams] [--url amqp://...]

Creates a private vhost on the local RabbitMQ server (unless ``--url`` is given) and, on
fresh queues/topics of one partition, runs:

* **raw**: pika as its documentation recommends for throughput with the same guarantees:
  a ``SelectConnection`` with publisher confirms handled asynchronously, persistent
  messages published to a durable queue (classic, or a stream with ``--streams``) with
  the key in a header, done when the last confirm arrived; then a ``basic_consume`` with
  prefetch ``--prefetch`` and manual acknowledgements (``multiple=True`` every
  ``min(--batch, --prefetch / 2)`` deliveries), done when every record arrived.
* **omconnect**: :class:`~omconnect_rabbitmq.RabbitMQTransport` (classic topic, or
  ``rabbitmq.streams=true``): ``send`` of batches of ``--batch`` messages (at most 16
  unacknowledged), waiting for every future; then ``poll`` of batches of ``--batch`` and a
  ``commit`` after each.

Records are ``--size`` bytes with one of 1000 keys. Prints records/s each way, the ratios
omconnect/raw and the peak RSS; the last line is one JSON object with those figures.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import threading
import time
import uuid
from typing import Any

import pika
from omconnect_rabbitmq import RabbitMQTransport
from omconnect_testbrokers.rabbitmq import start_broker

from omconnect.records import TopicPartition
from omconnect.transport import Message, TopicSpec


def peak_rss_mib() -> float:
    """Peak resident set size of this process so far, in MiB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class RawPika:
    """Publish N persistent messages with async confirms, then consume them with acks."""

    def __init__(self, url: str, queue: str, args: argparse.Namespace) -> None:
        self.url, self.queue, self.args = url, queue, args
        self.done = threading.Event()
        self.confirmed = 0
        self.received = 0
        self.channel: Any = None

    def _run(self, on_channel: Any) -> float:
        self.done.clear()
        started: list[float] = []

        def opened(connection: Any) -> None:
            connection.channel(on_open_callback=lambda ch: on_channel(ch, started))

        connection = pika.SelectConnection(pika.URLParameters(self.url),
                                           on_open_callback=opened)
        thread = threading.Thread(target=connection.ioloop.start, daemon=True)
        thread.start()
        if not self.done.wait(600):
            raise RuntimeError("raw pika benchmark did not finish")
        elapsed = time.perf_counter() - started[0]
        connection.ioloop.add_callback_threadsafe(connection.close)
        thread.join(10)
        return elapsed

    def produce(self) -> float:
        """Seconds to publish every record and receive every confirm."""
        args = self.arguments()
        value = b"x" * self.args.size
        keys = [f"key-{i}".encode() for i in range(1000)]

        def on_channel(channel: Any, started: list[float]) -> None:
            def confirmed(frame: Any) -> None:
                method = frame.method
                self.confirmed = method.delivery_tag if method.multiple else max(
                    self.confirmed, method.delivery_tag)
                if self.confirmed >= self.args.records:
                    self.done.set()

            def publish(_frame: Any) -> None:
                started.append(time.perf_counter())
                for i in range(self.args.records):
                    properties = pika.BasicProperties(
                        delivery_mode=2, headers={"key": keys[i % len(keys)]})
                    channel.basic_publish("", self.queue, value, properties)

            def declared(_frame: Any) -> None:
                channel.confirm_delivery(confirmed, callback=publish)

            channel.queue_declare(self.queue, durable=True, arguments=args,
                                  callback=declared)

        return self._run(on_channel)

    def consume(self) -> float:
        """Seconds to receive (and acknowledge) every record."""
        batch = max(1, min(self.args.batch, self.args.prefetch // 2))

        def on_channel(channel: Any, started: list[float]) -> None:
            def on_message(ch: Any, method: Any, _properties: Any, _body: bytes) -> None:
                self.received += 1
                if self.received % batch == 0 or self.received == self.args.records:
                    ch.basic_ack(method.delivery_tag, multiple=True)
                if self.received >= self.args.records:
                    self.done.set()

            def consume(_frame: Any) -> None:
                started.append(time.perf_counter())
                extra = {"x-stream-offset": "first"} if self.args.streams else {}
                channel.basic_consume(self.queue, on_message, arguments=extra)

            channel.basic_qos(prefetch_count=self.args.prefetch, callback=consume)

        return self._run(on_channel)

    def arguments(self) -> dict[str, Any]:
        """The queue's declaration arguments."""
        return {"x-queue-type": "stream"} if self.args.streams else {}


def raw(url: str, args: argparse.Namespace) -> tuple[float, float]:
    bench = RawPika(url, f"raw-{uuid.uuid4().hex[:8]}", args)
    produce = bench.produce()
    consume = bench.consume()
    return args.records / produce, args.records / consume


def omconnect(url: str, args: argparse.Namespace) -> tuple[float, float]:
    options: dict[str, Any] = {"url": url, "prefetch": args.prefetch}
    if args.streams:
        options["streams"] = True
    transport = RabbitMQTransport(options)
    topic, group = f"omc-{uuid.uuid4().hex[:8]}", "bench"
    transport.admin().create_topics([TopicSpec(topic, 1)])
    consumer = transport.consumer(group)
    consumer.subscribe([topic])  # classic: the group's queue exists before producing
    consumer.poll(1, 0.5)
    value = b"x" * args.size
    keys = [f"key-{i}".encode() for i in range(1000)]
    producer = transport.producer()
    futures = []
    started = time.perf_counter()
    sent = 0
    while sent < args.records:
        count = min(args.batch, args.records - sent)
        futures.append(producer.send([Message(topic, keys[(sent + i) % 1000], value)
                                      for i in range(count)]))
        sent += count
        if len(futures) >= 16:
            futures.pop(0).result()
    for future in futures:
        future.result()
    produce = time.perf_counter() - started
    producer.close()
    received = 0
    started = time.perf_counter()
    while received < args.records:
        messages = consumer.poll(args.batch, 5.0)
        if not messages:
            raise RuntimeError(f"omconnect consumer stalled at {received} records")
        received += len(messages)
        last = messages[-1]
        consumer.commit({TopicPartition(topic, last.partition or 0): (last.offset or 0) + 1})
    consume = time.perf_counter() - started
    consumer.close()
    transport.close()
    return args.records / produce, args.records / consume


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--size", type=int, default=100)
    parser.add_argument("--batch", type=int, default=2000)
    parser.add_argument("--prefetch", type=int, default=1000)
    parser.add_argument("--streams", action="store_true")
    parser.add_argument("--url", default=None)
    args = parser.parse_args()
    broker = None
    url = args.url
    if url is None:
        broker = start_broker()
        url = broker.url
    try:
        load = os.getloadavg()[0]
        raw_produce, raw_consume = raw(url, args)
        omc_produce, omc_consume = omconnect(url, args)
    finally:
        if broker is not None:
            broker.stop()
    figures = {
        "benchmark": "transports_rabbitmq", "records": args.records, "size": args.size,
        "mode": "streams" if args.streams else "classic", "prefetch": args.prefetch,
        "load_average_at_start": round(load, 2),
        "raw_produce_per_s": round(raw_produce), "raw_consume_per_s": round(raw_consume),
        "omconnect_produce_per_s": round(omc_produce),
        "omconnect_consume_per_s": round(omc_consume),
        "produce_ratio": round(omc_produce / raw_produce, 3),
        "consume_ratio": round(omc_consume / raw_consume, 3),
        "peak_rss_mib": round(peak_rss_mib(), 1),
    }
    print(f"raw pika:      produce {raw_produce:,.0f}/s, consume {raw_consume:,.0f}/s")
    print(f"omconnect API: produce {omc_produce:,.0f}/s, consume {omc_consume:,.0f}/s")
    print(f"ratio:         produce {figures['produce_ratio']}, "
          f"consume {figures['consume_ratio']}; peak RSS {figures['peak_rss_mib']} MiB")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
