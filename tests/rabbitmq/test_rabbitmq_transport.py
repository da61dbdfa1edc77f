"""What only the RabbitMQ transport has: its mapping onto exchanges and queues, its error
translation on a real server, flow control, reconnection and the classic/stream modes.
"""

from __future__ import annotations

import time
import urllib.parse
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pika
import pytest
from omconnect_rabbitmq import topology
from omconnect_rabbitmq.transport import RabbitMQTransport
from omconnect_testbrokers.rabbitmq import BrokerHandle, rabbitmqctl
from rabbitmq_helpers import FAST_GROUPS

from omconnect import plugins
from omconnect.errors import (
    ConfigError,
    MessageTooLargeError,
    RetriableTransportError,
    SendError,
    TransportError,
    TransportTimeoutError,
    UnsupportedOperationError,
)
from omconnect.records import TopicPartition
from omconnect.testing.waiting import run_bounded
from omconnect.transport import Message, TopicSpec
from omconnect.transport.kit.partitioning import partition_for_key

pytestmark = pytest.mark.rabbitmq

MakeTransport = Callable[..., RabbitMQTransport]


def unique(kind: str) -> str:
    return f"{kind}-{uuid.uuid4().hex[:8]}"


@pytest.fixture
def amqp(broker: BrokerHandle) -> Iterator[Any]:
    """A raw pika channel on the module's vhost, to look at what the transport declared."""
    connection = pika.BlockingConnection(pika.URLParameters(broker.url))
    yield connection
    if connection.is_open:
        connection.close()


def exists(connection: Any, kind: str, name: str) -> bool:
    """Whether an exchange or queue exists (a passive declare; 404 closes the channel)."""
    channel = connection.channel()
    try:
        if kind == "exchange":
            channel.exchange_declare(name, passive=True)
        else:
            channel.queue_declare(name, passive=True)
    except pika.exceptions.ChannelClosedByBroker as exc:
        assert exc.reply_code == 404, exc
        return False
    channel.close()
    return True


def ready_count(connection: Any, queue: str) -> int:
    """Messages waiting in a classic queue (not counting unacknowledged deliveries)."""
    channel = connection.channel()
    try:
        return int(channel.queue_declare(queue, passive=True).method.message_count)
    finally:
        channel.close()


def drain(consumer: Any, count: int, timeout: float = 15.0) -> list[Message]:
    received: list[Message] = []
    deadline = time.monotonic() + timeout
    while len(received) < count and time.monotonic() < deadline:
        received.extend(consumer.poll(500, 0.2))
    return received


def test_registered_as_rabbitmq() -> None:
    assert plugins.load("omconnect.transports", "rabbitmq") is RabbitMQTransport


def test_classic_topology_is_as_documented(make_transport: MakeTransport, amqp: Any) -> None:
    """A classic topic is a direct exchange; a group's subscribe declares one durable
    queue per partition, bound with the partition number as routing key.
    """
    transport = make_transport(streams=False)
    topic, group = unique("topo"), unique("g")
    transport.admin().create_topics([TopicSpec(topic, 3)])
    assert exists(amqp, "exchange", topology.topic_exchange(topic))
    assert not exists(amqp, "queue", topology.group_queue(group, topic, 0))
    consumer = transport.consumer(group)
    consumer.subscribe([topic])
    consumer.close()
    for partition in range(3):
        assert exists(amqp, "queue", topology.group_queue(group, topic, partition))
    channel = amqp.channel()
    channel.confirm_delivery()
    channel.basic_publish(topology.topic_exchange(topic), topology.routing_key(2), b"raw")
    assert ready_count(amqp, topology.group_queue(group, topic, 2)) == 1
    assert ready_count(amqp, topology.group_queue(group, topic, 0)) == 0
    listed = transport.admin().list_topics()[topic]
    assert (listed.partitions, listed.config["rabbitmq.stream"]) == (3, "false")
    transport.admin().delete_topics([topic])
    assert not exists(amqp, "exchange", topology.topic_exchange(topic))
    assert not exists(amqp, "queue", topology.group_queue(group, topic, 2))


