"""Behaviour both in-core transports (memory, embedded) must show; each test module
subclasses :class:`InCoreTransportCases` and provides ``make_transport``.
"""

from __future__ import annotations

import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from typing import Any

import pytest

from omconnect.errors import (
    ConfigError,
    IllegalStateError,
    MessageTooLargeError,
    SendError,
    TransportError,
)
from omconnect.records import TopicPartition
from omconnect.transport import Consumer, Message, RebalanceListener, TopicSpec, Transport
from omconnect.transport.kit.partitioning import partition_for_key

MakeTransport = Callable[..., Transport]


def drain(consumer: Consumer, count: int, timeout: float = 10.0) -> list[Message]:
    """Poll until ``count`` messages arrived or ``timeout`` passed."""
    received: list[Message] = []
    deadline = time.monotonic() + timeout
    while len(received) < count and time.monotonic() < deadline:
        received += consumer.poll(500, 0.1)
    return received


def quiet(consumer: Consumer, seconds: float = 0.3) -> list[Message]:
    """Whatever arrives within ``seconds`` (to check that nothing does)."""
    received: list[Message] = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        received += consumer.poll(500, 0.05)
    return received


def positions(messages: Iterable[Message]) -> dict[TopicPartition, int]:
    """The next offset to commit per partition, after ``messages``."""
    result: dict[TopicPartition, int] = {}
    for m in messages:
        assert m.partition is not None and m.offset is not None
        tp = TopicPartition(m.topic, m.partition)
        result[tp] = max(result.get(tp, 0), m.offset + 1)
    return result


def values(messages: Iterable[Message]) -> list[bytes | None]:
    return [m.value for m in messages]


def send(transport: Transport, messages: list[Message]) -> list[Any]:
    producer = transport.producer()
    try:
        return producer.send(messages).result(timeout=10)
    finally:
        producer.close()


class Recorder(RebalanceListener):
    """Keeps the partitions it was told about; optionally commits on revocation."""

    def __init__(self, on_revoke: Callable[[frozenset[TopicPartition]], None] | None = None
                 ) -> None:
        self.assigned: set[TopicPartition] = set()
        self.events: list[tuple[str, frozenset[TopicPartition]]] = []
        self._on_revoke = on_revoke

    def on_partitions_assigned(self, partitions: frozenset[TopicPartition]) -> None:
        self.assigned |= partitions
        self.events.append(("assigned", partitions))

    def on_partitions_revoked(self, partitions: frozenset[TopicPartition]) -> None:
        if self._on_revoke is not None:
            self._on_revoke(partitions)
        self.assigned -= partitions
        self.events.append(("revoked", partitions))


def wait_for(condition: Callable[[], bool], consumers: Iterable[Consumer],
             timeout: float = 10.0) -> None:
    """Poll ``consumers`` (discarding nothing: they must not receive messages here)
    until ``condition`` holds.
    """
    consumers = list(consumers)
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not reached in time"
        for consumer in consumers:
            assert consumer.poll(10, 0.02) == []


