"""Batch and streaming reads, and writes, through Spark on the broker transports.

Replayable (exactly-once ranges): Kafka on Tansu, RabbitMQ with stream queues, Redis
Streams (one cheap case, marked ``redis`` too). Not
replayable (group mode, at-least-once): RabbitMQ classic queues, Pulsar (the transport
declares ``replayable=False``). Each broker is started by its transport's own launcher;
a transport package that is not there is skipped, naming it.
"""

from __future__ import annotations

import importlib
import uuid
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest
from spark_helpers import order, values_of

from omconnect.runtime.worker_config import WorkerConfig
from omconnect.transport import Message, TopicSpec
from omconnect.transport.spi import Transport

pytestmark = pytest.mark.spark

@attrs.frozen
class Target:
    """A transport and the options that point it at a test broker."""

    name: str
    options: dict[str, Any]
    replayable: bool
    partitions: int
    single_message_tail: bool = False  # Tansu: see tansu_end_offsets below
    subscribe_defect: str | None = None  # a broker defect that can time out a subscribe

    def open(self) -> Transport:
        worker = {"transport": self.name, **{f"{self.name}.{k}": v
                                             for k, v in self.options.items()}}
        return WorkerConfig.parse(worker).open_transport()

    def spark_options(self) -> dict[str, str]:
        return {"transport": self.name, **{f"{self.name}.{k}": str(v)
                                           for k, v in self.options.items()}}