def test_stream_topology_and_lock_queues(make_transport: MakeTransport, amqp: Any) -> None:
    """A stream topic has one stream queue per partition; a group member holds each
    partition through an exclusive consumer on its lock queue.
    """
    transport = make_transport(streams=True)
    topic, group = unique("stream"), unique("g")
    transport.admin().create_topics([TopicSpec(topic, 2)])
    for partition in range(2):
        assert exists(amqp, "queue", topology.stream_queue(topic, partition))
    consumer = transport.consumer(group)
    consumer.subscribe([topic])
    wanted = {TopicPartition(topic, 0), TopicPartition(topic, 1)}
    deadline = time.monotonic() + 10
    while consumer.assignment() != wanted and time.monotonic() < deadline:
        consumer.poll(10, 0.1)
    assert consumer.assignment() == wanted
    lock = topology.lock_queue(group, topic, 1)
    channel = amqp.channel()
    with pytest.raises(pika.exceptions.ChannelClosedByBroker) as refused:
        channel.basic_consume(lock, lambda *args: None, exclusive=True)
    assert refused.value.reply_code == 403, "the lock is held exclusively"
    consumer.close()
    channel = amqp.channel()
    channel.basic_consume(lock, lambda *args: None, exclusive=True)  # free after close
    channel.close()


def test_keyed_messages_go_to_kafkas_partition(make_transport: MakeTransport) -> None:
    transport = make_transport()
    topic = unique("keys")
    transport.admin().create_topics([TopicSpec(topic, 5)])
    producer = transport.producer()
    keys = [f"key-{i}".encode() for i in range(40)]
    acks = producer.send([Message(topic, key=k, value=b"v") for k in keys]).result(10)
    assert [a.partition for a in acks] == [partition_for_key(k, 5) for k in keys]
    producer.close()


def test_wrong_password_names_user_and_vhost(broker: BrokerHandle) -> None:
    parts = urllib.parse.urlsplit(broker.url)
    url = f"amqp://guest:wrong-password@{parts.hostname}:{parts.port}{parts.path}"
    transport = RabbitMQTransport({"url": url, "connection.timeout.ms": 5000})
    with pytest.raises(TransportError) as caught:
        run_bounded(transport.producer, 20, "producer with a wrong password")
    message = str(caught.value)
    assert "'guest'" in message and broker.vhost in message
    assert "ACCESS_REFUSED" in message or "refused" in message.lower()
    assert not isinstance(caught.value, RetriableTransportError), "bad credentials are fatal"
    assert isinstance(caught.value.__cause__, Exception), "the broker's error is chained"


def test_missing_vhost_is_named(broker: BrokerHandle) -> None:
    parts = urllib.parse.urlsplit(broker.url)
    url = f"amqp://guest:guest@{parts.hostname}:{parts.port}/no-such-vhost-{uuid.uuid4().hex[:6]}"
    transport = RabbitMQTransport({"url": url, "connection.timeout.ms": 5000})
    with pytest.raises(TransportError) as caught:
        run_bounded(lambda: transport.kv_store("x"), 20, "store on a missing vhost")
    assert "no-such-vhost" in str(caught.value)


def test_silent_broker_times_out_within_the_timeout(silent_port: int) -> None:
    """A host that accepts TCP but never speaks AMQP: a clear TransportTimeoutError,
    never a hang.
    """
    transport = RabbitMQTransport({"url": f"amqp://guest:guest@127.0.0.1:{silent_port}/%2F",
                                   "connection.timeout.ms": 1500})
    for what, call in (("producer", transport.producer),
                       ("admin", lambda: transport.admin().list_topics())):
        with pytest.raises(TransportTimeoutError) as caught:
            run_bounded(call, 10, f"{what} against a silent port")
        assert "1.5 s" in str(caught.value) and str(silent_port) in str(caught.value)


def test_refused_port_is_retriable(silent_port: int) -> None:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        free = probe.getsockname()[1]
    transport = RabbitMQTransport({"url": f"amqp://guest:guest@127.0.0.1:{free}/%2F",
                                   "connection.timeout.ms": 2000})
    with pytest.raises(RetriableTransportError):
        run_bounded(transport.producer, 10, "producer against a closed port")


def test_message_over_the_configured_limit_names_it(make_transport: MakeTransport) -> None:
    transport = make_transport(**{"max.message.bytes": 4096})
    topic = unique("big")
    producer = transport.producer()
    with pytest.raises(MessageTooLargeError) as caught:
        producer.send([Message(topic, value=b"x" * 5000)])
    assert caught.value.limit == 4096 and "4096" in str(caught.value)
    assert producer.send([Message(topic, value=b"x" * 4000)]).result(10)
    producer.close()


