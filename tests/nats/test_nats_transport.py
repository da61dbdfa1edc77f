"""What the NATS transport promises beyond the kit: the JetStream mapping (a stream per
partition, offsets as sequences, gaps), messages other NATS clients read and write, names
encoded to JetStream's charsets, options, and a process that exits cleanly.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
import time
import uuid
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from omconnect_nats.codec import decode_fields, message_headers
from omconnect_nats.naming import decode_token, encode_token
from omconnect_testbrokers.nats import BrokerHandle

from omconnect.errors import ConfigError
from omconnect.records import TopicPartition
from omconnect.transport import Message, TopicSpec

pytestmark = pytest.mark.nats

nats = pytest.importorskip("nats")


def _topic() -> str:
    return f"t.{uuid.uuid4().hex[:8]}"


def _raw(broker: BrokerHandle, work: Any) -> Any:
    """Run ``work(js)`` with a plain nats-py connection."""
    async def run() -> Any:
        nc = await nats.connect(broker.url)
        try:
            return await work(nc.jetstream(), nc)
        finally:
            await nc.close()

    return asyncio.run(run())


def _poll_all(consumer: Any, count: int, timeout: float = 20.0) -> list[Message]:
    got: list[Message] = []
    deadline = time.monotonic() + timeout
    while len(got) < count and time.monotonic() < deadline:
        got += consumer.poll(500, 0.5)
    return got


@given(st.text())
def test_names_are_encoded_reversibly_and_prefix_preserving(name: str) -> None:
    token = encode_token(name)
    assert decode_token(token) == name
    assert all(c.isascii() and (c.isalnum() or c in "-_") for c in token)
    if name:
        assert encode_token(name + "x").startswith(token)


@given(st.binary(), st.one_of(st.none(), st.binary()),
       st.lists(st.tuples(st.text(min_size=1, max_size=8), st.one_of(st.none(), st.binary())),
                max_size=4))
def test_the_codec_carries_every_field_exactly(key: bytes, value: bytes | None,
                                               headers: list[tuple[str, bytes | None]]) -> None:
    wire = message_headers(key, value, tuple(headers), 1_700_000_000_123)
    # what the server gives back: the payload, and the headers as nats-py parses them
    assert all("\r" not in v and "\n" not in v for v in wire.values())
    got = decode_fields(value or b"", wire, 0)
    assert got == (key, value, tuple(headers), 1_700_000_000_123)


def test_a_partition_is_a_stream_and_offsets_are_its_sequences(make_transport: Any,
                                                                broker: BrokerHandle) -> None:
    transport = make_transport()
    topic = _topic()
    transport.admin().create_topics([TopicSpec(topic, 3)])
    acks = transport.producer().send(
        [Message(topic, value=f"v{i}".encode(), partition=1) for i in range(5)]).result(10)
    assert [a.offset for a in acks] == [0, 1, 2, 3, 4]
    names = transport.topology.names

    async def streams(js: Any, nc: Any) -> dict[str, tuple[int, list[str]]]:
        found = {}
        for partition in range(3):
            info = await js.stream_info(names.stream(topic, partition))
            found[info.config.name] = (info.state.messages, info.config.subjects)
        return found

    assert _raw(broker, streams) == {
        names.stream(topic, p): (5 if p == 1 else 0, [names.subject(topic, p)])
        for p in range(3)}


def test_gaps_left_by_deleted_messages_are_stepped_over(make_transport: Any,
                                                        broker: BrokerHandle) -> None:
    transport = make_transport()
    topic = _topic()
    transport.producer().send([Message(topic, value=f"v{i}".encode())
                               for i in range(10)]).result(10)
    stream = transport.topology.names.stream(topic, 0)

    async def delete(js: Any, nc: Any) -> None:
        for seq in (1, 2, 5):  # offsets 0, 1 and 4
            await js.delete_msg(stream, seq)

    _raw(broker, delete)
    consumer = transport.consumer(None)
    tp = TopicPartition(topic, 0)
    consumer.assign([tp])
    assert consumer.offset_range(tp) == (2, 10), "the first offset kept, the next one"
    consumer.seek(tp, 0)
    got = _poll_all(consumer, 7)
    assert [m.offset for m in got] == [2, 3, 5, 6, 7, 8, 9]
    assert [m.value for m in got] == [f"v{i}".encode() for i in (2, 3, 5, 6, 7, 8, 9)]


def test_messages_of_other_nats_clients_read_back_and_ours_read_plainly(
        make_transport: Any, broker: BrokerHandle) -> None:
    transport = make_transport()
    topic = _topic()
    transport.admin().create_topics([TopicSpec(topic, 1)])
    subject = transport.topology.names.subject(topic, 0)
    stream = transport.topology.names.stream(topic, 0)
    transport.producer().send([Message(topic, key=b"k", value=b"ours", timestamp=1234,
                                       headers=(("trace", b"abc"),))]).result(10)

    async def exchange(js: Any, nc: Any) -> Any:
        await js.publish(subject, b"theirs", headers={"source": "cli"})
        return await js.get_msg(stream, 1)

    ours = _raw(broker, exchange)
    assert ours.data == b"ours", "the payload is the value as it is"
    assert ours.headers["trace"] == "abc" and ours.headers["Omc-Key"] == "t:k"
    before = int(time.time() * 1000)
    consumer = transport.consumer("g")
    consumer.subscribe([topic])
    got = _poll_all(consumer, 2)
    assert [m.value for m in got] == [b"ours", b"theirs"]
    theirs = got[1]
    assert theirs.key is None and theirs.headers == (("source", b"cli"),)
    assert abs(theirs.timestamp - before) < 60_000, "the time the server stored it"
    assert got[0].timestamp == 1234 and got[0].headers == (("trace", b"abc"),)


def test_topic_retention_configs_become_stream_limits(make_transport: Any,
                                                      broker: BrokerHandle) -> None:
    transport = make_transport()
    topic = _topic()
    transport.admin().create_topics([TopicSpec(topic, 1, {"retention.ms": "60000",
                                                          "retention.bytes": "1048576"})])

    async def config(js: Any, nc: Any) -> Any:
        return (await js.stream_info(transport.topology.names.stream(topic, 0))).config

    stream = _raw(broker, config)
    assert (stream.max_age, stream.max_bytes) == (60.0, 1048576)
    assert transport.admin().list_topics()[topic].config["retention.ms"] == "60000"


def test_the_key_value_store_is_a_nats_bucket_with_encoded_keys(make_transport: Any,
                                                                 broker: BrokerHandle) -> None:
    transport = make_transport()
    namespace = f"ns {uuid.uuid4().hex[:6]}"
    store = transport.kv_store(namespace)
    store.put_many({"connector/a b": b"1", "": b"empty key", "ü.x": b"2"})
    bucket = transport.topology.names.kv_bucket(namespace)

    async def read(js: Any, nc: Any) -> Any:
        kv = await js.key_value(bucket)
        return sorted(decode_token(k) for k in await kv.keys())

    assert _raw(broker, read) == ["", "connector/a b", "ü.x"]
    assert list(store.scan("conn")) == [("connector/a b", b"1")]


def test_unknown_client_options_are_rejected_naming_them(broker: BrokerHandle) -> None:
    from omconnect_nats import NatsTransport

    with pytest.raises(ConfigError, match=r"nats\.client\.ping_intervall"):
        NatsTransport({"servers": broker.url, "client.ping_intervall": "5"})
    with pytest.raises(ConfigError, match=r"nats\.prefix"):
        NatsTransport({"servers": broker.url, "prefix": "a.b"})


_EXITS = textwrap.dedent("""
    import sys
    from omconnect_nats import NatsTransport
    from omconnect.transport import Message
    url, topic, close = sys.argv[1], sys.argv[2], sys.argv[3] == "close"
    transport = NatsTransport({"servers": url})
    producer = transport.producer()
    producer.send([Message(topic, value=b"%d" % i) for i in range(200)])
    consumer = transport.consumer("g-" + sys.argv[4])
    consumer.subscribe([topic])
    consumer.poll(50, 5)
    transport.kv_store("exits").put("k", b"v")
    producer.send([Message(topic, value=b"last")])  # not waited for: stored at exit
    if close:
        transport.close()
""")


def test_a_process_that_used_the_transport_exits_zero_every_time(broker: BrokerHandle) -> None:
    topic = _topic()
    runs = []
    for run in range(10):
        done = subprocess.run([sys.executable, "-c", _EXITS, broker.url, topic,
                               "close" if run % 2 else "leave-open", str(run)],
                              capture_output=True, text=True, timeout=60)
        runs.append((done.returncode, done.stderr.strip()))
    assert runs == [(0, "")] * 10

    async def count(js: Any, nc: Any) -> int:
        info = await js.stream_info(f"omc_{encode_token(topic)}_0")
        return int(info.state.messages)

    assert _raw(broker, count) == 10 * 201, "what was sent before exit is stored"
