"""The embedded transport: the shared in-core cases on real files, plus durability and
several processes sharing one data directory (real subprocesses, killed with SIGKILL).
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from incore_cases import InCoreTransportCases, MakeTransport, drain, quiet, send, values

import omconnect
from omconnect import plugins
from omconnect.errors import ConfigError, RetriableTransportError, SendError, TransportError
from omconnect.records import TopicPartition
from omconnect.testing.waiting import eventually
from omconnect.transport import Message, TopicSpec, Transport
from omconnect.transport.embedded import EmbeddedTransport
from omconnect.transport.embedded.codec import CHUNK_RECORDS, decode_chunk, encode_chunks

SOURCE_ROOT = Path(omconnect.__file__).resolve().parent.parent


class TestEmbeddedTransport(InCoreTransportCases):
    name = "embedded"

    @pytest.fixture
    def make_transport(self, tmp_path: Path) -> Iterator[MakeTransport]:
        opened: list[Transport] = []

        def make(**options: Any) -> Transport:
            transport = EmbeddedTransport({"path": str(tmp_path / "data"), **options})
            opened.append(transport)
            return transport

        yield make
        for transport in opened:
            transport.close()

    def stop_heartbeats_options(self) -> dict[str, Any]:
        return {"max.poll.interval.ms": 100}


@pytest.fixture
def data(tmp_path: Path) -> Path:
    return tmp_path / "data"


@pytest.fixture
def open_transport(data: Path) -> Iterator[Any]:
    opened: list[Transport] = []

    def make(**options: Any) -> EmbeddedTransport:
        transport = EmbeddedTransport({"path": str(data), **options})
        opened.append(transport)
        return transport

    yield make
    for transport in opened:
        transport.close()


def child_env() -> dict[str, str]:
    path = os.pathsep.join(p for p in (str(SOURCE_ROOT), os.environ.get("PYTHONPATH")) if p)
    return {**os.environ, "PYTHONPATH": path}


def run_child(code: str, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a fresh Python process (``sys.argv[1:]`` = ``args``)."""
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code), *args],
                          capture_output=True, text=True, timeout=timeout, env=child_env(),
                          check=False)


def start_child(code: str, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(code), *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=child_env())


def read_line(child: subprocess.Popen[str]) -> str:
    assert child.stdout is not None
    line = child.stdout.readline()
    if not line:
        assert child.stderr is not None
        raise AssertionError(f"child exited early: {child.wait()} {child.stderr.read()}")
    return line.strip()


def kill(child: subprocess.Popen[str]) -> None:
    if child.poll() is None:
        child.send_signal(signal.SIGKILL)
    child.wait(10)


# -- durability -----------------------------------------------------------------------------

PRODUCE_THEN_KILL_SELF = """
    import os, signal, sys
    from omconnect.transport import Message, TopicSpec
    from omconnect.transport.embedded import EmbeddedTransport

    transport = EmbeddedTransport({"path": sys.argv[1], "synchronous": sys.argv[2]})
    transport.admin().create_topics([TopicSpec("durable", 3)])
    producer = transport.producer()
    futures = [producer.send([Message("durable", f"k{i % 11}".encode(),
                                      f"b{batch}-{i}".encode()) for i in range(200)])
               for batch in range(60)]
    for number, future in enumerate(futures):
        lines = "".join(f"{md.partition} {md.offset} b{number}-{i}\\n"
                        for i, md in enumerate(future.result()))
        os.write(1, lines.encode())
        if number == 24:  # batches 25.. may be queued, written or half-written: die now
            os.kill(os.getpid(), signal.SIGKILL)
"""


@pytest.mark.parametrize("synchronous", ["full", "normal"])
def test_kill_9_right_after_acknowledgement_loses_nothing(
        synchronous: str, data: Path, open_transport: Any) -> None:
    child = run_child(PRODUCE_THEN_KILL_SELF, str(data), synchronous)
    assert child.returncode == -signal.SIGKILL, child.stderr
    acknowledged = [line.split() for line in child.stdout.splitlines()]
    assert len(acknowledged) == 25 * 200
    transport = open_transport()
    consumer = transport.consumer(None)
    stored: dict[tuple[int, int], bytes] = {}
    for partition in range(3):
        tp = TopicPartition("durable", partition)
        consumer.assign([tp])
        first, end = consumer.offset_range(tp)
        for message in drain(consumer, end - first):
            assert message.value is not None and message.offset is not None
            stored[(partition, message.offset)] = message.value
    for partition, offset, value in acknowledged:
        assert stored.get((int(partition), int(offset))) == value.encode(), \
            f"acknowledged record {value} at {partition}/{offset} is missing"
    batches: dict[str, int] = {}
    for value in stored.values():
        batch = value.decode().split("-")[0]
        batches[batch] = batches.get(batch, 0) + 1
    assert set(batches.values()) == {200}, "a batch was stored in part"