def test_message_over_the_brokers_limit_names_it(make_transport: MakeTransport) -> None:
    """Past RabbitMQ's own max_message_size (128 MiB by default) the broker closes the
    channel; the send fails with MessageTooLargeError naming the broker's limit, and the
    producer keeps working.
    """
    transport = make_transport(**{"max.message.bytes": 256 * 1024 * 1024})
    topic = unique("huge")
    producer = transport.producer()
    with pytest.raises(SendError) as caught:
        producer.send([Message(topic, value=bytes(129 * 1024 * 1024))]).result(60)
    outcome = caught.value.outcomes[0]
    assert isinstance(outcome, MessageTooLargeError), outcome
    assert outcome.limit == 128 * 1024 * 1024 and str(outcome.limit) in str(outcome)
    deadline = time.monotonic() + 10
    while True:  # the producer opens a new channel; later sends succeed
        try:
            producer.send([Message(topic, value=b"small")]).result(10)
            break
        except SendError:
            assert time.monotonic() < deadline, "the producer did not recover"
            time.sleep(0.1)
    producer.close()


def test_unknown_native_option_is_rejected(make_transport: MakeTransport) -> None:
    transport = make_transport()
    with pytest.raises(ConfigError) as caught:
        transport.producer({"frame_maxx": 1})
    assert "frame_maxx" in str(caught.value)


def test_bad_url_names_the_key() -> None:
    with pytest.raises(ConfigError) as caught:
        RabbitMQTransport({"url": "http://127.0.0.1:5672/"})
    assert "rabbitmq.url" in str(caught.value)


def test_new_classic_group_sees_only_later_messages_unless_declared(
        make_transport: MakeTransport) -> None:
    """Classic semantics: a group receives what is published after its queues exist;
    rabbitmq.declare.groups declares a group's queues with the topic.
    """
    declared = unique("declared")
    transport = make_transport(streams=False, **{"declare.groups": [declared]})
    topic = unique("late")
    transport.admin().create_topics([TopicSpec(topic, 2)])
    producer = transport.producer()
    producer.send([Message(topic, value=b"early")]).result(10)
    late = transport.consumer(unique("g"))
    late.subscribe([topic])
    producer.send([Message(topic, value=b"later")]).result(10)
    assert [m.value for m in drain(late, 1)] == [b"later"]
    assert late.poll(10, 0.3) == []
    prepared = transport.consumer(declared)
    prepared.subscribe([topic])
    assert sorted(m.value or b"" for m in drain(prepared, 2)) == [b"early", b"later"]
    for closeable in (late, prepared, producer):
        closeable.close()


def test_prefetch_bounds_what_the_broker_pushes(make_transport: MakeTransport,
                                                amqp: Any) -> None:
    """The broker pushes at most ``prefetch`` messages beyond what was polled; a commit
    lets the rest flow.
    """
    transport = make_transport(prefetch=10, streams=False)
    topic, group = unique("flow"), unique("g")
    transport.admin().create_topics([TopicSpec(topic, 1)])
    consumer = transport.consumer(group)
    consumer.subscribe([topic])
    producer = transport.producer()
    producer.send([Message(topic, value=f"m{i}".encode()) for i in range(200)]).result(10)
    polled = consumer.poll(5, 5.0)
    assert len(polled) == 5
    time.sleep(0.5)  # let the broker push whatever it may
    queue = topology.group_queue(group, topic, 0)
    assert ready_count(amqp, queue) >= 200 - 5 - 10, "the broker pushed past the prefetch"
    received = polled + drain(consumer, 195)
    consumer.commit({TopicPartition(topic, 0): received[-1].offset + 1})  # type: ignore[operator]
    assert len(received) == 200, "polling kept the messages flowing"
    consumer.close()
    assert ready_count(amqp, queue) == 0, "committed messages are acknowledged"
    producer.close()


def test_reconnects_after_the_broker_closes_every_connection(
        make_transport: MakeTransport, broker: BrokerHandle) -> None:
    """After ``rabbitmqctl close_all_connections`` the producer, consumer and store
    reconnect; uncommitted messages are delivered again (at-least-once), none is lost.
    """
    transport = make_transport(**{"reconnect.backoff.ms": 50})
    topic, group = unique("reconnect"), unique("g")
    transport.admin().create_topics([TopicSpec(topic, 2)])
    consumer = transport.consumer(group)
    consumer.subscribe([topic])
    producer = transport.producer()
    store = transport.kv_store(unique("kv"))
    store.put("before", b"1")
    producer.send([Message(topic, key=f"k{i}".encode(), value=f"a{i}".encode())
                   for i in range(20)]).result(10)
    first = drain(consumer, 20)
    assert len(first) == 20
    rabbitmqctl("close_all_connections", "-p", broker.vhost, "omconnect reconnect test")
    sent_after: list[bytes] = []
    deadline = time.monotonic() + 30
    while len(sent_after) < 20 and time.monotonic() < deadline:
        batch = [f"b{i}".encode() for i in range(len(sent_after), len(sent_after) + 5)]
        try:
            producer.send([Message(topic, value=v) for v in batch]).result(10)
            sent_after += batch
        except (SendError, RetriableTransportError):
            time.sleep(0.1)
    assert len(sent_after) == 20, "the producer did not reconnect"
    wanted = {f"a{i}".encode() for i in range(20)} | set(sent_after)
    got: set[bytes | None] = set()
    deadline = time.monotonic() + 30
    while not wanted <= got and time.monotonic() < deadline:
        got.update(m.value for m in consumer.poll(500, 0.2))
    assert wanted <= got, f"{len(wanted - got)} messages lost across the reconnection"
    deadline = time.monotonic() + 30
    while True:
        try:
            store.put("after", b"2")
            break
        except TransportError:
            assert time.monotonic() < deadline, "the store did not reconnect"
            time.sleep(0.1)
    assert (store.get("before"), store.get("after")) == (b"1", b"2")
    for closeable in (consumer, producer, store):
        closeable.close()


