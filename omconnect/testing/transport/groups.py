"""Transport cases: commits, redelivery, replay and consumer groups (TRANSPORT-20 to
TRANSPORT-32).
"""

from __future__ import annotations

import contextlib
import os
import queue
import signal
from collections import defaultdict
from collections.abc import Sequence

import pytest

from omconnect.records import TopicPartition
from omconnect.testing.transport import workers
from omconnect.testing.transport.base import TransportCase, TransportHarness, message_ids
from omconnect.testing.waiting import Deadline
from omconnect.transport.messages import Message
from omconnect.transport.spi import Consumer, RebalanceListener

__all__ = ["DeliveryCases", "GroupCases"]


def next_positions(messages: Sequence[Message]) -> dict[TopicPartition, int]:
    """The position to commit after ``messages``: last offset + 1 per partition."""
    positions: dict[TopicPartition, int] = {}
    for m in messages:
        assert m.partition is not None and m.offset is not None
        tp = TopicPartition(m.topic, m.partition)
        positions[tp] = max(positions.get(tp, 0), m.offset + 1)
    return positions


def _values(count: int, tag: str) -> list[bytes]:
    return [f"{tag}{i}".encode() for i in range(count)]


def _keys(count: int) -> list[bytes | None]:
    return [f"k{i % 5}".encode() for i in range(count)]