def test_everything_survives_reopening_the_transport(open_transport: Any) -> None:
    first = open_transport()
    send(first, [Message("kept", b"k", f"v{i}".encode()) for i in range(10)])
    consumer = first.consumer("g")
    consumer.subscribe(["kept"])
    consumer.commit({TopicPartition("kept", 0): 4})
    consumer.close()
    first.kv_store("ns").put("offset", b"42")
    first.close()
    second = open_transport()
    reader = second.consumer("g")
    reader.subscribe(["kept"])
    assert values(drain(reader, 6)) == [f"v{i}".encode() for i in range(4, 10)]
    assert second.kv_store("ns").get("offset") == b"42"
    assert second.admin().list_topics()["kept"].partitions == 1


KV_WRITE = """
    import sys
    from omconnect.transport.embedded import EmbeddedTransport

    store = EmbeddedTransport({"path": sys.argv[1]}).kv_store("offsets")
    store.put_many({k: v.encode() for k, v in zip(sys.argv[2::2], sys.argv[3::2])})
"""


def test_kv_last_write_wins_across_process_restarts(data: Path, open_transport: Any) -> None:
    for writer in ("first", "second", "third"):
        done = run_child(KV_WRITE, str(data), "source/a", f"{writer}-a", writer, "here")
        assert done.returncode == 0, done.stderr
    store = open_transport().kv_store("offsets")
    assert store.get("source/a") == b"third-a"
    assert dict(store.scan()) == {"source/a": b"third-a", "first": b"here",
                                  "second": b"here", "third": b"here"}


KV_HAMMER = """
    import sys
    from omconnect.transport.embedded import EmbeddedTransport

    store = EmbeddedTransport({"path": sys.argv[1]}).kv_store("shared")
    me = sys.argv[2]
    for i in range(150):
        store.put_many({f"{me}/{i}": b"x", "shared": f"{me}-{i}".encode()})
"""


def test_kv_concurrent_writers_in_two_processes(data: Path, open_transport: Any) -> None:
    open_transport()  # create the database before both children race to
    children = [start_child(KV_HAMMER, str(data), name) for name in ("p", "q")]
    for child in children:
        assert child.wait(60) == 0, child.stderr.read() if child.stderr else ""
    store = open_transport().kv_store("shared")
    keys = dict(store.scan())
    assert {k for k in keys if k != "shared"} == {f"{me}/{i}" for me in "pq" for i in range(150)}
    assert keys["shared"] in (b"p-149", b"q-149")


PRODUCE_KEYED = """
    import sys
    from omconnect.transport import Message
    from omconnect.transport.embedded import EmbeddedTransport

    producer = EmbeddedTransport({"path": sys.argv[1]}).producer()
    me = sys.argv[2]
    for batch in range(40):
        producer.send([Message("busy", f"{me}{i % 3}".encode(), f"{me}:{batch * 25 + i}".encode())
                       for i in range(25)])
    producer.close()
"""


def test_producers_in_two_processes_share_a_topic(data: Path, open_transport: Any) -> None:
    open_transport().admin().create_topics([TopicSpec("busy", 2)])
    children = [start_child(PRODUCE_KEYED, str(data), name) for name in ("p", "q")]
    for child in children:
        assert child.wait(60) == 0, child.stderr.read() if child.stderr else ""
    consumer = open_transport().consumer("check")
    consumer.subscribe(["busy"])
    received = drain(consumer, 2000)
    assert len(received) == 2000 and not quiet(consumer)
    offsets = [(m.partition, m.offset) for m in received]
    assert len(set(offsets)) == 2000, "two processes were given the same offset"
    for partition in (0, 1):
        mine = sorted(o for p, o in offsets if p == partition)
        assert mine == list(range(len(mine))), "offsets have gaps"
    by_key: dict[bytes | None, list[int]] = {}
    for message in sorted(received, key=lambda m: (m.partition, m.offset)):
        assert message.value is not None
        by_key.setdefault(message.key, []).append(int(message.value.split(b":")[1]))
    for key, sequence in by_key.items():
        assert sequence == sorted(sequence), f"key {key!r} out of order"


