"""Where a stream topic ends, asked of RabbitMQ under CPU load and over a slow link.

AMQP 0-9-1 cannot ask a stream for its end; the consumer reads the stream's last chunk
(see ``RabbitMQConsumer._probe``). Under load a probe that stopped listening too early
reported a 100,000-record partition as ending at offset 1 (Spark then read half a topic,
or raised a false DataLossError). The end must be exact, or the probe must fail: never
a smaller number.

A stream written a moment ago is the hard case: the broker's message count lags its
streams by up to its statistics interval (5 s), so the count says "empty" while the
stream holds records. Whether it is empty must then not hang on how fast this process
reads: a loaded machine once made such a stream read as empty.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
from collections.abc import Iterator

import pytest
from omconnect_rabbitmq import consumer as rabbitmq_consumer
from omconnect_rabbitmq.transport import RabbitMQTransport
from omconnect_testbrokers.rabbitmq import BrokerHandle
from slow_link import SlowLink

from omconnect.errors import TransportTimeoutError
from omconnect.records import TopicPartition
from omconnect.transport import Message, TopicSpec

pytestmark = pytest.mark.rabbitmq

RECORDS = 100_000
PROBES = int(os.environ.get("OMCONNECT_END_PROBES", "10"))
"""How many fresh consumers ask for the end (the issue's check ran 50)."""


@pytest.fixture(scope="module")
def big_stream(broker: BrokerHandle) -> Iterator[str]:
    """A one-partition stream topic holding ``RECORDS`` records."""
    topic = f"ends-{os.getpid()}"
    with RabbitMQTransport({"url": broker.url}) as transport:
        transport.admin().create_topics([TopicSpec(topic, 1)])
        producer = transport.producer()
        futures = [producer.send([Message(topic, value=b"x" * 100) for _ in range(2000)])
                   for _ in range(RECORDS // 2000)]
        for future in futures:
            future.result(120)
        producer.close()
    yield topic


def _burn(stop: multiprocessing.synchronize.Event) -> None:  # type: ignore[name-defined]
    while not stop.is_set():
        sum(range(10_000))


@contextlib.contextmanager
def _cpu_load() -> Iterator[None]:
    """Three busy processes per core for the length of the block."""
    context = multiprocessing.get_context("spawn")
    stop = context.Event()
    burners = [context.Process(target=_burn, args=(stop,))
               for _ in range(3 * (os.cpu_count() or 2))]
    for burner in burners:
        burner.start()
    try:
        yield
    finally:
        stop.set()
        for burner in burners:
            burner.join(10)


def test_the_end_is_exact_under_cpu_load(broker: BrokerHandle, big_stream: str) -> None:
    ends = []
    with _cpu_load():
        for _ in range(PROBES):
            with RabbitMQTransport({"url": broker.url}) as transport:
                consumer = transport.consumer(None)
                ends.append(consumer.offset_range(TopicPartition(big_stream, 0)))
                consumer.close()
    assert ends == [(0, RECORDS)] * PROBES, f"ends seen under load: {sorted(set(ends))}"


def test_a_stream_written_a_moment_ago_is_not_read_as_empty(
        broker: BrokerHandle, monkeypatch: pytest.MonkeyPatch) -> None:
    # With no wait of its own for an empty-looking stream, the probe must still tell a
    # stream holding records (which the broker does not count yet) from an empty one.
    monkeypatch.setattr(rabbitmq_consumer, "_EMPTY_WAIT", 0.0)
    ends = []
    expected = []
    with _cpu_load(), RabbitMQTransport({"url": broker.url}) as transport:
        admin = transport.admin()
        for trial in range(PROBES):
            topic = f"fresh-{os.getpid()}-{trial}"
            admin.create_topics([TopicSpec(topic, 1)])
            records = 1 + trial % 3 * 1000
            producer = transport.producer()
            producer.send([Message(topic, value=b"x" * 100)
                           for _ in range(records)]).result(60)
            producer.close()
            consumer = transport.consumer(None)
            ends.append(consumer.offset_range(TopicPartition(topic, 0)))
            consumer.close()
            expected.append((0, records))
            admin.delete_topics([topic])
        empty = f"fresh-{os.getpid()}-empty"
        admin.create_topics([TopicSpec(empty, 1)])
        consumer = transport.consumer(None)
        ends.append(consumer.offset_range(TopicPartition(empty, 0)))
        consumer.close()
        expected.append((0, 0))
        admin.delete_topics([empty])
    assert ends == expected


def test_over_a_slow_link_the_end_is_exact_or_an_error(broker: BrokerHandle,
                                                        big_stream: str) -> None:
    link = SlowLink(("127.0.0.1", 5672), delay=0.05)
    url = broker.url.replace(":5672/", f":{link.port}/")
    outcomes = []
    try:
        for timeout_ms in (30_000, 1_000):
            with RabbitMQTransport({"url": url, "connection.timeout.ms": timeout_ms}
                                   ) as transport:
                consumer = transport.consumer(None)
                try:
                    outcomes.append(consumer.offset_range(TopicPartition(big_stream, 0)))
                except TransportTimeoutError as exc:
                    outcomes.append(type(exc).__name__)
                consumer.close()
    finally:
        link.close()
    assert outcomes[0] == (0, RECORDS), outcomes
    assert outcomes[1] in ((0, RECORDS), "TransportTimeoutError"), outcomes