def test_stream_topics_in_classic_mode(make_transport: MakeTransport) -> None:
    """rabbitmq.stream.topics makes single topics replayable: assign, offset_range and
    seek work on them; on classic topics they are refused with a clear error.
    """
    replayable = unique("replay")
    transport = make_transport(streams=False, **{"stream.topics": [replayable]})
    classic = unique("classic")
    transport.admin().create_topics([TopicSpec(replayable, 1), TopicSpec(classic, 1)])
    assert transport.capabilities.replayable is False, "capabilities are per transport"
    producer = transport.producer()
    producer.send([Message(replayable, value=f"r{i}".encode()) for i in range(10)]).result(10)
    reader = transport.consumer(None)
    tp = TopicPartition(replayable, 0)
    reader.assign([tp])
    assert reader.offset_range(tp) == (0, 10)
    reader.seek(tp, 7)
    assert [m.value for m in drain(reader, 3)] == [b"r7", b"r8", b"r9"]
    with pytest.raises(UnsupportedOperationError) as caught:
        reader.assign([TopicPartition(classic, 0)])
    assert classic in str(caught.value)
    for closeable in (reader, producer):
        closeable.close()


def test_fast_group_settings_are_used(make_transport: MakeTransport) -> None:
    transport = make_transport()
    assert transport.config["heartbeat.interval.ms"] == FAST_GROUPS["heartbeat.interval.ms"]


def test_a_channel_closed_by_the_broker_is_reopened(make_transport: MakeTransport) -> None:
    """When the broker closes a partition's channel (here: an acknowledgement of an
    unknown delivery tag, as RabbitMQ's consumer_timeout would close it), its
    unacknowledged messages go back to the queue and the member, still holding the
    partition, reads them again on a new channel.
    """
    transport = make_transport(streams=False)
    topic = unique("revive")
    transport.admin().create_topics([TopicSpec(topic, 1)])
    consumer = transport.consumer(unique("g"))
    consumer.subscribe([topic])
    producer = transport.producer()
    producer.send([Message(topic, value=f"m{i}".encode()) for i in range(10)]).result(10)
    first = drain(consumer, 10)
    assert len(first) == 10
    reader = consumer._readers[TopicPartition(topic, 0)]
    channel = reader.channel
    assert channel is not None
    consumer._io.post(lambda: channel.channel.basic_ack(10_000))  # a PRECONDITION_FAILED
    again = drain(consumer, 10)
    assert [m.value for m in again] == [m.value for m in first], "not delivered again"
    assert again[0].offset > first[-1].offset, "offsets keep increasing"  # type: ignore[operator]
    consumer.commit({TopicPartition(topic, 0): again[-1].offset + 1})  # type: ignore[operator]
    for closeable in (consumer, producer):
        closeable.close()


def test_stream_retention_arguments_pass_through(make_transport: MakeTransport,
                                                 amqp: Any) -> None:
    """A stream topic's ``x-`` settings become its queues' arguments (retention)."""
    transport = make_transport(streams=True)
    topic = unique("retained")
    settings = {"x-max-age": "7D", "x-max-length-bytes": "2000000000"}
    transport.admin().create_topics([TopicSpec(topic, 1, dict(settings))])
    channel = amqp.channel()
    # re-declaring with the same arguments succeeds; with others the broker refuses
    channel.queue_declare(topology.stream_queue(topic, 0), durable=True,
                          arguments={"x-queue-type": "stream", "x-max-age": "7D",
                                     "x-max-length-bytes": 2_000_000_000})
    with pytest.raises(pika.exceptions.ChannelClosedByBroker) as refused:
        channel.queue_declare(topology.stream_queue(topic, 0), durable=True,
                              arguments={"x-queue-type": "stream", "x-max-age": "1D"})
    assert refused.value.reply_code == 406
    with pytest.raises(ValueError, match="x-queue-type"):
        transport.admin().create_topics([TopicSpec(unique("bad"), 1,
                                                   {"x-queue-type": "quorum"})])


