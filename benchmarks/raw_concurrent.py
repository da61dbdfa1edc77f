"""Each broker's raw client producing and consuming at the same time, as the runtime does.

Used by ``benchmarks/transports.py`` for its **raw** row: a producer thread sends
``--records`` values of ``--size`` bytes (one of 1000 keys) with the client's own API
while the main thread consumes them in a group (committing or acknowledging as the
transport does), and the clock runs from the group's subscription (joins included, as
the runtime's clock includes its sink's join) to the last record received. Each loop is
written the way the client's documentation shows, with the settings the transport uses.
"""

from __future__ import annotations

import argparse
import threading
import time
import uuid
from typing import Any

__all__ = ["kafka_confluent", "kafka_python", "nats_py", "pulsar_client", "rabbitmq_pika",
           "redis_py"]

GROUP_OPTIONS = {"session.timeout.ms": 3000, "heartbeat.interval.ms": 500}


def _payload(args: argparse.Namespace) -> tuple[bytes, list[bytes]]:
    return b"x" * args.size, [f"k{i}".encode() for i in range(1000)]


def _finish(started: float, args: argparse.Namespace, errors: list[BaseException]
            ) -> dict[str, float]:
    if errors:
        raise errors[0]
    seconds = time.perf_counter() - started
    return {"records_per_s": args.records / seconds, "seconds": seconds}


def kafka_confluent(url: str, topic: str, args: argparse.Namespace) -> dict[str, float]:
    """confluent-kafka: ``produce`` per record with a delivery callback on a producer
    thread; ``consume`` of ``--batch`` and a synchronous commit after each, at once.
    """
    import confluent_kafka

    payload, keys = _payload(args)
    producer = confluent_kafka.Producer({"bootstrap.servers": url, "acks": "all",
                                         "partitioner": "murmur2_random"})
    consumer = confluent_kafka.Consumer({
        "bootstrap.servers": url, "group.id": f"raw-{topic}", "enable.auto.commit": False,
        "auto.offset.reset": "earliest", **GROUP_OPTIONS})
    errors: list[BaseException] = []

    def produce() -> None:
        try:
            for i in range(args.records):
                while True:
                    try:
                        producer.produce(topic, payload, keys[i % 1000],
                                         on_delivery=lambda error, message: None)
                        break
                    except BufferError:
                        producer.poll(0.01)
                if i % 1000 == 0:
                    producer.poll(0)
            producer.flush()
        except BaseException as exc:
            errors.append(exc)

    started = time.perf_counter()
    consumer.subscribe([topic])
    thread = threading.Thread(target=produce)
    thread.start()
    received = 0
    while received < args.records and not errors:
        batch = consumer.consume(args.batch, 1.0)
        if batch:
            received += sum(1 for m in batch if m.error() is None)
            consumer.commit(asynchronous=False)
    result = _finish(started, args, errors)
    thread.join()
    consumer.close()
    return result


def kafka_python(url: str, topic: str, args: argparse.Namespace) -> dict[str, float]:
    """kafka-python: ``send`` per record on a producer thread, then ``flush``; ``poll``
    of ``--batch`` and ``commit`` after each, at once.
    """
    import kafka

    payload, keys = _payload(args)
    producer = kafka.KafkaProducer(bootstrap_servers=url, acks="all")
    consumer = kafka.KafkaConsumer(
        bootstrap_servers=url, group_id=f"raw-{topic}", enable_auto_commit=False,
        auto_offset_reset="earliest", session_timeout_ms=6000, heartbeat_interval_ms=1000)
    errors: list[BaseException] = []

    def produce() -> None:
        try:
            for i in range(args.records):
                producer.send(topic, payload, key=keys[i % 1000])
            producer.flush()
        except BaseException as exc:
            errors.append(exc)

    started = time.perf_counter()
    consumer.subscribe([topic])
    thread = threading.Thread(target=produce)
    thread.start()
    received = 0
    while received < args.records and not errors:
        polled = consumer.poll(timeout_ms=1000, max_records=args.batch)
        count = sum(len(records) for records in polled.values())
        if count:
            received += count
            consumer.commit()
    result = _finish(started, args, errors)
    thread.join()
    producer.close()
    consumer.close()
    return result


def rabbitmq_pika(url: str, args: argparse.Namespace) -> dict[str, float]:
    """pika: persistent messages published with publisher confirms on one connection's
    thread, consumed with a prefetch and multiple acks on another, at once, from one
    durable classic queue.
    """
    import pika
    import transports_rabbitmq

    queue = f"raw-{uuid.uuid4().hex[:8]}"
    with pika.BlockingConnection(pika.URLParameters(url)) as connection:
        connection.channel().queue_declare(queue, durable=True)
    producer = transports_rabbitmq.RawPika(url, queue, args)
    consumer = transports_rabbitmq.RawPika(url, queue, args)
    errors: list[BaseException] = []

    def produce() -> None:
        try:
            producer.produce()
        except BaseException as exc:
            errors.append(exc)

    started = time.perf_counter()
    thread = threading.Thread(target=produce)
    thread.start()
    consumer.consume()
    result = _finish(started, args, errors)
    thread.join()
    return result