class InCoreTransportCases:
    """The shared cases. Subclasses define the ``make_transport`` fixture: a function
    that opens the transport under test (again: same storage), taking option overrides.
    """

    name: str  # the transport's name, for option keys in error messages

    # -- producing and partitioning ------------------------------------------------------

    def test_order_per_key_and_same_partition_per_key(self, make_transport: MakeTransport
                                                      ) -> None:
        transport = make_transport()
        transport.admin().create_topics([TopicSpec("orders", 4)])
        keys = [f"key-{k}".encode() for k in range(16)]
        producer = transport.producer()
        futures = [producer.send([Message("orders", keys[i % 16], f"{i % 16}:{i}".encode())
                                  for i in range(batch * 100, batch * 100 + 100)])
                   for batch in range(20)]
        acks = [md for future in futures for md in future.result(timeout=10)]
        producer.close()
        consumer = transport.consumer("readers")
        consumer.subscribe(["orders"])
        received = drain(consumer, 2000)
        assert len(received) == 2000
        by_key: dict[bytes | None, list[int]] = defaultdict(list)
        partitions_of_key: dict[bytes | None, set[int | None]] = defaultdict(set)
        for message in received:
            assert message.value is not None
            by_key[message.key].append(int(message.value.split(b":")[1]))
            partitions_of_key[message.key].add(message.partition)
        for key, sequence in by_key.items():
            assert sequence == sorted(sequence), f"key {key!r} out of order"
            assert partitions_of_key[key] == {partition_for_key(key, 4)}  # type: ignore[arg-type]
        assert len({md.partition for md in acks}) > 1, "16 keys all landed in one partition"

    def test_acknowledgements_give_partition_offset_and_timestamp(
            self, make_transport: MakeTransport) -> None:
        transport = make_transport()
        before = time.time() * 1000
        acks = send(transport, [Message("acks", None, b"a"), Message("acks", None, b"b"),
                                Message("acks", None, b"c", timestamp=42)])
        assert [(md.topic, md.partition, md.offset) for md in acks] == [
            ("acks", 0, 0), ("acks", 0, 1), ("acks", 0, 2)]
        assert acks[0].timestamp is not None and acks[0].timestamp >= before - 1000
        assert acks[2].timestamp == 42

    def test_round_trip_keeps_headers_nulls_and_empty_payloads(
            self, make_transport: MakeTransport) -> None:
        transport = make_transport()
        sent = [
            Message("rt", b"k", b"v", (("a", b"1"), ("a", b"2"), ("none", None)), 7),
            Message("rt", None, b"no key"),
            Message("rt", b"tombstone", None),
            Message("rt", b"", b""),
            Message("rt", bytes(range(256)), bytes(range(255, -1, -1)), (("é", b"\x00"),)),
        ]
        send(transport, sent)
        consumer = transport.consumer(None)
        consumer.assign([TopicPartition("rt", 0)])
        received = drain(consumer, len(sent))
        assert [(m.key, m.value, m.headers) for m in received] == [
            (m.key, m.value, m.headers) for m in sent]
        assert received[0].timestamp == 7
        assert [m.offset for m in received] == list(range(len(sent)))

    def test_topic_created_on_first_send_with_default_partitions(
            self, make_transport: MakeTransport) -> None:
        transport = make_transport(**{"default.partitions": 3})
        send(transport, [Message("fresh", b"k", b"v")])
        assert transport.admin().list_topics()["fresh"].partitions == 3

    def test_explicit_partition_is_used_and_a_missing_one_fails_the_batch(
            self, make_transport: MakeTransport) -> None:
        transport = make_transport()
        transport.admin().create_topics([TopicSpec("explicit", 2)])
        acks = send(transport, [Message("explicit", b"k", b"v", partition=1)])
        assert acks[0].partition == 1
        producer = transport.producer()
        future = producer.send([Message("explicit", None, b"ok", partition=0),
                                Message("explicit", None, b"bad", partition=5)])
        with pytest.raises(SendError) as caught:
            future.result(timeout=10)
        assert "partition 5" in str(caught.value.outcomes[1])
        assert len(caught.value.outcomes) == 2
        consumer = transport.consumer(None)
        consumer.assign([TopicPartition("explicit", 0)])
        assert quiet(consumer) == [], "part of a failed batch was stored"

    def test_message_too_large_names_the_limit_and_stores_nothing(
            self, make_transport: MakeTransport) -> None:
        transport = make_transport(**{"max.message.bytes": 1000})
        assert transport.capabilities.max_message_bytes == 1000
        producer = transport.producer()
        producer.send([Message("big", b"k", b"x" * 995)]).result(timeout=10)  # exactly 998
        with pytest.raises(MessageTooLargeError) as caught:
            producer.send([Message("big", None, b"fine"), Message("big", b"k", b"x" * 1000)])
        assert "1000 bytes" in str(caught.value) and caught.value.limit == 1000
        with pytest.raises(MessageTooLargeError):  # headers count too
            producer.send([Message("big", None, b"x" * 900, (("h", b"y" * 200),))])
        consumer = transport.consumer(None)
        consumer.assign([TopicPartition("big", 0)])
        assert len(drain(consumer, 1)) == 1
        assert quiet(consumer) == []

    def test_closed_producer_refuses_sends(self, make_transport: MakeTransport) -> None:
        producer = make_transport().producer()
        producer.close()
        producer.close()
        with pytest.raises(TransportError):
            producer.send([Message("t", None, b"v")])

    # -- consumer groups -------------------------------------------------------------------

    def test_commit_then_reopen_does_not_redeliver(self, make_transport: MakeTransport
                                                   ) -> None:
        transport = make_transport()
        transport.admin().create_topics([TopicSpec("c1", 2)])
        send(transport, [Message("c1", f"k{i}".encode(), f"v{i}".encode()) for i in range(50)])
        consumer = transport.consumer("g")
        consumer.subscribe(["c1"])
        received = drain(consumer, 50)
        assert len(received) == 50
        consumer.commit(positions(received))
        assert consumer.committed(positions(received).keys()) == positions(received)
        consumer.close()
        again = make_transport().consumer("g")
        again.subscribe(["c1"])
        assert quiet(again, 0.5) == []
        send(transport, [Message("c1", b"k", b"new")])
        assert values(drain(again, 1)) == [b"new"]

    def test_no_commit_then_reopen_redelivers(self, make_transport: MakeTransport) -> None:
        transport = make_transport()
        transport.admin().create_topics([TopicSpec("c2", 2)])
        sent = [f"v{i}".encode() for i in range(40)]
        send(transport, [Message("c2", f"k{i}".encode(), v) for i, v in enumerate(sent)])
        consumer = transport.consumer("g")
        consumer.subscribe(["c2"])
        first = drain(consumer, 40)
        by_partition: dict[int | None, list[Message]] = defaultdict(list)
        for message in first:
            by_partition[message.partition].append(message)
        done = [m for ms in by_partition.values() for m in ms[: len(ms) // 2]]
        consumer.commit(positions(done))
        consumer.close()
        again = make_transport().consumer("g")
        again.subscribe(["c2"])
        redelivered = drain(again, 40 - len(done))
        assert sorted(values(redelivered)) == sorted(set(sent) - set(values(done)))
        assert quiet(again) == []

    def test_two_groups_each_receive_everything(self, make_transport: MakeTransport) -> None:
        transport = make_transport()
        transport.admin().create_topics([TopicSpec("fan", 3)])
        sent = {f"v{i}".encode() for i in range(60)}
        send(transport, [Message("fan", v, v) for v in sorted(sent)])
        for group in ("one", "two"):
            consumer = transport.consumer(group)
            consumer.subscribe(["fan"])
            assert set(values(drain(consumer, 60))) == sent
            consumer.close()

    def test_group_shares_partitions_and_survivor_takes_over_on_close(
            self, make_transport: MakeTransport) -> None:
        transport = make_transport(**{"heartbeat.interval.ms": 20})
        transport.admin().create_topics([TopicSpec("shared", 4)])
        everything = {TopicPartition("shared", p) for p in range(4)}
        leaving = transport.consumer("team")
        log_leaving = Recorder()
        leaving.subscribe(["shared"], log_leaving)
        staying = transport.consumer("team")
        log_staying = Recorder()
        staying.subscribe(["shared"], log_staying)
        wait_for(lambda: log_leaving.assigned | log_staying.assigned == everything
                 and len(log_leaving.assigned) == len(log_staying.assigned) == 2,
                 [leaving, staying])
        assert leaving.assignment() == log_leaving.assigned
        assert not leaving.assignment() & staying.assignment()

        sent = [f"v{i}".encode() for i in range(100)]
        send(transport, [Message("shared", f"key{i}".encode(), v) for i, v in enumerate(sent)])
        got_leaving: list[Message] = []
        got_staying: list[Message] = []
        deadline = time.monotonic() + 10
        while len(got_leaving) + len(got_staying) < 100 and time.monotonic() < deadline:
            got_leaving += leaving.poll(500, 0.05)
            got_staying += staying.poll(500, 0.05)
        assert got_leaving and got_staying, "one member got all the work"
        assert sorted(values(got_leaving + got_staying)) == sorted(sent)  # each exactly once
        # the leaver commits half of what it read, then closes: the survivor gets the rest
        half = got_leaving[: len(got_leaving) // 2]
        leaving.commit(positions(half))
        held = leaving.assignment()
        leaving.close()
        assert log_leaving.events[-1] == ("revoked", held)
        taken_over = drain(staying, len(got_leaving) - len(half))
        assert staying.assignment() == everything
        assert sorted(values(taken_over)) == sorted(values(got_leaving[len(half):]))
        assert quiet(staying) == []

    def test_revocation_lets_the_member_commit_before_the_handover(
            self, make_transport: MakeTransport) -> None:
        transport = make_transport(**{"heartbeat.interval.ms": 20})
        transport.admin().create_topics([TopicSpec("handover", 2)])
        send(transport, [Message("handover", None, f"v{i}".encode(), partition=i % 2)
                         for i in range(20)])
        first = transport.consumer("hg")
        read: list[Message] = []
        first.subscribe(["handover"], Recorder(
            on_revoke=lambda tps: first.commit(
                {tp: o for tp, o in positions(read).items() if tp in tps})))
        read += drain(first, 20)
        assert len(read) == 20
        second = transport.consumer("hg")
        log_second = Recorder()
        second.subscribe(["handover"], log_second)
        deadline = time.monotonic() + 10
        duplicates: list[Message] = []
        while not log_second.assigned and time.monotonic() < deadline:
            assert first.poll(10, 0.02) == []
            duplicates += second.poll(10, 0.02)
        assert log_second.assigned, "the second member never got a partition"
        assert duplicates + quiet(second) == [], "read before the revoked member committed"

    def test_member_that_stops_polling_is_evicted(self, make_transport: MakeTransport) -> None:
        transport = make_transport(**{"heartbeat.interval.ms": 20, "session.timeout.ms": 300,
                                      **self.stop_heartbeats_options()})
        transport.admin().create_topics([TopicSpec("evict", 2)])
        silent = transport.consumer("eg")
        silent.subscribe(["evict"])
        active = transport.consumer("eg")
        active.subscribe(["evict"])
        deadline = time.monotonic() + 5
        while len(active.assignment()) != 1 and time.monotonic() < deadline:
            silent.poll(10, 0.02)
            active.poll(10, 0.02)
        assert len(active.assignment()) == 1 and len(silent.assignment()) == 1
        send(transport, [Message("evict", None, f"v{i}".encode(), partition=i % 2)
                         for i in range(10)])
        received = drain(active, 10, timeout=10)  # the silent member's share arrives too
        assert sorted(values(received)) == sorted(f"v{i}".encode() for i in range(10))
        assert active.assignment() == {TopicPartition("evict", 0), TopicPartition("evict", 1)}
        revoked: list[frozenset[TopicPartition]] = []
        silent._listener = Recorder(on_revoke=revoked.append)  # type: ignore[attr-defined]
        silent.poll(10, 0.05)  # it finds out it was evicted, and rejoins
        assert revoked and silent.assignment() == frozenset()

    def stop_heartbeats_options(self) -> dict[str, Any]:
        """Options under which a consumer that does not poll stops heart-beating."""
        return {}

    def test_new_group_starting_latest_skips_old_messages(
            self, make_transport: MakeTransport) -> None:
        transport = make_transport()
        send(transport, [Message("late", None, b"old")])
        consumer = transport.consumer("late-group", start="latest")
        consumer.subscribe(["late"])
        assert quiet(consumer) == []
        send(transport, [Message("late", None, b"new")])
        assert values(drain(consumer, 1)) == [b"new"]

    def test_topics_are_isolated(self, make_transport: MakeTransport) -> None:
        transport = make_transport()
        send(transport, [Message("left", None, b"l"), Message("right", None, b"r")])
        consumer = transport.consumer("iso")
        consumer.subscribe(["left"])
        assert values(drain(consumer, 1)) == [b"l"]
        assert quiet(consumer) == []

    # -- replay, pause, wakeup ---------------------------------------------------------

    def test_assign_offset_range_and_seek_replay(self, make_transport: MakeTransport) -> None:
        transport = make_transport()
        tp = TopicPartition("replay", 0)
        sent = [f"v{i}".encode() for i in range(30)]
        producer = transport.producer()
        for start in range(0, 30, 7):  # several batches: several chunks
            producer.send([Message("replay", None, v) for v in sent[start:start + 7]])
        producer.flush(10)
        consumer = transport.consumer(None)
        consumer.assign([tp])
        assert consumer.assignment() == {tp}
        assert consumer.offset_range(tp) == (0, 30)
        consumer.seek(tp, 12)
        replayed: list[Message] = []
        while len(replayed) < 18:
            batch = consumer.poll(5, 1.0)  # small polls start inside chunks
            assert batch, "replay stalled"
            replayed += batch
        assert values(replayed) == sent[12:]
        assert [m.offset for m in replayed] == list(range(12, 30))
        consumer.seek(tp, 29)
        assert values(consumer.poll(10, 1.0)) == [b"v29"]
        with pytest.raises(TransportError):
            consumer.offset_range(TopicPartition("replay", 9))
        with pytest.raises(IllegalStateError):
            consumer.seek(TopicPartition("elsewhere", 0), 0)

    def test_a_position_beyond_the_end_reads_nothing(self, make_transport: MakeTransport
                                                     ) -> None:
        """Any non-negative position is accepted (a sink connector's offsets can be set to
        one): beyond the end, up to the largest 64-bit offset, a poll finds nothing.
        """
        transport = make_transport()
        transport.admin().create_topics([TopicSpec("far", 2)])
        send(transport, [Message("far", None, b"x", partition=1)])
        tp = TopicPartition("far", 1)
        consumer = transport.consumer(None)
        consumer.assign([tp])
        for offset in (1, 2**40, 2**63 - 2**40, 2**63 - 1):
            consumer.seek(tp, offset)
            assert consumer.poll(10, 0.1) == [], offset
        consumer.seek(tp, 0)
        assert values(drain(consumer, 1)) == [b"x"]
        committer = transport.consumer("far-group")
        committer.commit({tp: 2**63 - 1})
        committer.close()
        member = transport.consumer("far-group")
        member.subscribe(["far"])
        assert quiet(member) == []

    def test_pause_holds_back_a_partition_until_resumed(self, make_transport: MakeTransport
                                                        ) -> None:
        transport = make_transport()
        transport.admin().create_topics([TopicSpec("pz", 2)])
        paused, flowing = TopicPartition("pz", 0), TopicPartition("pz", 1)
        consumer = transport.consumer(None)
        consumer.assign([paused, flowing])
        consumer.pause([paused])
        send(transport, [Message("pz", None, f"{p}:{i}".encode(), partition=p)
                         for p in (0, 1) for i in range(5)])
        got = drain(consumer, 5) + quiet(consumer)
        assert {m.partition for m in got} == {1} and len(got) == 5
        consumer.resume([paused])
        assert sorted(values(drain(consumer, 5))) == [f"0:{i}".encode() for i in range(5)]
        with pytest.raises(IllegalStateError):
            consumer.pause([TopicPartition("pz", 7)])

    def test_wakeup_ends_a_blocking_poll(self, make_transport: MakeTransport) -> None:
        transport = make_transport()
        transport.admin().create_topics([TopicSpec("idle", 1)])
        consumer = transport.consumer(None)
        consumer.assign([TopicPartition("idle", 0)])
        timer = threading.Timer(0.2, consumer.wakeup)
        timer.start()
        started = time.monotonic()
        assert consumer.poll(10, 30.0) == []
        assert time.monotonic() - started < 10
        timer.join()

    def test_blocking_poll_returns_as_soon_as_a_message_arrives(
            self, make_transport: MakeTransport) -> None:
        transport = make_transport()
        transport.admin().create_topics([TopicSpec("soon", 1)])
        consumer = transport.consumer(None)
        consumer.assign([TopicPartition("soon", 0)])
        timer = threading.Timer(0.2, send, (transport, [Message("soon", None, b"hi")]))
        timer.start()
        started = time.monotonic()
        assert values(consumer.poll(10, 30.0)) == [b"hi"]
        assert time.monotonic() - started < 10
        timer.join()

    # -- misuse --------------------------------------------------------------------------

    def test_misuse_is_refused_with_clear_errors(self, make_transport: MakeTransport) -> None:
        transport = make_transport()
        lone = transport.consumer(None)
        with pytest.raises(IllegalStateError, match="group"):
            lone.subscribe(["t"])
        with pytest.raises(IllegalStateError, match="group"):
            lone.commit({TopicPartition("t", 0): 1})
        grouped = transport.consumer("g")
        grouped.subscribe(["t"])
        with pytest.raises(IllegalStateError, match="mixed"):
            grouped.assign([TopicPartition("t", 0)])
        with pytest.raises(TypeError, match=r"\['t'\]"):
            grouped.subscribe("t")
        with pytest.raises(ValueError, match="non-negative"):
            grouped.commit({TopicPartition("t", 0): -1})
        with pytest.raises(ValueError, match="earliest"):
            transport.consumer("g", start="middle")  # type: ignore[arg-type]
        with pytest.raises(ConfigError, match="native"):
            transport.producer({"acks": "all"})
        grouped.close()
        grouped.close()
        with pytest.raises(IllegalStateError, match="closed"):
            grouped.poll(1, 0)

    def test_bad_options_are_rejected_naming_the_key(self, make_transport: MakeTransport
                                                     ) -> None:
        with pytest.raises(ConfigError) as caught:
            make_transport(**{"max.message.bytes": "lots"})
        assert f"{self.name}.max.message.bytes" in str(caught.value)
        with pytest.raises(ConfigError) as caught:
            make_transport(**{"group.assignment": "sticky"})
        assert f"{self.name}.group.assignment" in str(caught.value)
        with pytest.raises(ConfigError) as caught:
            make_transport(**{"session.timeout": 100})
        assert f"did you mean {self.name}.session.timeout.ms" in str(caught.value)

    # -- key/value store and admin -----------------------------------------------------

    def test_kv_store_last_write_wins_scan_and_delete(self, make_transport: MakeTransport
                                                      ) -> None:
        transport = make_transport()
        store = transport.kv_store("offsets")
        assert store.get("missing") is None
        store.put("a", b"1")
        store.put("a", b"2")
        store.put_many({"ab": b"3", "b": b"4", "a/c": b"5", "gone": b"x"})
        store.put_many({"gone": None})
        assert store.get("a") == b"2" and store.get("gone") is None
        assert list(store.scan("a")) == [("a", b"2"), ("a/c", b"5"), ("ab", b"3")]
        assert [k for k, _ in store.scan()] == ["a", "a/c", "ab", "b"]
        other = transport.kv_store("elsewhere")
        assert list(other.scan()) == []
        store.close()
        reopened = make_transport().kv_store("offsets")
        assert reopened.get("a") == b"2"
        with pytest.raises(TypeError):
            reopened.put("k", "not bytes")  # type: ignore[arg-type]

    def test_admin_creates_lists_and_deletes_topics(self, make_transport: MakeTransport
                                                    ) -> None:
        transport = make_transport()
        admin = transport.admin()
        admin.create_topics([TopicSpec("a1", 3, {"cleanup.policy": "compact"}),
                             TopicSpec("a2", 1)])
        admin.create_topics([TopicSpec("a1", 5)])  # exists: left as it is
        topics = admin.list_topics()
        assert topics["a1"].partitions == 3 and topics["a1"].config == {
            "cleanup.policy": "compact"}
        send(transport, [Message("a2", None, b"v")])
        admin.delete_topics(["a2", "never-existed"])
        assert "a2" not in admin.list_topics()
        send(transport, [Message("a2", None, b"after")])
        consumer = transport.consumer(None)
        consumer.assign([TopicPartition("a2", 0)])
        assert values(drain(consumer, 1)) + quiet(consumer) == [b"after"]
        with pytest.raises(ValueError, match="partitions"):
            admin.create_topics([TopicSpec("zero", 0)])

    # -- a churning group ----------------------------------------------------------------

    def test_churning_group_delivers_each_message_exactly_once(
            self, make_transport: MakeTransport) -> None:
        """Members come and go (closing cleanly) while messages flow; each member commits
        after every poll, so with exclusive partition ownership nothing is lost and
        nothing is delivered twice.
        """
        import random

        transport = make_transport(**{"heartbeat.interval.ms": 20})
        transport.admin().create_topics([TopicSpec("churn", 6)])
        total = 3000
        delivered: list[Message] = []
        lock = threading.Lock()
        produced = threading.Event()
        errors: list[BaseException] = []

        def produce() -> None:
            producer = transport.producer()
            for start in range(0, total, 50):
                producer.send([Message("churn", f"k{i % 40}".encode(), f"{i}".encode())
                               for i in range(start, start + 50)])
                time.sleep(0.005)
            producer.close()
            produced.set()

        def member(seed: int) -> None:
            rng = random.Random(seed)
            try:
                while True:
                    consumer = transport.consumer("churners")
                    consumer.subscribe(["churn"])
                    for _ in range(rng.randint(5, 40)):
                        batch = consumer.poll(100, 0.02)
                        if batch:
                            with lock:
                                delivered.extend(batch)
                            consumer.commit(positions(batch))
                        with lock:
                            if produced.is_set() and len(delivered) >= total:
                                consumer.close()
                                return
                    consumer.close()
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=produce)]
        threads += [threading.Thread(target=member, args=(seed,)) for seed in range(3)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        assert not errors, errors
        assert not any(thread.is_alive() for thread in threads), "the group stalled"
        counts: dict[bytes | None, int] = defaultdict(int)
        for message in delivered:
            counts[message.value] += 1
        assert set(counts) == {f"{i}".encode() for i in range(total)}, "messages were lost"
        twice = [v for v, n in counts.items() if n > 1]
        assert not twice, f"{len(twice)} messages delivered twice, e.g. {twice[:5]}"
        by_key: dict[bytes | None, list[int]] = defaultdict(list)
        for message in delivered:
            by_key[message.key].append(int(message.value or b"0"))
        for key, sequence in by_key.items():
            assert sequence == sorted(sequence), f"key {key!r} out of order across members"