def test_topics_are_streams_by_default(make_transport: MakeTransport) -> None:
    """The default keeps what Kafka gives: a group that subscribes after messages were
    sent reads them all, from the first.
    """
    transport = make_transport()
    assert transport.capabilities.new_subscriber_receives_old_messages
    assert transport.capabilities.replayable
    topic = unique("default")
    producer = transport.producer()
    producer.send([Message(topic, value=f"m{i}".encode()) for i in range(5)]).result(10)
    late = transport.consumer(unique("g"))
    late.subscribe([topic])
    assert [m.value for m in drain(late, 5)] == [f"m{i}".encode() for i in range(5)]
    for closeable in (late, producer):
        closeable.close()


def test_a_classic_send_that_no_queue_takes_is_not_acknowledged(
        make_transport: MakeTransport) -> None:
    """On a classic topic no group has subscribed to, the broker would confirm and drop
    the message; it is returned instead and the send fails retriably (the runtime sends
    it again and commits no source offset). Once a group's queues exist it is taken.
    """
    transport = make_transport(streams=False)
    topic = unique("nobody")
    transport.admin().create_topics([TopicSpec(topic, 2)])
    producer = transport.producer()
    with pytest.raises(SendError) as failed:
        producer.send([Message(topic, key=b"k", value=b"lost?")]).result(10)
    outcomes = failed.value.outcomes
    assert all(isinstance(o, RetriableTransportError) for o in outcomes), outcomes
    assert "no queue took" in str(outcomes[0])
    group = transport.consumer(unique("g"))
    group.subscribe([topic])
    producer.send([Message(topic, key=b"k", value=b"kept")]).result(10)
    assert [m.value for m in drain(group, 1)] == [b"kept"]
    for closeable in (group, producer):
        closeable.close()


def test_a_columnar_send_that_no_queue_takes_fails_only_its_rows(
        make_transport: MakeTransport) -> None:
    """``send_batch`` publishes from the columns as ``send`` does: rows no queue takes
    fail retriably, row by row; once a group's queues exist they are taken, with their
    partitions, tombstones and headers.
    """
    pa = pytest.importorskip("pyarrow")
    transport = make_transport(streams=False)
    topic = unique("half")
    transport.admin().create_topics([TopicSpec(topic, 2)])
    producer = transport.producer()
    batch = pa.RecordBatch.from_arrays(
        [pa.array([b"a", b"b", None], pa.binary()), pa.array([0, 1, 0], pa.int32()),
         pa.array([[("h", b"1")], None, []],
                  pa.list_(pa.struct([("key", pa.string()), ("value", pa.binary())])))],
        names=["value", "partition", "headers"])
    with pytest.raises(SendError) as failed:
        producer.send_batch(topic, batch).result(10)
    outcomes = failed.value.outcomes
    assert len(outcomes) == 3
    assert all(isinstance(o, RetriableTransportError) for o in outcomes), outcomes
    assert "no queue took" in str(outcomes[0])
    subscribed = transport.consumer(unique("g"))
    subscribed.subscribe([topic])
    sent = producer.send_batch(topic, batch).result(10)
    assert sent.partitions.to_pylist() == [0, 1, 0]
    got = sorted(((m.partition, m.value, m.headers) for m in drain(subscribed, 3)),
                 key=lambda item: (item[0], item[1] is None))
    assert got == [(0, b"a", (("h", b"1"),)), (0, None, ()), (1, b"b", ())]
    for closeable in (subscribed, producer):
        closeable.close()


def test_a_store_opened_right_after_a_broker_restart_waits_for_its_stream(
        make_transport: MakeTransport, broker: BrokerHandle) -> None:
    """Right after ``start_app`` the stream queues recover a moment after clients can
    connect (NOT_FOUND "home node ... is down or inaccessible"): opening a store, or the
    topic catalog, then retries within the connection timeout instead of failing.
    """
    transport = make_transport()
    namespace = unique("recovering")
    store = transport.kv_store(namespace)
    store.put("kept", b"1")
    store.close()
    for _ in range(3):
        broker.restart()
        reopened = make_transport()
        again = reopened.kv_store(namespace)  # no retry of ours: the store's own
        assert again.get("kept") == b"1"
        again.close()
        reopened.admin().create_topics([TopicSpec(unique("after-restart"), 1)])
