"""The producer the log-transport base derives (omconnect.transport.kit.log_transport), on
the example SQLite store with failures injected into its append: a batch is stored whole
or not at all, its future says so per message, and back-pressure bounds what waits.
"""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest
from omconnect_example_sqlite import SqliteLogStore, SqliteLogTransport, translate

from omconnect.errors import RetriableTransportError, SendError, TransportTimeoutError
from omconnect.transport import Message


@pytest.fixture
def transport(tmp_path: Path) -> Any:
    opened = SqliteLogTransport({"path": str(tmp_path / "queue.db"),
                                 "max.pending.records": 10, "send.timeout.ms": 300})
    yield opened
    opened.close()


def _read_all(transport: SqliteLogTransport, topic: str) -> list[bytes | None]:
    consumer = transport.consumer(None)
    try:
        from omconnect.records import TopicPartition

        consumer.assign([TopicPartition(topic, 0)])
        return [m.value for m in consumer.poll(100, 1.0)]
    finally:
        consumer.close()


def test_a_failed_append_fails_every_message_of_the_batch_and_stores_none(
        transport: SqliteLogTransport, monkeypatch: pytest.MonkeyPatch) -> None:
    real = SqliteLogStore.append
    calls = {"n": 0}

    def append_once_locked(self: SqliteLogStore, messages: Any) -> list[int]:
        calls["n"] += 1
        if calls["n"] == 1:  # what the store raises when another writer holds the lock
            raise translate(sqlite3.OperationalError("database is locked"), "appending")
        return real(self, messages)

    monkeypatch.setattr(SqliteLogStore, "append", append_once_locked)
    producer = transport.producer()
    failed = producer.send([Message("t", value=b"a"), Message("t", value=b"b")])
    with pytest.raises(SendError) as caught:
        failed.result(10)
    assert len(caught.value.outcomes) == 2
    assert all(isinstance(o, RetriableTransportError) for o in caught.value.outcomes)
    stored = producer.send([Message("t", value=b"c")]).result(10)
    assert [m.offset for m in stored] == [0]  # nothing of the failed batch took an offset
    producer.close()
    assert _read_all(transport, "t") == [b"c"]


def test_send_blocks_while_too_much_waits_and_then_times_out(
        transport: SqliteLogTransport, monkeypatch: pytest.MonkeyPatch) -> None:
    release = threading.Event()
    real = SqliteLogStore.append

    def slow_append(self: SqliteLogStore, messages: Any) -> list[int]:
        release.wait(10)
        return real(self, messages)

    monkeypatch.setattr(SqliteLogStore, "append", slow_append)
    producer = transport.producer()
    first = producer.send([Message("t", value=b"x")] * 10)  # max.pending.records
    with pytest.raises(TransportTimeoutError, match=r"max\.pending\.records"):
        producer.send([Message("t", value=b"y")])
    release.set()
    assert len(first.result(10)) == 10
    assert len(producer.send([Message("t", value=b"z")]).result(10)) == 1
    producer.close()


def test_flush_and_close_wait_for_every_batch(transport: SqliteLogTransport) -> None:
    producer = transport.producer()
    futures = [producer.send([Message("t", key=b"k", value=bytes([i]))]) for i in range(5)]
    producer.close()
    assert all(f.done() for f in futures)
    assert [f.result()[0].offset for f in futures] == [0, 1, 2, 3, 4]  # in send order


def test_batches_queued_while_the_store_is_busy_are_stored_in_one_append(
        transport: SqliteLogTransport, monkeypatch: pytest.MonkeyPatch) -> None:
    """Group commit: every producer of a transport shares its writer, so what two
    producers queue while an append is in progress goes into the next append together.
    """
    busy, release = threading.Event(), threading.Event()
    calls: list[int] = []
    real = SqliteLogStore.append_runs

    def counted(self: SqliteLogStore, runs: Any) -> list[int]:
        calls.append(sum(len(run) for run in runs))
        if len(calls) == 1:
            busy.set()
            release.wait(10)
        return real(self, runs)

    monkeypatch.setattr(SqliteLogStore, "append_runs", counted)
    first, second = transport.producer(), transport.producer()
    a = first.send([Message("t", value=b"a")])
    assert busy.wait(10)
    b = second.send([Message("t", value=b"b1"), Message("t", value=b"b2")])
    c = first.send([Message("t", value=b"c")])
    release.set()
    offsets = [m.offset for f in (a, b, c) for m in f.result(10)]
    assert calls == [1, 3]  # b and c in one append
    assert offsets == [0, 1, 2, 3]  # in the order sent
    first.close()
    second.close()
    assert _read_all(transport, "t") == [b"a", b"b1", b"b2", b"c"]


@pytest.mark.parametrize(("max_poll_interval_ms", "kept"), [(300_000, True), (100, False)])
def test_a_consumer_busy_past_its_session_keeps_its_partitions_while_it_polls_in_time(
        tmp_path: Path, max_poll_interval_ms: int, kept: bool) -> None:
    """The base's heartbeat thread keeps a member that is busy with a batch for longer
    than ``session.timeout.ms``, as long as it polls within ``max.poll.interval.ms``;
    past that it stops heart-beating and another member takes its partitions.
    """
    import time

    from omconnect.transport import TopicSpec

    transport = SqliteLogTransport({
        "path": str(tmp_path / "queue.db"), "session.timeout.ms": 500,
        "heartbeat.interval.ms": 50, "max.poll.interval.ms": max_poll_interval_ms})
    try:
        transport.admin().create_topics([TopicSpec("busy", 2)])
        busy = transport.consumer("g")
        busy.subscribe(["busy"])
        deadline = time.monotonic() + 5
        while len(busy.assignment()) < 2 and time.monotonic() < deadline:
            busy.poll(10, 0.05)
        assert len(busy.assignment()) == 2
        other = transport.consumer("g")
        other.subscribe(["busy"])
        taken: set[Any] = set()
        until = time.monotonic() + 1.5  # three session timeouts without a poll of busy
        while time.monotonic() < until:
            other.poll(10, 0.05)
            taken |= other.assignment()
        assert (taken == set()) is kept, taken
        busy.close()
        other.close()
    finally:
        transport.close()