def test_a_blocking_poll_sees_another_processes_writes(data: Path, open_transport: Any
                                                       ) -> None:
    transport = open_transport(**{"poll.interval.ms": 10})
    transport.admin().create_topics([TopicSpec("x", 1)])
    consumer = transport.consumer(None)
    consumer.assign([TopicPartition("x", 0)])
    child = start_child("""
        import sys, time
        from omconnect.transport import Message
        from omconnect.transport.embedded import EmbeddedTransport
        time.sleep(0.5)
        transport = EmbeddedTransport({"path": sys.argv[1]})
        transport.producer().send([Message("x", None, b"from afar")]).result()
        transport.close()
    """, str(data))
    try:
        assert values(consumer.poll(10, 30.0)) == [b"from afar"]
    finally:
        kill(child)


GROUP_MEMBER = """
    import json, sys
    from omconnect.transport.embedded import EmbeddedTransport

    transport = EmbeddedTransport({"path": sys.argv[1], "session.timeout.ms": 1500,
                                   "heartbeat.interval.ms": 100})
    consumer = transport.consumer("crew")
    consumer.subscribe(["work"])
    while True:  # read, never commit; report what it holds and what it read
        got = consumer.poll(100, 0.1)
        print(json.dumps({"assigned": sorted(tp.partition for tp in consumer.assignment()),
                          "values": [m.value.decode() for m in got]}), flush=True)
"""


def test_killed_member_partitions_move_after_the_session_timeout(
        data: Path, open_transport: Any) -> None:
    transport = open_transport(**{"session.timeout.ms": 1500, "heartbeat.interval.ms": 100})
    transport.admin().create_topics([TopicSpec("work", 2)])
    sent = [f"v{i}".encode() for i in range(40)]
    send(transport, [Message("work", None, v, partition=i % 2) for i, v in enumerate(sent)])
    child = start_child(GROUP_MEMBER, str(data))
    try:
        child_read: set[str] = set()
        while len(child_read) < 40:  # alone, it gets both partitions and reads everything
            child_read |= set(json.loads(read_line(child))["values"])
        survivor = transport.consumer("crew")
        survivor.subscribe(["work"])
        received: list[Message] = []
        deadline = time.monotonic() + 20
        while len(survivor.assignment()) < 1:  # the live child hands one partition over
            assert time.monotonic() < deadline, "the child never shared its partitions"
            received += survivor.poll(100, 0.1)
            read_line(child)
        assert len(survivor.assignment()) == 1
        kill(child)
        killed_at = time.monotonic()
        while len(received) < 40 and time.monotonic() < deadline:
            received += survivor.poll(100, 0.1)
        assert survivor.assignment() == {TopicPartition("work", 0), TopicPartition("work", 1)}
        assert time.monotonic() - killed_at >= 1.0, "partitions moved before the timeout"
        assert sorted(values(received)) == sorted(sent), "uncommitted messages were lost"
    finally:
        kill(child)


# -- errors -----------------------------------------------------------------------------------