def _testing(module: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        pytest.skip(f"{module} is not there (or its client library is missing): {exc}")


@pytest.fixture(scope="module")
def tansu(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    testing = _testing("omconnect_testbrokers.kafka")
    _testing("kafka")
    broker = testing.start_broker(tmp_path_factory.mktemp("tansu"))
    yield broker
    broker.stop()


@pytest.fixture(scope="module")
def rabbitmq() -> Iterator[Any]:
    testing = _testing("omconnect_testbrokers.rabbitmq")
    _testing("pika")
    testing.ensure_server_running()
    broker = testing.start_broker()
    yield broker
    broker.stop()


@pytest.fixture(scope="module")
def pulsar(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    testing = _testing("omconnect_testbrokers.pulsar")
    _testing("pulsar")
    broker = testing.start_broker(tmp_path_factory.mktemp("pulsar-lite"))
    yield broker
    broker.stop()


@pytest.fixture(scope="module")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    testing = _testing("omconnect_testbrokers.redis")
    _testing("redis")
    server = testing.start_broker(tmp_path_factory.mktemp("redis"))
    yield server
    server.stop()


def kafka_target(request: pytest.FixtureRequest) -> Target:
    broker = request.getfixturevalue("tansu")
    from omconnect_testbrokers.kafka import TEST_CLIENT_OPTIONS

    return Target("kafka", {"bootstrap.servers": broker.url, **TEST_CLIENT_OPTIONS},
                  replayable=True, partitions=2, single_message_tail=True)


def rabbitmq_streams_target(request: pytest.FixtureRequest) -> Target:
    broker = request.getfixturevalue("rabbitmq")
    return Target("rabbitmq", {"url": broker.url, "streams": "true"}, replayable=True,
                  partitions=2)


def rabbitmq_classic_target(request: pytest.FixtureRequest) -> Target:
    broker = request.getfixturevalue("rabbitmq")
    return Target("rabbitmq", {"url": broker.url, "streams": "false",
                               "declare.groups": "spark-group",
                               "heartbeat.interval.ms": 200, "session.timeout.ms": 2000},
                  replayable=False, partitions=2)


def pulsar_target(request: pytest.FixtureRequest) -> Target:
    broker = request.getfixturevalue("pulsar")
    from omconnect_testbrokers.pulsar import (
        SECOND_CONNECTION_SUBSCRIBE_DEFECT,
        lite_profile_options,
    )

    # A longer operation timeout than the lite profile's 10 s: on a loaded 2-core machine
    # pulsar-lite has answered a subscribe in more than 10 s.
    return Target("pulsar", {**lite_profile_options(broker.url), "operation.timeout.ms": 30000},
                  replayable=False, partitions=1,
                  subscribe_defect=SECOND_CONNECTION_SUBSCRIBE_DEFECT)


TARGETS = {
    "kafka": kafka_target,
    "rabbitmq-streams": rabbitmq_streams_target,
    "rabbitmq-classic": rabbitmq_classic_target,
    "pulsar": pulsar_target,
}


@pytest.fixture(params=list(TARGETS))
def target(request: pytest.FixtureRequest) -> Target:
    return TARGETS[request.param](request)


@pytest.fixture
def topic() -> str:
    return f"spark-{uuid.uuid4().hex[:8]}"


def create(target: Target, topic: str) -> None:
    with target.open() as transport:
        admin = transport.admin()
        try:
            admin.create_topics([TopicSpec(topic, target.partitions)])
        finally:
            admin.close()


def produce(target: Target, topic: str, numbers: range) -> None:
    """Send one order per number. For Tansu, each partition's last message goes in a
    send of its own (see :func:`test_tansu_end_offsets_count_batches_not_records`).
    """
    with target.open() as transport:
        producer = transport.producer()
        try:
            messages = [Message(topic, f"k{i}".encode(), order(i),
                                partition=i % target.partitions) for i in numbers]
            if not target.single_message_tail:
                producer.send(messages).result(timeout=60)
                return
            tails = {m.partition: m for m in messages}
            rest = [m for m in messages if m not in tails.values()]
            if rest:
                producer.send(rest).result(timeout=60)
            for message in tails.values():
                producer.send([message]).result(timeout=60)
        finally:
            producer.close()


def stream_to_parquet(spark, target: Target, topic: str, out: Path, checkpoint: Path,
                      **options: str) -> None:
    frame = (spark.readStream.format("omconnect").options(**target.spark_options())
             .option("topics", topic).option("groupId", "spark-group")
             .option("startingOffsets", "earliest").option("readTimeoutMs", "30000")
             .option("groupPollTimeoutMs", "5000").options(**options).load())
    for attempt in (1, 2):
        query = (frame.writeStream.format("parquet").option("path", str(out))
                 .option("checkpointLocation", str(checkpoint)).trigger(availableNow=True)
                 .start())
        try:
            query.awaitTermination(300)
            return
        except Exception as exc:
            # pulsar-lite at times never answers the driver's subscribe (the known defect
            # below, seen here when the group's previous consumer had just closed): the
            # query fails as it should, and is restarted once, as an operator would.
            if attempt == 2 or not target.subscribe_defect or "subscribing group" not in str(exc):
                raise
            warnings.warn(f"restarting the query after: {target.subscribe_defect}",
                          stacklevel=1)


def test_a_stream_reads_every_record_and_resumes(spark, target, topic, tmp_path):
    create(target, topic)
    produce(target, topic, range(300))
    out, checkpoint = tmp_path / "out", tmp_path / "checkpoint"
    stream_to_parquet(spark, target, topic, out, checkpoint, maxRecordsPerTrigger="120")
    produce(target, topic, range(300, 400))
    stream_to_parquet(spark, target, topic, out, checkpoint, maxRecordsPerTrigger="120")
    ids = values_of(spark.read.parquet(str(out)).collect())
    if target.replayable:
        assert ids == list(range(400))
    else:  # at-least-once: every record, duplicates allowed
        assert sorted(set(ids)) == list(range(400))


def test_a_batch_read_reads_the_ranges_of_a_replayable_transport(spark, target, topic):
    if not target.replayable:
        pytest.skip(f"capability replayable=false ({target.name} as configured here): "
                    "batch reads are refused, which the embedded tests cover")
    create(target, topic)
    produce(target, topic, range(250))
    frame = (spark.read.format("omconnect").options(**target.spark_options())
             .option("topics", topic).option("readTimeoutMs", "30000").load())
    rows = frame.collect()
    assert values_of(rows) == list(range(250))
    assert len({(r.partition, r.offset) for r in rows}) == 250


def test_a_batch_write_reaches_the_transport(spark, target, topic, tmp_path):
    create(target, topic)
    frame = spark.createDataFrame([(i, f"k{i}".encode(), order(i), i % target.partitions)
                                   for i in range(150)],
                                  "id INT, key BINARY, value BINARY, partition INT")
    if target.single_message_tail:  # Tansu: each partition's tail goes alone (see produce)
        writes = [frame.where("id < 148"), frame.where("id = 148"), frame.where("id = 149")]
    else:
        writes = [frame]
    for part in writes:
        (part.drop("id").write.format("omconnect").options(**target.spark_options())
         .option("topic", topic).mode("append").save())
    out = tmp_path / "out"
    stream_to_parquet(spark, target, topic, out, tmp_path / "checkpoint")
    assert sorted(set(values_of(spark.read.parquet(str(out)).collect()))) == list(range(150))


@pytest.mark.xfail(strict=True, reason=(
    "Tansu defect: ListOffsets(LATEST) returns the base offset of the last record batch "
    "+ 1, not the high watermark, so a batch read stops at the first record of the last "
    "batch the broker stored"))
def test_tansu_end_offsets_count_batches_not_records(spark, request, topic):
    target = kafka_target(request)
    create(target, topic)
    with target.open() as transport:
        producer = transport.producer()
        try:
            producer.send([Message(topic, None, order(i), partition=0)
                           for i in range(50)]).result(timeout=60)
        finally:
            producer.close()
    frame = (spark.read.format("omconnect").options(**target.spark_options())
             .option("topics", topic).load())
    assert frame.count() == 50


@pytest.mark.redis
def test_a_redis_topic_is_read_in_exact_ranges(spark, redis_server, topic):
    """Redis Streams are replayable (an entry's id is its offset): a batch read plans
    offset ranges and reads each record once, from two partitions.
    """
    target = Target("redis", {"url": redis_server.url}, replayable=True, partitions=2)
    create(target, topic)
    produce(target, topic, range(200))
    frame = (spark.read.format("omconnect").options(**target.spark_options())
             .option("topics", topic).option("readTimeoutMs", "30000").load())
    rows = frame.collect()
    assert values_of(rows) == list(range(200))
    assert {(r.partition, r.offset) for r in rows} == {
        (p, o) for p in range(2) for o in range(1, 101)}, "offsets are the entries' ids"