class DeliveryCases(TransportCase):
    """What a commit means, what happens without one, and replay."""

    def _consume_and_commit_half(self, harness: TransportHarness, consumer: Consumer, count: int
                                 ) -> set[bytes | None]:
        """Consume everything, commit the first half of each partition, close; return
        the values that were not committed.
        """
        received = harness.receive(consumer, count)
        assert len(set(message_ids(received))) == count, \
            f"only {len(set(message_ids(received)))} of {count} messages arrived"
        by_partition: dict[int | None, list[Message]] = defaultdict(list)
        for message in received:
            by_partition[message.partition].append(message)
        committed: list[Message] = []
        for messages in by_partition.values():
            messages.sort(key=lambda m: m.offset or 0)
            committed.extend(messages[: len(messages) // 2])
        consumer.commit(next_positions(committed))
        consumer.close()
        return set(message_ids(received)) - set(message_ids(committed))

    def _reconsume(self, harness: TransportHarness, topic: str, group: str,
                   partitions: int) -> list[bytes | None]:
        """Join ``group`` again and read until one new marker per partition arrived;
        every other value read (the redelivered ones).
        """
        markers = harness.sentinels(harness.producer(), topic, partitions)
        consumer = harness.subscribed(group, [topic])
        received = harness.receive_until(consumer, lambda got: markers <= set(message_ids(got)))
        values = message_ids(received)
        assert markers <= set(values), "messages sent after the reopen never arrived"
        return [v for v in values if v not in markers]

    def test_commit_then_reopen_no_redelivery(self, harness: TransportHarness) -> None:
        """TRANSPORT-20: after a commit, a consumer of the same group that reopens does
        not receive the committed messages again.
        """
        partitions = harness.partitions(2)
        topic, group, count = harness.topic(partitions), harness.group(), harness.count(60)
        consumer = harness.listening(group, [topic])
        harness.produce(topic, _values(count, "m"), keys=_keys(count))
        received = harness.receive(consumer, count)
        assert len(received) >= count, f"only {len(received)} of {count} arrived"
        consumer.commit(next_positions(received))
        consumer.close()
        redelivered = self._reconsume(harness, topic, group, partitions)
        assert not redelivered, f"{len(redelivered)} committed messages were delivered " \
                                f"again, e.g. {redelivered[:5]}"

    def test_uncommitted_messages_are_redelivered(self, harness: TransportHarness) -> None:
        """TRANSPORT-21: messages read but not committed are delivered again to the
        group after the consumer reopens; committed ones are not.
        """
        partitions = harness.partitions(2)
        topic, group, count = harness.topic(partitions), harness.group(), harness.count(60)
        consumer = harness.listening(group, [topic])
        harness.produce(topic, _values(count, "u"), keys=_keys(count))
        uncommitted = self._consume_and_commit_half(harness, consumer, count)
        redelivered = self._reconsume(harness, topic, group, partitions)
        assert uncommitted - set(redelivered) == set(), \
            f"{len(uncommitted - set(redelivered))} uncommitted messages were not redelivered"
        assert set(redelivered) - uncommitted == set(), \
            f"{len(set(redelivered) - uncommitted)} committed messages were redelivered"

    def test_commit_survives_transport_reopen(self, harness: TransportHarness) -> None:
        """TRANSPORT-22: committed positions survive closing and reopening the transport
        (a restart of the process or broker, for a persistent transport).
        """
        harness.require(persistent=True)
        partitions = harness.partitions(2)
        topic, group, count = harness.topic(partitions), harness.group(), harness.count(40)
        consumer = harness.listening(group, [topic])
        harness.produce(topic, _values(count, "r"), keys=_keys(count))
        uncommitted = self._consume_and_commit_half(harness, consumer, count)
        harness.reopen()
        redelivered = self._reconsume(harness, topic, group, partitions)
        assert set(redelivered) == uncommitted

    def test_acknowledged_messages_survive_reopen(self, harness: TransportHarness) -> None:
        """TRANSPORT-23: acknowledged messages survive closing and reopening the
        transport, when it is persistent.
        """
        harness.require(persistent=True)
        topic, group, count = harness.topic(2), harness.group(), harness.count(50)
        harness.listening(group, [topic]).close()
        harness.produce(topic, _values(count, "p"), keys=_keys(count))
        harness.reopen()
        received = harness.receive(harness.subscribed(group, [topic]), count)
        assert set(message_ids(received)) == set(_values(count, "p"))

    def test_seek_back_redelivers(self, harness: TransportHarness) -> None:
        """TRANSPORT-24: seeking a partition back delivers its messages again, in order
        (the SPI's negative acknowledgement).
        """
        harness.require(replayable=True)
        topic, count = harness.topic(), harness.count(30)
        values = _values(count, "s")
        consumer = harness.listening(harness.group(), [topic])
        harness.produce(topic, values)
        first = harness.receive(consumer, count)
        assert message_ids(first) == values
        consumer.seek(TopicPartition(topic, 0), first[0].offset or 0)
        again = harness.receive(consumer, count)
        assert message_ids(again) == values, "seek back did not redeliver in order"

    def test_replay_from_offset(self, harness: TransportHarness) -> None:
        """TRANSPORT-25: a lone consumer can ``assign`` a partition, read its offset
        range and replay it from any offset.
        """
        harness.require(replayable=True)
        topic, count = harness.topic(), harness.count(40)
        values = _values(count, "o")
        acks = harness.produce(topic, values)
        tp = TopicPartition(topic, 0)
        consumer = harness.consumer(None)
        consumer.assign([tp])
        first, end = consumer.offset_range(tp)
        assert end - first == count, f"offset range ({first}, {end}) for {count} messages"
        middle = acks[count // 2].offset
        assert middle is not None, "a replayable transport reports offsets in acknowledgements"
        consumer.seek(tp, middle)
        replayed = harness.receive(consumer, count - count // 2)
        assert message_ids(replayed) == values[count // 2:]


class GroupCases(TransportCase):
    """Consumer groups: sharing, take-over, independence."""

    def _shared_topic(self, harness: TransportHarness) -> tuple[str, set[TopicPartition]]:
        harness.require(consumer_groups=True)
        partitions = harness.partitions(2)  # one, where the transport shares by message
        topic = harness.topic(partitions)
        return topic, {TopicPartition(topic, p) for p in range(partitions)}

    def test_group_shares_the_work(self, harness: TransportHarness) -> None:
        """TRANSPORT-26: two consumers of one group share a topic's messages: each is
        delivered to one of them, together they get all, and both get some when each
        holds a partition of its own, or when they hold the same one on a transport
        that shares a partition by message (not ``ordered_per_key``). Members that
        report the same partition on a transport ordered per key may take turns on it
        (Pulsar's Failover: one active consumer per partition), so one may get all.
        """
        topic, partitions = self._shared_topic(harness)
        group = harness.group()
        first, second = harness.subscribed(group, [topic]), harness.subscribed(group, [topic])
        early = harness.wait_assigned([first, second], partitions)
        count = harness.count(100)
        values = _values(count, "w")
        keys = [f"key{i}".encode() for i in range(count)]
        step = max(1, count // 10)  # several sends: a send may be one unit of dispatch
        for at in range(0, count, step):  # (Pulsar's Shared hands a wire batch to one member)
            harness.produce(topic, values[at:at + step], keys=keys[at:at + step])
        got: dict[str, list[Message]] = {"first": list(early), "second": []}
        deadline = Deadline(harness.settings.timeout)
        while sum(map(len, got.values())) < count and not deadline.expired:
            got["first"].extend(first.poll(500, 0.2))
            got["second"].extend(second.poll(500, 0.2))
        both = message_ids(got["first"]) + message_ids(got["second"])
        assert set(both) == set(values), f"{len(set(values) - set(both))} messages lost"
        assert len(both) == len(values), f"{len(both) - len(values)} delivered twice"
        with contextlib.suppress(NotImplementedError):
            held = first.assignment(), second.assignment()
            if all(held) and (held[0] != held[1] or not harness.capabilities.ordered_per_key):
                assert got["first"] and got["second"], "one consumer got all the work"

    def test_member_leaving_hands_over(self, harness: TransportHarness) -> None:
        """TRANSPORT-27: when a consumer leaves its group, another member takes over its
        partitions from the committed positions.
        """
        topic, partitions = self._shared_topic(harness)
        group = harness.group()
        leaving, staying = harness.subscribed(group, [topic]), harness.subscribed(group, [topic])
        harness.wait_assigned([leaving, staying], partitions)
        count = harness.count(40)
        before = _values(count, "b")
        harness.produce(topic, before, keys=[f"key{i}".encode() for i in range(count)])
        got: dict[int, list[Message]] = {0: [], 1: []}
        deadline = Deadline(harness.settings.timeout)
        while len(got[0]) + len(got[1]) < count and not deadline.expired:
            for index, consumer in enumerate((leaving, staying)):
                got[index].extend(consumer.poll(500, 0.2))
        for index, consumer in enumerate((leaving, staying)):
            if got[index]:
                consumer.commit(next_positions(got[index]))
        leaving.close()
        after = _values(count, "a")
        harness.produce(topic, after, keys=[f"key{i}".encode() for i in range(count)])
        received = harness.receive_until(staying, lambda g: set(after) <= set(message_ids(g)),
                                     timeout=harness.settings.timeout * 2)
        missing = set(after) - set(message_ids(received))
        assert not missing, f"{len(missing)} messages of the leaver's partitions never " \
                            "reached the remaining member"
        again = set(before) & set(message_ids(received))
        assert not again, f"{len(again)} committed messages were delivered again"

    def test_member_killed_hands_over(self, harness: TransportHarness) -> None:
        """TRANSPORT-28: when a group member's process is killed (no close, no commit),
        another member receives everything it had read but not committed.
        """
        topic, _ = self._shared_topic(harness)
        harness.require(cross_process=True)
        group, count = harness.group(), harness.count(40)
        values = _values(count, "x")
        reports = workers.queue()
        child = workers.spawn(workers.consume_without_commit, harness.portable_factory(), topic,
                              group, reports)
        early: list[Message] = []
        try:
            assert reports.get(timeout=harness.settings.timeout * 2) == "ready", \
                "the child consumer did not join the group"
            survivor = harness.subscribed(group, [topic])
            early = survivor.poll(100, 0.2)  # joining; a fast rebalance may deliver some
            harness.produce(topic, values, keys=[f"key{i}".encode() for i in range(count)])
            with contextlib.suppress(queue.Empty):  # the child may hold no partition now
                reports.get(timeout=harness.settings.timeout)
        finally:
            if child.pid is not None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(child.pid, signal.SIGKILL)
            child.join(10)
        received = early + harness.receive_until(
            survivor, lambda g: set(values) <= set(message_ids(early + g)),
            timeout=harness.settings.timeout * 3)
        missing = set(values) - set(message_ids(received))
        assert not missing, f"{len(missing)} uncommitted messages of the killed member " \
                            "never reached the survivor"

    def test_two_groups_each_receive_everything(self, harness: TransportHarness) -> None:
        """TRANSPORT-29: every group receives every message of a topic."""
        harness.require(consumer_groups=True)
        topic, count = harness.topic(2), harness.count(50)
        values = _values(count, "g")
        groups = [harness.listening(harness.group(), [topic]) for _ in range(2)]
        harness.produce(topic, values, keys=_keys(count))
        for consumer in groups:
            received = harness.receive(consumer, count)
            assert set(message_ids(received)) == set(values)

    def test_new_group_receives_old_messages(self, harness: TransportHarness) -> None:
        """TRANSPORT-30: a group that subscribes after messages were sent (starting from
        ``earliest``) receives them.
        """
        harness.require(new_subscriber_receives_old_messages=True)
        topic = harness.topic()
        harness.produce(topic, [b"old-1", b"old-2"])
        consumer = harness.subscribed(harness.group(), [topic], start="earliest")
        received = harness.receive(consumer, 2)
        assert message_ids(received) == [b"old-1", b"old-2"]

    def test_rebalance_listener_sees_assignment(self, harness: TransportHarness) -> None:
        """TRANSPORT-31: a subscriber's RebalanceListener is told, from ``poll``, which
        partitions it was assigned.
        """
        harness.require(consumer_groups=True)
        topic = harness.topic(2)
        wanted = {TopicPartition(topic, p) for p in range(harness.partitions(2))}
        assigned: set[TopicPartition] = set()

        class Listener(RebalanceListener):
            def on_partitions_assigned(self, partitions: frozenset[TopicPartition]) -> None:
                assigned.update(partitions)

            def on_partitions_revoked(self, partitions: frozenset[TopicPartition]) -> None:
                assigned.difference_update(partitions)

        consumer = harness.consumer(harness.group())
        consumer.subscribe([topic], Listener())
        deadline = Deadline(harness.settings.timeout)
        while assigned != wanted and not deadline.expired:
            consumer.poll(10, 0.2)
        assert assigned == wanted, f"listener saw {sorted(assigned)}, expected {sorted(wanted)}"

    def test_pause_and_resume(self, harness: TransportHarness) -> None:
        """TRANSPORT-32: a paused partition delivers nothing until resumed, then
        everything, while other partitions keep flowing.
        """
        harness.require(pause=True)
        if harness.capabilities.max_partitions < 2:
            pytest.skip("needs capability max_partitions >= 2")
        topic = harness.topic(2)
        paused, flowing = TopicPartition(topic, 0), TopicPartition(topic, 1)
        consumer = harness.subscribed(harness.group(), [topic])
        harness.wait_assigned([consumer], {paused, flowing})
        consumer.pause([paused])
        harness.send(harness.producer(), [Message(topic, value=f"{p}:{i}".encode(), partition=p)
                                  for p in (0, 1) for i in range(10)])
        while_paused = harness.receive_until(
            consumer, lambda g: {f"1:{i}".encode() for i in range(10)} <= set(message_ids(g)))
        while_paused += harness.receive_quiet(consumer)
        assert {m.partition for m in while_paused} == {1}, "a paused partition delivered"
        consumer.resume([paused])
        resumed = harness.receive(consumer, 10)
        assert set(message_ids(resumed)) == {f"0:{i}".encode() for i in range(10)}