def test_a_locked_database_gives_retriable_errors(data: Path, open_transport: Any) -> None:
    transport = open_transport(**{"busy.timeout.ms": 100})
    transport.admin().create_topics([TopicSpec("locked", 1)])
    store = transport.kv_store("ns")
    blocker = sqlite3.connect(data / "omconnect.db", isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(SendError) as caught:
            transport.producer().send([Message("locked", None, b"v")]).result(timeout=10)
        assert all(isinstance(o, RetriableTransportError) for o in caught.value.outcomes)
        assert "database is locked" in str(caught.value)
        with pytest.raises(RetriableTransportError, match="locked"):
            store.put("k", b"v")
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    transport.producer().send([Message("locked", None, b"v")]).result(timeout=10)
    store.put("k", b"v")


def test_bad_options_name_the_embedded_key(tmp_path: Path) -> None:
    not_a_directory = tmp_path / "file"
    not_a_directory.write_text("")
    with pytest.raises(ConfigError, match=r"embedded\.path"):
        EmbeddedTransport({"path": str(not_a_directory / "data")})
    with pytest.raises(ConfigError, match=r"embedded\.synchronous"):
        EmbeddedTransport({"path": str(tmp_path), "synchronous": "sometimes"})
    with pytest.raises(ConfigError, match=r"did you mean embedded\.path"):
        EmbeddedTransport({"pth": str(tmp_path)})
    with pytest.raises(ConfigError, match=r"embedded\.default\.partitions"):
        EmbeddedTransport({"path": str(tmp_path), "default.partitions": 0})


def test_a_file_that_is_not_a_database_is_a_transport_error(tmp_path: Path) -> None:
    (tmp_path / "omconnect.db").write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(TransportError, match="not a database"):
        EmbeddedTransport({"path": str(tmp_path)})


def test_capabilities_and_wal_mode(open_transport: Any, data: Path) -> None:
    capabilities = open_transport().capabilities
    assert capabilities.persistent and capabilities.cross_process and capabilities.replayable
    assert capabilities.consumer_groups and capabilities.ordered_per_key
    assert capabilities.max_message_bytes == 8 * 1024 * 1024
    check = sqlite3.connect(data / "omconnect.db")
    assert check.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    check.close()


def test_loaded_by_name_through_the_plugin_registry() -> None:
    if "embedded" not in plugins.available(plugins.TRANSPORTS):
        pytest.skip("omconnect is not installed, so its entry points are not registered")
    assert plugins.load(plugins.TRANSPORTS, "embedded") is EmbeddedTransport


# -- storage --------------------------------------------------------------------------------

def test_large_messages_and_long_runs_across_chunks(open_transport: Any) -> None:
    transport = open_transport()
    big = os.urandom(3 * 1024 * 1024)
    many = [Message("long", None, f"{i}".encode()) for i in range(CHUNK_RECORDS * 2 + 10)]
    send(transport, [Message("long", b"big", big), *many, Message("long", b"big2", big)])
    consumer = transport.consumer(None)
    tp = TopicPartition("long", 0)
    consumer.assign([tp])
    assert consumer.offset_range(tp) == (0, len(many) + 2)
    consumer.seek(tp, CHUNK_RECORDS - 3)  # across a chunk boundary
    got = consumer.poll(10, 1.0)
    assert [m.offset for m in got] == list(range(CHUNK_RECORDS - 3, CHUNK_RECORDS + 7))
    consumer.seek(tp, 0)
    everything = drain(consumer, len(many) + 2)
    assert everything[0].value == big and everything[-1].value == big
    assert values(everything[1:-1]) == values(many)


def test_chunk_codec_round_trips_any_records() -> None:
    rng = random.Random(7)
    for _ in range(200):
        count = rng.randint(1, 40)
        messages = [Message("t",
                            rng.choice([None, b"", rng.randbytes(rng.randint(0, 30))]),
                            rng.choice([None, b"", rng.randbytes(rng.randint(0, 300))]),
                            rng.choice([(), (("a", b"1"),), (("a", None), ("é", b""))]))
                    for _ in range(count)]
        stamps = [rng.randint(0, 2**50) for _ in messages]
        [(stored, data)] = encode_chunks(messages, stamps)
        assert stored == count
        first, limit = rng.randint(0, count), rng.randint(1, count + 1)
        decoded = decode_chunk(data, topic="t", partition=2, base_offset=100, first=first,
                               limit=limit)
        expected = [Message("t", m.key, m.value, m.headers, ts, 2, 100 + i)
                    for i, (m, ts) in enumerate(zip(messages, stamps, strict=True))]
        assert decoded == expected[first:first + limit]


def counts(messages: list[Message]) -> list[int]:
    return [count for count, _ in encode_chunks(messages, [0] * len(messages))]


def test_chunks_are_cut_by_records_and_bytes() -> None:
    assert counts([Message("t", None, b"x")] * (CHUNK_RECORDS + 1)) == [CHUNK_RECORDS, 1]
    assert counts([Message("t", None, b"x" * 400_000)] * 5) == [2, 2, 1]
    assert counts([Message("t", None, b"x" * 3_000_000)] * 2) == [1, 1]
    mixed = [Message("t", b"k", None, (("h", b"v"),)), Message("t", None, b"x" * 600_000),
             Message("t", None, b"y" * 600_000, (("i", None),))]
    chunks = encode_chunks(mixed, [1, 2, 3])
    assert [count for count, _ in chunks] == [2, 1]
    decoded = [m for (count, data), base in zip(chunks, (0, 2), strict=True)
               for m in decode_chunk(data, topic="t", partition=0, base_offset=base)]
    assert [(m.key, m.value, m.headers, m.timestamp, m.offset) for m in decoded] == [
        (m.key, m.value, m.headers, ts, i) for i, (m, ts) in enumerate(zip(mixed, (1, 2, 3),
                                                                              strict=True))]


def test_damaged_records_are_a_transport_error() -> None:
    [(_, data)] = encode_chunks([Message("t", b"k", b"v")], [1])
    with pytest.raises(TransportError, match=r"damaged|unknown format"):
        decode_chunk(data[:8], topic="t", partition=0, base_offset=0)
    with pytest.raises(TransportError, match="unknown format"):
        decode_chunk(b"\x09" + data[1:], topic="t", partition=0, base_offset=0)


def test_every_option_is_documented() -> None:
    doc = (Path(__file__).parents[2] / "docs" / "transports" / "embedded.md").read_text()
    for key in EmbeddedTransport.config_def:
        assert f"`embedded.{key.name}`" in doc, f"embedded.{key.name} is not documented"


def test_sending_from_an_acknowledgement_callback_does_not_deadlock(open_transport: Any
                                                                    ) -> None:
    transport = open_transport(**{"max.pending.records": 1})  # every send is back-pressured
    producer = transport.producer()
    follow_ups: list[Any] = []

    def send_more(_: Any) -> None:
        if len(follow_ups) < 5:
            follow_ups.append(producer.send([Message("cb", None, b"follow-up")]))

    for _ in range(5):
        producer.send([Message("cb", None, b"first")]).add_done_callback(send_more)
    producer.flush(10)
    for future in follow_ups:
        future.result(timeout=10)
    consumer = transport.consumer(None)
    consumer.assign([TopicPartition("cb", 0)])
    assert len(drain(consumer, 10)) == 10


CHURN_MEMBER = """
    import json, sys
    from omconnect.records import TopicPartition
    from omconnect.transport.embedded import EmbeddedTransport

    transport = EmbeddedTransport({"path": sys.argv[1], "session.timeout.ms": 1000,
                                   "heartbeat.interval.ms": 100})
    consumer = transport.consumer("churn")
    consumer.subscribe(["churn"])
    while True:  # report what was read, then commit it
        batch = consumer.poll(50, 0.1)
        if batch:
            print(json.dumps([m.value.decode() for m in batch]), flush=True)
            last = {}
            for m in batch:
                last[TopicPartition(m.topic, m.partition)] = m.offset + 1
            consumer.commit(last)
"""


@pytest.mark.slow
def test_members_killed_at_random_lose_nothing(data: Path, open_transport: Any) -> None:
    transport = open_transport()
    transport.admin().create_topics([TopicSpec("churn", 6)])
    rng = random.Random(11)
    total = 3000
    seen: set[str] = set()
    children = [start_child(CHURN_MEMBER, str(data)) for _ in range(3)]
    readers: list[Any] = []

    def collect(child: subprocess.Popen[str]) -> None:
        assert child.stdout is not None
        for line in child.stdout:
            seen.update(json.loads(line))

    def watch(child: subprocess.Popen[str]) -> None:
        reader = threading.Thread(target=collect, args=(child,), daemon=True)
        reader.start()
        readers.append(reader)

    for child in children:
        watch(child)
    producer = transport.producer()
    try:
        for start in range(0, total, 100):
            producer.send([Message("churn", f"k{i % 30}".encode(), f"{i}".encode())
                           for i in range(start, start + 100)]).result(10)
            if start % 600 == 500:  # now and then, SIGKILL a member and start another
                victim = children.pop(rng.randrange(len(children)))
                kill(victim)
                children.append(start_child(CHURN_MEMBER, str(data)))
                watch(children[-1])
            time.sleep(0.1)
        deadline = time.monotonic() + 60
        while len(seen) < total and time.monotonic() < deadline:
            time.sleep(0.2)
    finally:
        for child in children:
            kill(child)
    missing = {f"{i}" for i in range(total)} - seen
    assert not missing, f"{len(missing)} messages never reached a member, e.g. " \
                        f"{sorted(missing)[:5]}"


def test_partitions_whose_offsets_fail_to_load_are_claimed_again_and_read(
        open_transport: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # A store that fails transiently while a member takes partitions it just claimed
    # must not leave them owned and unread: the member gives them back and claims them
    # again on a later poll.
    transport = open_transport()
    transport.admin().create_topics([TopicSpec("claims", partitions=2)])
    send(transport, [Message("claims", key=str(n).encode(), value=str(n).encode())
                     for n in range(40)])
    consumer = transport.consumer("readers")
    real_load = consumer._load_committed
    failures = [RetriableTransportError("the offset store is briefly unreachable")]

    def flaky_load(group: str, partitions: Any) -> Any:
        if failures:
            raise failures.pop()
        return real_load(group, partitions)

    monkeypatch.setattr(consumer, "_load_committed", flaky_load)
    consumer.subscribe(["claims"])
    with pytest.raises(RetriableTransportError):
        for _ in range(50):
            consumer.poll(100, 0.1)
    received = drain(consumer, 40)
    assert sorted(int(m.value) for m in received) == list(range(40))
    assert consumer.assignment() == {TopicPartition("claims", 0), TopicPartition("claims", 1)}
    consumer.close()


def test_a_read_failing_after_others_returned_records_skips_nothing(
        open_transport: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # A poll reads partitions in turn; when one read fails after others returned records,
    # no position may move past records that were not handed out.
    transport = open_transport()
    transport.admin().create_topics([TopicSpec("turns", partitions=3)])
    send(transport, [Message("turns", key=f"k{n}".encode(), value=str(n).encode())
                     for n in range(60)])
    consumer = transport.consumer("readers")
    consumer.subscribe(["turns"])
    real_read = consumer._read
    failures = [RetriableTransportError("the store is briefly unreachable")] * 3
    calls = [0]

    def flaky_read(partition: TopicPartition, offset: int, limit: int) -> Any:
        calls[0] += 1
        if calls[0] % 3 == 2 and failures:  # the second partition read of a poll
            raise failures.pop()
        return real_read(partition, offset, limit)

    monkeypatch.setattr(consumer, "_read", flaky_read)
    received: list[Message] = []
    deadline = time.monotonic() + 20
    while len(received) < 60 and time.monotonic() < deadline:
        with contextlib.suppress(RetriableTransportError):
            received += consumer.poll(100, 0.1)
    assert len(failures) < 3, "a read failed after another partition's records were read"
    assert sorted(int(m.value) for m in received) == list(range(60))
    consumer.close()


def test_a_release_that_failed_after_the_revoke_is_made_at_the_next_sync(
        open_transport: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # A member gives a partition up (revoke) and then the exchange that releases it in
    # the group fails: the group still shows it as the member's. The next sync must
    # release it, or the member that should take it over never can.
    transport = open_transport()
    transport.admin().create_topics([TopicSpec("handover", partitions=2)])
    first = transport.consumer("pair")
    first.subscribe(["handover"])
    eventually(lambda: (first.poll(10, 0.05), len(first.assignment()) == 2)[1],
               what="the first member to hold both partitions")
    store = first._member.store
    real_exchange = store.exchange
    failures = [RetriableTransportError("the group table is briefly locked")]

    def flaky_exchange(member: str, release: Any, claim: Any) -> Any:
        if release and failures:
            raise failures.pop()
        return real_exchange(member, release, claim)

    monkeypatch.setattr(store, "exchange", flaky_exchange)
    second = transport.consumer("pair")
    second.subscribe(["handover"])

    def shared() -> bool:
        with contextlib.suppress(RetriableTransportError):
            first.poll(10, 0.05)
        second.poll(10, 0.05)
        return len(first.assignment()) == 1 and len(second.assignment()) == 1

    eventually(shared, timeout=20, what="the two members to hold a partition each")
    assert not failures, "the release failed once"
    send(transport, [Message("handover", key=f"k{n}".encode(), value=str(n).encode())
                     for n in range(40)])
    received: list[Message] = []

    def everything() -> bool:
        received.extend(first.poll(100, 0.05) + second.poll(100, 0.05))
        return len(received) >= 40

    eventually(everything, timeout=20, what="both members to read their partition")
    assert sorted(int(m.value) for m in received) == list(range(40))
    first.close()
    second.close()