def pulsar_client(url: str, args: argparse.Namespace) -> dict[str, float]:
    """pulsar-client: ``send_async`` with batching on a producer thread; ``receive`` and
    ``acknowledge`` per message on a Shared subscription, at once.
    """
    import pulsar

    client = pulsar.Client(url, logger=pulsar.ConsoleLogger(pulsar.LoggerLevel.Error))
    topic = f"persistent://public/default/raw-{uuid.uuid4().hex[:8]}"
    payload, keys = _payload(args)
    errors: list[BaseException] = []
    try:
        started = time.perf_counter()
        consumer = client.subscribe(topic, "raw", consumer_type=pulsar.ConsumerType.Shared,
                                    initial_position=pulsar.InitialPosition.Earliest)
        producer = client.create_producer(topic, batching_enabled=True,
                                          block_if_queue_full=True,
                                          max_pending_messages=10_000)

        def produce() -> None:
            try:
                for i in range(args.records):
                    producer.send_async(payload, lambda result, message_id: None,
                                        partition_key=keys[i % 1000].decode())
                producer.flush()
            except BaseException as exc:
                errors.append(exc)

        thread = threading.Thread(target=produce)
        thread.start()
        for _ in range(args.records):
            if errors:
                break
            message = consumer.receive(30_000)
            message.data()
            consumer.acknowledge(message)
        result = _finish(started, args, errors)
        thread.join()
    finally:
        client.close()
    return result


def redis_py(url: str, args: argparse.Namespace) -> dict[str, float]:
    """redis-py: ``XADD`` of every record through a pipeline flushed every ``--batch``
    records on a producer thread; a consumer group reading with ``XREADGROUP`` (``COUNT
    --batch``, ``BLOCK``) and ``XACK`` of every batch, at once.
    """
    import redis

    stream = f"raw-{uuid.uuid4().hex[:8]}"
    producer = redis.Redis.from_url(url)
    consumer = redis.Redis.from_url(url)
    payload, keys = _payload(args)
    errors: list[BaseException] = []

    def produce() -> None:
        try:
            pipe = producer.pipeline(transaction=False)
            for i in range(args.records):
                pipe.xadd(stream, {"key": keys[i % 1000], "value": payload})
                if (i + 1) % args.batch == 0:
                    pipe.execute()
            pipe.execute()
        except BaseException as exc:
            errors.append(exc)

    try:
        started = time.perf_counter()
        consumer.xgroup_create(stream, "raw", id="0", mkstream=True)
        thread = threading.Thread(target=produce)
        thread.start()
        received = 0
        while received < args.records and not errors:
            reply = consumer.xreadgroup("raw", "c", {stream: ">"}, count=args.batch,
                                        block=1000)
            if not reply:
                continue
            entries = reply[0][1]
            for _entry_id, fields in entries:
                fields[b"value"]
            received += len(entries)
            consumer.xack(stream, "raw", *(entry_id for entry_id, _ in entries))
        result = _finish(started, args, errors)
        thread.join()
        consumer.delete(stream)
    finally:
        producer.close()
        consumer.close()
    return result


def embedded(args: argparse.Namespace) -> dict[str, Any]:
    """The embedded transport has no other client: its columnar API loop, the faster one
    (``pipeline.run_raw_columnar``), is its raw loop.
    """
    import pipeline

    return pipeline.run_raw_columnar(args)


def nats_py(url: str, args: argparse.Namespace) -> dict[str, float]:
    """nats-py (asyncio): ``publish_async`` per record (JetStream acknowledges each) in a
    producer task; a durable pull consumer (``AckPolicy.ALL``) that ``fetch``es
    ``--batch`` and acknowledges the last message of each batch (the batch's commit), at
    once, each on a connection of its own.
    """
    import asyncio

    import nats
    from nats.js.api import AckPolicy, ConsumerConfig, StorageType, StreamConfig

    payload, _ = _payload(args)
    name = f"raw-{uuid.uuid4().hex[:8]}"
    subject = f"{name}.0"

    async def run() -> dict[str, float]:
        producer_nc = await nats.connect(url)
        consumer_nc = await nats.connect(url)
        js = producer_nc.jetstream()
        await js.add_stream(StreamConfig(name=name, subjects=[subject],
                                         storage=StorageType.FILE))
        try:
            started = time.perf_counter()
            subscription = await consumer_nc.jetstream().pull_subscribe(
                subject, durable="raw", config=ConsumerConfig(ack_policy=AckPolicy.ALL,
                                                              max_ack_pending=-1))

            async def produce() -> None:
                for _ in range(args.records):
                    await js.publish_async(subject, payload)
                await js.publish_async_completed()

            task = asyncio.create_task(produce())
            received = 0
            while received < args.records:
                try:
                    messages = await subscription.fetch(args.batch, timeout=1.0)
                except nats.errors.TimeoutError:
                    continue
                received += len(messages)
                await messages[-1].ack()
            await task
            return _finish(started, args, [])
        finally:
            await js.delete_stream(name)
            await producer_nc.close()
            await consumer_nc.close()

    return asyncio.run(run())
