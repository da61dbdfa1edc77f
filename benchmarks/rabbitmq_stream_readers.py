"""Reading one RabbitMQ stream partition: omconnect's AMQP 0-9-1 consumer vs stream-protocol
clients.

Usage::

    python benchmarks/rabbitmq_stream_readers.py [--records 200000]
        [--url amqp://guest:guest@127.0.0.1:5672/%2F] [--stream-port 5552]

Setup (not timed): ``--records`` JSON orders of about 100 bytes, each with a key, are sent
through omconnect's RabbitMQ transport (stream topics) to a topic of one partition, as
the Spark benchmark's producer does. Then the same stream queue is read whole, one
reader after the other, each timed from its subscription to the last record:

* ``omconnect``: the transport's consumer (``assign`` + ``poll_batch``), which reads
  streams over AMQP 0-9-1 with pika (one delivery callback per message);
* ``rstream`` (MIT; ``pip install rstream``), RabbitMQ's stream protocol (needs the
  broker's ``rabbitmq_stream`` plugin): ``raw`` hands each message's encoded AMQP 1.0
  bytes over undecoded, ``decoded`` with its AMQP 1.0 decoder, reading the key from the
  application properties;
* ``rbfly`` (GPLv3+; ``pip install rbfly``), the stream protocol with a compiled AMQP
  1.0 codec: ``raw`` and ``decoded`` the same way.

A reader whose library is not installed is left out and named. This measures what a
stream-protocol reader could reach before one is built into the transport: the records
a client gives a Python program per second, one partition, one core. Prints records/s
and CPU seconds of each; the last line is one JSON object with those figures.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import os
import sys
import time
import uuid
from collections.abc import Callable
from typing import Any

from omconnect.records import TopicPartition
from omconnect.transport import Message, TopicSpec
from omconnect.transport.opening import open_transport

VALUE = json.dumps({"id": 1, "customer": "c-00001", "item": "sku-0001", "qty": 3,
                    "price": 12.5, "note": "xxxxxxxx"}, separators=(",", ":")).encode()


def prepare(url: str, records: int) -> tuple[str, str]:
    """Send the records; the topic's name and its partition's stream queue."""
    topic = f"readers-{uuid.uuid4().hex[:8]}"
    transport = open_transport({"transport": "rabbitmq", "rabbitmq.url": url,
                                "rabbitmq.streams": "true"})
    try:
        admin = transport.admin()
        admin.create_topics([TopicSpec(topic, 1)])
        admin.close()
        producer = transport.producer()
        futures = [producer.send([Message(topic, f"k{i + j}".encode(), VALUE)
                                  for j in range(min(1000, records - i))])
                   for i in range(0, records, 1000)]
        for future in futures:
            future.result()
        producer.close()
    finally:
        transport.close()
    from omconnect_rabbitmq.topology import stream_queue

    return topic, stream_queue(topic, 0)


def timed(read: Callable[[], int], records: int) -> dict[str, float]:
    started, cpu = time.perf_counter(), time.process_time()
    got = read()
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    if got < records:
        raise SystemExit(f"read {got} of {records} records")
    return {"records_per_s": round(records / elapsed), "cpu_s": round(cpu, 2)}


def read_omconnect(url: str, topic: str, records: int) -> int:
    transport = open_transport({"transport": "rabbitmq", "rabbitmq.url": url,
                                "rabbitmq.streams": "true"})
    try:
        consumer = transport.consumer(None)
        consumer.assign([TopicPartition(topic, 0)])
        consumer.seek(TopicPartition(topic, 0), 0)
        got = 0
        while got < records:
            got += consumer.poll_batch(2000, 5.0).num_rows
        consumer.close()
        return got
    finally:
        transport.close()


def read_rstream(port: int, queue: str, records: int, decode: bool) -> int:
    import rstream

    async def run() -> int:
        done = asyncio.Event()
        keys: list[Any] = []
        values: list[Any] = []

        async def on_message(message: Any, context: Any) -> None:
            if decode:
                properties = message.application_properties or {}
                keys.append(properties.get(b"omc-key"))
                values.append(bytes(message.body))
            else:
                values.append(message)
            if len(values) >= records:
                done.set()

        consumer = rstream.Consumer("127.0.0.1", port=port, username="guest",
                                    password="guest")
        await consumer.start()
        await consumer.subscribe(
            queue, on_message,
            offset_specification=rstream.ConsumerOffsetSpecification(
                rstream.OffsetType.FIRST, None),
            decoder=rstream.amqp_decoder if decode else None)
        await asyncio.wait_for(done.wait(), 600)
        await consumer.close()
        return len(values)

    return asyncio.run(run())


def read_rbfly(port: int, queue: str, records: int, decode: bool) -> int:
    import rbfly.streams as streams

    async def run() -> int:
        client = streams.streams_client(f"rabbitmq-stream://guest:guest@127.0.0.1:{port}/")
        keys: list[Any] = []
        values: list[Any] = []
        async for message in client.subscribe(queue, offset=streams.Offset.FIRST,
                                              amqp=decode):
            if decode:
                keys.append(streams.get_message_ctx().app_properties.get("omc-key"))
            values.append(message)
            if len(values) >= records:
                break
        await client.disconnect()
        return len(values)

    return asyncio.run(run())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--url", default="amqp://guest:guest@127.0.0.1:5672/%2F")
    parser.add_argument("--stream-port", type=int, default=5552)
    args = parser.parse_args()
    topic, queue = prepare(args.url, args.records)
    load = os.getloadavg()[0]
    results: dict[str, Any] = {}
    missing = []
    results["omconnect"] = timed(lambda: read_omconnect(args.url, topic, args.records),
                                 args.records)
    for library, read in (("rstream", read_rstream), ("rbfly", read_rbfly)):
        if importlib.util.find_spec(library.split(".")[0]) is None:
            missing.append(library)
            continue
        for decode in (False, True):
            name = f"{library}_{'decoded' if decode else 'raw'}"
            results[name] = timed(
                lambda read=read, decode=decode: read(args.stream_port, queue, args.records,
                                                      decode), args.records)
    for name, figures in results.items():
        print(f"{name:>16}: {figures['records_per_s']:>9,} records/s "
              f"({figures['cpu_s']:.2f} s CPU)")
    if missing:
        print(f"not installed, left out: {', '.join(missing)}", file=sys.stderr)
    print(json.dumps({"benchmark": "rabbitmq_stream_readers", "records": args.records,
                      "load_average_at_start": round(load, 2), "readers": results,
                      "left_out": missing}))


if __name__ == "__main__":
    main()
