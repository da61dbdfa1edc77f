"""The Redis transport beyond the kit: what it declares from the server, how its data
looks to other Redis clients, trimming, key prefixes, the server waking idle consumers,
and sends that name a partition gone meanwhile.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from omconnect_redis import RedisTransport
from omconnect_redis.client import redis_client
from omconnect_testbrokers.redis import BrokerHandle, server_options, start_broker

from omconnect.errors import ConfigError, RetriableTransportError, TransportError
from omconnect.records import TopicPartition
from omconnect.transport import Message, TopicSpec
from omconnect.transport.kit.log_store import LogRun

pytestmark = pytest.mark.redis


def _drain(consumer, count: int, timeout: float = 20.0) -> list[Message]:
    received: list[Message] = []
    deadline = time.monotonic() + timeout
    while len(received) < count and time.monotonic() < deadline:
        received.extend(consumer.poll(1000, 0.3))
    return received


def test_persistent_is_what_the_servers_append_only_file_says(make_transport, tmp_path: Path):
    assert make_transport().capabilities.persistent, "the session server has an AOF"
    with start_broker(tmp_path / "no-aof", appendonly=False) as volatile:
        transport = RedisTransport(server_options(volatile.url))
        try:
            capabilities = transport.capabilities
        finally:
            transport.close()
    assert not capabilities.persistent
    assert capabilities.replayable and capabilities.consumer_groups and capabilities.cross_process


def test_offsets_are_entry_ids_that_other_clients_read(make_transport, server: BrokerHandle):
    transport = make_transport(**{"key.prefix": "ids:"})
    acks = transport.producer().send(
        [Message("orders", key=b"k", value=b"first", timestamp=1_700_000_000_000,
                 headers=(("h", b"1"), ("h", None))),
         Message("orders", value=b"second"), Message("orders", key=b"", value=None)]
    ).result(10)
    assert [a.offset for a in acks] == [1, 2, 3]
    raw = redis_client(transport._pool)
    entries = raw.execute_command("XRANGE", "ids:t:orders:0", "-", "+")
    assert [entry[0] for entry in entries] == [b"1-0", b"2-0", b"3-0"]
    fields = [dict(zip(e[1][::2], e[1][1::2], strict=True)) for e in entries]
    assert fields[0][b"value"] == b"first" and fields[0][b"key"] == b"k"
    assert fields[0][b"ts"] == b"1700000000000"
    assert b"key" not in fields[1] and fields[1][b"value"] == b"second"
    assert fields[2][b"key"] == b"" and b"value" not in fields[2]
    consumer = transport.consumer(None)
    tp = TopicPartition("orders", 0)
    consumer.assign([tp])
    assert consumer.offset_range(tp) == (1, 4)
    consumer.seek(tp, 2)
    again = _drain(consumer, 2)
    assert [(m.offset, m.key, m.value) for m in again] == [(2, None, b"second"),
                                                          (3, b"", None)]


def test_max_length_trims_the_oldest_records(make_transport):
    transport = make_transport(**{"max.length": 100, "key.prefix": "trim:"})
    producer = transport.producer()
    for start in range(0, 1000, 50):
        producer.send([Message("trimmed", value=f"v{i}".encode())
                       for i in range(start, start + 50)]).result(10)
    consumer = transport.consumer(None)
    tp = TopicPartition("trimmed", 0)
    consumer.assign([tp])
    first, end = consumer.offset_range(tp)
    assert end == 1001
    assert 1 < first <= end - 100, "about the last max.length records are kept"
    consumer.seek(tp, 1)  # gone: reading starts at the first record kept
    kept = _drain(consumer, end - first)
    assert [m.offset for m in kept] == list(range(first, end))


def test_an_append_to_a_missing_partition_stores_nothing(make_transport):
    transport = make_transport(**{"key.prefix": "atomic:"})
    admin = transport.admin()
    admin.create_topics([TopicSpec("present", 1)])
    store = transport.open_store()
    runs = [LogRun(TopicPartition("present", 0), messages=[Message("present", value=b"x")],
                   timestamps=[1]),
            LogRun(TopicPartition("present", 3), messages=[Message("present", value=b"y")],
                   timestamps=[1])]
    with pytest.raises(RetriableTransportError, match="no partition 3"):
        store.append_runs(runs)
    assert store.offset_range(TopicPartition("present", 0)) == (1, 1), "a record was stored"


def test_key_prefixes_keep_transports_apart(make_transport):
    first, second = make_transport(**{"key.prefix": "a:"}), make_transport(
        **{"key.prefix": "b:"})
    first.admin().create_topics([TopicSpec("shared-name", 2)])
    first.kv_store("configs").put("k", b"from a")
    assert "shared-name" not in second.admin().list_topics()
    assert second.kv_store("configs").get("k") is None
    assert first.admin().list_topics()["shared-name"].partitions == 2


def test_scan_takes_a_prefix_literally(make_transport):
    store = make_transport(**{"key.prefix": "glob:"}).kv_store("patterns")
    store.put_many({"a*[x]?": b"1", "a*[x]?b": b"2", "ab": b"3", "a\\c": b"4"})
    assert [k for k, _ in store.scan("a*[x]?")] == ["a*[x]?", "a*[x]?b"]
    assert [k for k, _ in store.scan("a\\")] == ["a\\c"]


def test_an_idle_consumer_is_woken_by_the_server(make_transport, server: BrokerHandle):
    """With poll.interval.ms at 20 s, a consumer that waited by polling the server would
    see a record sent by another transport only after that; XREAD BLOCK returns at once.
    """
    consumer = make_transport(**{"poll.interval.ms": 20_000,
                                 "key.prefix": "wake:"}).consumer("g")
    consumer.subscribe(["woken"])
    make_transport(**{"key.prefix": "wake:"}).admin().create_topics([TopicSpec("woken", 1)])
    assert consumer.poll(10, 1.0) == []  # joined, holding the partition, nothing yet
    other = make_transport(**{"key.prefix": "wake:"})
    sender = threading.Timer(0.5, lambda: other.producer().send(
        [Message("woken", value=b"now")]).result(10))
    sender.start()
    started = time.monotonic()
    try:
        received = consumer.poll(10, 30.0)
    finally:
        sender.join()
    assert [m.value for m in received] == [b"now"]
    assert time.monotonic() - started < 15, "the consumer was not woken by the record"


def test_a_wakeup_ends_a_blocking_wait(make_transport):
    consumer = make_transport(**{"key.prefix": "wakeup:"}).consumer("g")
    consumer.subscribe(["quiet"])
    make_transport(**{"key.prefix": "wakeup:"}).admin().create_topics([TopicSpec("quiet", 1)])
    consumer.poll(10, 1.0)
    threading.Timer(0.5, consumer.wakeup).start()
    started = time.monotonic()
    assert consumer.poll(10, 30.0) == []
    assert time.monotonic() - started < 15


def test_unknown_option_is_named_with_a_suggestion():
    with pytest.raises(ConfigError) as caught:
        RedisTransport({"key.prefx": "x:"})
    assert "redis.key.prefx" in str(caught.value)
    assert "did you mean redis.key.prefix" in str(caught.value)


def test_the_password_is_kept_out_of_messages():
    transport = RedisTransport({"url": "redis://app:s3cret@127.0.0.1:1/0",
                                "connection.timeout.ms": 200})
    try:
        with pytest.raises(RetriableTransportError) as caught:
            transport.admin().list_topics()
    finally:
        transport.close()
    assert "s3cret" not in str(caught.value) and "redis://app:***@127.0.0.1:1/0" in str(
        caught.value)


def test_an_entry_another_client_added_stops_appends_to_its_stream(make_transport):
    transport = make_transport(**{"key.prefix": "foreign:"})
    producer = transport.producer()
    producer.send([Message("mixed", value=b"ours")]).result(10)
    redis_client(transport._pool).xadd("foreign:t:mixed:0", {"value": b"theirs"})
    with pytest.raises(TransportError, match="did not write"):
        producer.send([Message("mixed", value=b"ours again")]).result(10)
    consumer = transport.consumer(None)
    consumer.assign([TopicPartition("mixed", 0)])
    assert consumer.offset_range(TopicPartition("mixed", 0))[1] == 2, "offsets moved on"


@pytest.mark.parametrize("columnar", [False, True], ids=["poll", "poll_batch"])
def test_an_entry_deleted_by_hand_leaves_a_gap_readers_step_over(make_transport, columnar):
    pytest.importorskip("pyarrow")
    transport = make_transport(**{"key.prefix": f"gap-{columnar}:"})
    transport.producer().send([Message("gap", value=f"v{i}".encode())
                               for i in range(1, 6)]).result(10)
    redis_client(transport._pool).xdel(f"gap-{columnar}:t:gap:0", "3-0")
    consumer = transport.consumer(None)
    consumer.assign([TopicPartition("gap", 0)])
    if columnar:
        batch = consumer.poll_batch(10, 5.0)
        got = list(zip(batch.column("offset").to_pylist(), batch.column("value").to_pylist(),
                       strict=True))
    else:
        got = [(m.offset, m.value) for m in consumer.poll(10, 5.0)]
    assert got == [(1, b"v1"), (2, b"v2"), (4, b"v4"), (5, b"v5")]


def test_client_options_per_producer_or_consumer_are_refused_by_name(make_transport):
    transport = make_transport()
    with pytest.raises(ConfigError, match=r"no producer options.*remove: linger\.ms"):
        transport.producer({"linger.ms": 5})
    with pytest.raises(ConfigError, match=r"no consumer options.*remove: fetch\.min\.bytes"):
        transport.consumer("g", options={"fetch.min.bytes": 1})
