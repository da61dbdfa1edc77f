"""Transport cases: producing and consuming (TRANSPORT-1 to TRANSPORT-19)."""

from __future__ import annotations

import threading
from collections import defaultdict

import pytest

from omconnect.errors import MessageTooLargeError, TransportError, UnsupportedOperationError
from omconnect.testing.transport import workers
from omconnect.testing.transport.base import TransportCase, TransportHarness, message_ids
from omconnect.testing.waiting import Deadline, run_bounded
from omconnect.transport.capabilities import Capabilities
from omconnect.transport.messages import Message

__all__ = ["MessagingCases"]

ONE_MIB = 1024 * 1024


class MessagingCases(TransportCase):
    """Round trips, payload edge cases, concurrency, ordering and admin."""

    def test_declares_capabilities(self, harness: TransportHarness) -> None:
        """TRANSPORT-1: a transport has a name and declares its capabilities as a
        :class:`Capabilities` record.
        """
        assert isinstance(harness.transport.name, str) and harness.transport.name
        assert isinstance(harness.capabilities, Capabilities)
        assert harness.capabilities.max_partitions >= 1

    def test_round_trip(self, harness: TransportHarness) -> None:
        """TRANSPORT-2: every acknowledged message is delivered with its key, value and
        timestamp; a send is acknowledged with one RecordMetadata per message, in order.
        """
        topic = harness.topic(partitions=2)
        consumer = harness.listening(harness.group(), [topic])
        count = harness.count(100)
        sent = [Message(topic, key=f"k{i % 7}".encode(), value=f"v{i}".encode(),
                        timestamp=1_700_000_000_000 + i) for i in range(count)]
        acks = harness.send(harness.producer(), sent)
        assert len(acks) == count, "one acknowledgement per message"
        assert all(ack.topic == topic and ack.partition is not None for ack in acks)
        received = harness.receive(consumer, count)
        by_value = {m.value: m for m in received}
        missing = [m.value for m in sent if m.value not in by_value]
        assert not missing, f"{len(missing)} of {count} acknowledged messages never arrived, " \
                            f"e.g. {missing[:5]}"
        for message in sent:
            got = by_value[message.value]
            assert got.topic == topic
            assert got.key == message.key
            assert got.timestamp == message.timestamp, "the timestamp given is kept"
            assert got.partition is not None and got.offset is not None
        for ack, message in zip(acks, sent, strict=True):
            assert ack.partition == by_value[message.value].partition, \
                "the acknowledgement names the partition the message was stored in"

    def test_headers_round_trip(self, harness: TransportHarness) -> None:
        """TRANSPORT-3: headers arrive in order, with repeated keys, empty and null values."""
        harness.require(headers=True)
        topic = harness.topic()
        consumer = harness.listening(harness.group(), [topic])
        headers = (("trace", b"1"), ("empty", b""), ("trace", b"2"), ("null", None),
                   ("bin", bytes(range(256))))
        harness.send(harness.producer(), [Message(topic, value=b"h", headers=headers)])
        received = harness.receive(consumer, 1)
        assert received, "the message never arrived"
        assert received[0].headers == headers

    def test_null_key(self, harness: TransportHarness) -> None:
        """TRANSPORT-4: a message without a key is delivered with key ``None``."""
        topic = harness.topic(partitions=2)
        consumer = harness.listening(harness.group(), [topic])
        harness.send(harness.producer(), [Message(topic, key=None, value=f"n{i}".encode())
                                  for i in range(10)])
        received = harness.receive(consumer, 10)
        expected = sorted(f"n{i}".encode() for i in range(10))
        assert sorted(m.value or b"" for m in received) == expected
        assert all(m.key is None for m in received)

    def test_tombstone(self, harness: TransportHarness) -> None:
        """TRANSPORT-5: a null value (a tombstone) arrives as ``None``, distinct from an
        empty value.
        """
        topic = harness.topic()
        consumer = harness.listening(harness.group(), [topic])
        sent = [Message(topic, key=b"gone", value=None), Message(topic, key=b"empty", value=b"")]
        harness.send(harness.producer(), sent)
        received = harness.receive(consumer, 2)
        assert {m.key: m.value for m in received} == {b"gone": None, b"empty": b""}

    def test_empty_and_binary_payloads(self, harness: TransportHarness) -> None:
        """TRANSPORT-6: keys and values are bytes, carried exactly: empty, every byte
        value, invalid UTF-8.
        """
        topic = harness.topic()
        consumer = harness.listening(harness.group(), [topic])
        payloads = [b"", bytes(range(256)), b"\xff\xfe\x00\x80", b"\x00" * 64]
        sent = [Message(topic, key=payload, value=bytes([i]) + payload)
                for i, payload in enumerate(payloads)]
        sent.append(Message(topic, key=b"empty-value", value=b""))
        harness.send(harness.producer(), sent)
        received = harness.receive(consumer, len(sent))
        assert sorted((m.key or b"", m.value or b"") for m in received) == \
            sorted((m.key or b"", m.value or b"") for m in sent), "payload bytes changed"
        assert sorted((m.key, m.value) for m in received) == \
            sorted((m.key, m.value) for m in sent), "an empty key or value became None"

    def test_large_message(self, harness: TransportHarness) -> None:
        """TRANSPORT-7: a 1 MiB message (or one of the declared maximum size) is accepted
        and delivered intact.
        """
        limit = harness.capabilities.max_message_bytes
        size = ONE_MIB if limit is None else min(ONE_MIB, limit - 64)
        topic = harness.topic()
        consumer = harness.listening(harness.group(), [topic])
        value = bytes(i % 251 for i in range(size))
        harness.send(harness.producer(), [Message(topic, key=b"big", value=value)])
        received = harness.receive(consumer, 1)
        assert received, f"a message of {size} bytes never arrived"
        assert received[0].value == value

    def test_message_over_maximum_is_rejected(self, harness: TransportHarness) -> None:
        """TRANSPORT-8: a message over ``max_message_bytes`` fails with
        MessageTooLargeError naming the limit, and nothing of its batch is delivered.
        """
        limit = harness.capabilities.max_message_bytes
        if limit is None:
            pytest.skip("needs capability max_message_bytes (the transport declares no limit)")
        topic = harness.topic()
        consumer = harness.listening(harness.group(), [topic])
        batch = [Message(topic, value=b"small-before"),
                 Message(topic, value=b"x" * (limit + 1)),
                 Message(topic, value=b"small-after")]
        producer = harness.producer()
        with pytest.raises(MessageTooLargeError) as caught:
            producer.send(batch).result(timeout=harness.settings.timeout)
        assert str(limit) in str(caught.value), "the error names the limit"
        harness.send(producer, [Message(topic, value=b"marker")])
        received = harness.receive_until(consumer,
                                     lambda got: b"marker" in message_ids(got))
        assert message_ids(received) == [b"marker"], \
            "nothing of a batch with a too-large message may be delivered"

    def test_concurrent_producers_lose_nothing(self, harness: TransportHarness) -> None:
        """TRANSPORT-9: 20 producers sending at once from 20 threads lose nothing and
        duplicate nothing.
        """
        topic = harness.topic(partitions=4)
        consumer = harness.listening(harness.group(), [topic])
        producers, per_producer = 20, harness.count(500)
        errors: list[BaseException] = []

        def run(index: int) -> None:
            try:
                producer = harness.producer()
                messages = [Message(topic, key=f"p{index}".encode(),
                                    value=f"{index}:{i}".encode()) for i in range(per_producer)]
                harness.send(producer, messages, batch=100)
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=run, args=(i,)) for i in range(producers)]
        for thread in threads:
            thread.start()
        deadline = Deadline(harness.settings.timeout * 2)
        for thread in threads:
            thread.join(deadline.remaining)
        assert not any(t.is_alive() for t in threads), "a producer thread hangs"
        assert not errors, f"sends failed: {errors[:3]}"
        expected = producers * per_producer
        received = harness.receive(consumer, expected)
        values = message_ids(received)
        assert len(set(values)) == expected, \
            f"{expected - len(set(values))} of {expected} acknowledged messages were lost"
        assert len(values) == expected, f"{len(values) - expected} duplicates"

    def test_two_writers_on_one_partition_skip_nothing_for_a_reader(
            self, harness: TransportHarness) -> None:
        """TRANSPORT-74: two producers of separate transport instances appending to one
        partition while a consumer reads it: every acknowledged message reaches the
        consumer, each once, in offset order (offsets become visible in order, so a reader
        never moves past a message that is still being written).
        """
        topic = harness.topic(partitions=1)
        consumer = harness.listening(harness.group(), [topic])
        per_writer = harness.count(1500)
        writers = [harness.factory() for _ in range(2)]
        errors: list[BaseException] = []
        acknowledged: list[bytes] = []
        lock = threading.Lock()

        def write(index: int) -> None:
            producer = writers[index].producer()
            try:
                for start in range(0, per_writer, 50):
                    values = [f"w{index}:{n:06d}".encode()
                              for n in range(start, min(per_writer, start + 50))]
                    producer.send([Message(topic, value=v) for v in values]).result(
                        timeout=harness.settings.timeout)
                    with lock:
                        acknowledged.extend(values)
            except BaseException as exc:
                errors.append(exc)
            finally:
                producer.close()

        try:
            threads = [threading.Thread(target=write, args=(i,)) for i in range(2)]
            for thread in threads:
                thread.start()
            received: list[Message] = []
            deadline = Deadline(harness.settings.timeout * 2)
            while any(t.is_alive() for t in threads) and not deadline.expired:
                received.extend(consumer.poll(500, 0.1))
            for thread in threads:
                thread.join(max(deadline.remaining, 0.01))
            assert not any(t.is_alive() for t in threads), "a writer hangs"
            assert not errors, f"sends failed: {errors[:3]}"
            expected = set(acknowledged)
            received += harness.receive_until(
                consumer, lambda got: expected <= {m.value for m in received + got})
        finally:
            for writer in writers:
                writer.close()
        values = [m.value for m in received]
        missing = expected - set(values)
        assert not missing, f"{len(missing)} of {len(expected)} acknowledged messages were " \
                            f"skipped by the reader, e.g. {sorted(missing)[:3]}"
        assert len(values) == len(set(values)), f"{len(values) - len(set(values))} duplicates"
        offsets = [m.offset for m in received if m.offset is not None]
        assert offsets == sorted(offsets), "the reader got the partition out of offset order"
        for index in range(2):
            own = [v for v in values if v is not None and v.startswith(f"w{index}:".encode())]
            assert own == sorted(own), f"writer {index}'s messages arrived out of order"

    def test_close_flushes(self, harness: TransportHarness) -> None:
        """TRANSPORT-10: closing a producer first delivers every message sent on it."""
        topic = harness.topic()
        consumer = harness.listening(harness.group(), [topic])
        producer = harness.transport.producer()
        expected = []
        for batch in range(max(1, harness.count(200) // 20)):
            values = [f"c{batch}-{j}".encode() for j in range(20)]
            producer.send([Message(topic, value=v) for v in values])
            expected.extend(values)
        run_bounded(lambda: producer.close(harness.settings.timeout), harness.settings.timeout + 5,
                    "Producer.close")
        received = harness.receive(consumer, len(expected))
        lost = set(expected) - set(message_ids(received))
        assert not lost, f"{len(lost)} of {len(expected)} messages sent before close were lost"

    def test_flush_waits_for_acknowledgements(self, harness: TransportHarness) -> None:
        """TRANSPORT-11: after ``flush`` returns, every future of an earlier send is done."""
        topic = harness.topic()
        producer = harness.producer()
        futures = [producer.send([Message(topic, value=f"f{i}".encode())]) for i in range(50)]
        run_bounded(lambda: producer.flush(harness.settings.timeout), harness.settings.timeout + 5,
                    "Producer.flush")
        assert all(f.done() for f in futures), "flush returned before every send was acknowledged"
        assert all(f.exception() is None for f in futures)

    def test_send_after_close_fails(self, harness: TransportHarness) -> None:
        """TRANSPORT-12: ``close`` is idempotent and sending on a closed producer raises
        TransportError (it is never silently dropped).
        """
        topic = harness.topic()
        producer = harness.transport.producer()
        producer.close()
        producer.close()
        with pytest.raises(TransportError):
            producer.send([Message(topic, value=b"late")]).result(timeout=harness.settings.timeout)

    def test_order_per_key(self, harness: TransportHarness) -> None:
        """TRANSPORT-13: messages of one key are stored in one partition and consumed in
        the order sent, over 16 keys on a multi-partition topic.
        """
        harness.require(ordered_per_key=True)
        topic = harness.topic(partitions=4)
        consumer = harness.listening(harness.group(), [topic])
        keys, per_key = 16, harness.count(50)
        producer = harness.producer()
        sent = [Message(topic, key=f"key-{i % keys}".encode(),
                        value=f"{i % keys}:{i // keys}".encode()) for i in range(keys * per_key)]
        for start in range(0, len(sent), 64):  # several batches, interleaved keys
            harness.send(producer, sent[start:start + 64])
        received = harness.receive(consumer, len(sent))
        assert len(received) >= len(sent), f"only {len(received)} of {len(sent)} arrived"
        sequences: dict[bytes | None, list[int]] = defaultdict(list)
        partitions: dict[bytes | None, set[int]] = defaultdict(set)
        for message in received:
            assert message.value is not None
            sequences[message.key].append(int(message.value.split(b":")[1]))
            partitions[message.key].add(message.partition or 0)
        for key, sequence in sequences.items():
            assert len(partitions[key]) == 1, \
                f"key {key!r} spread over partitions {sorted(partitions[key])}"
            assert sequence == sorted(sequence), \
                f"key {key!r} consumed out of order: {_first_disorder(sequence)}"

    def test_poll_honours_max_records_and_timeout(self, harness: TransportHarness) -> None:
        """TRANSPORT-14: ``poll`` returns at most ``max_records`` messages, and an empty
        list (not a hang) when nothing arrives within its timeout.
        """
        topic = harness.topic()
        consumer = harness.listening(harness.group(), [topic])
        assert run_bounded(lambda: consumer.poll(10, 0.2), harness.settings.timeout,
                           "poll on an empty topic") == []
        harness.produce(topic, [f"m{i}".encode() for i in range(30)])
        deadline = Deadline(harness.settings.timeout)
        received = 0
        while received < 30 and not deadline.expired:
            batch = consumer.poll(7, 0.5)
            assert len(batch) <= 7, f"poll(max_records=7) returned {len(batch)} messages"
            received += len(batch)
        assert received == 30

    def test_topics_are_isolated(self, harness: TransportHarness) -> None:
        """TRANSPORT-15: a consumer of one topic never receives another topic's messages."""
        first, second = harness.topic(), harness.topic()
        consumer = harness.listening(harness.group(), [second])
        harness.produce(first, [b"first"])
        harness.produce(second, [b"second"])
        received = harness.receive(consumer, 1)
        received += harness.receive_quiet(consumer)
        assert message_ids(received) == [b"second"]
        assert all(m.topic == second for m in received)

    def test_offsets_increase_within_a_partition(self, harness: TransportHarness) -> None:
        """TRANSPORT-16: consumed messages carry their partition and offset; within a
        partition offsets strictly increase and match the acknowledgements (when the
        transport reports offsets).
        """
        topic = harness.topic(partitions=2)
        consumer = harness.listening(harness.group(), [topic])
        acks = harness.produce(topic, [f"o{i}".encode() for i in range(40)],
                           keys=[f"k{i % 5}".encode() for i in range(40)])
        received = harness.receive(consumer, 40)
        last: dict[int | None, int] = {}
        for message in received:
            assert message.partition is not None and message.offset is not None
            assert message.offset > last.get(message.partition, -1), \
                f"offsets not increasing in partition {message.partition}"
            last[message.partition] = message.offset
        acked = {(a.partition, a.offset) for a in acks if a.offset is not None}
        if acked:
            assert acked == {(m.partition, m.offset) for m in received}

    def test_admin_creates_lists_deletes_topics(self, harness: TransportHarness) -> None:
        """TRANSPORT-17: admin creates topics with the partitions asked, lists them,
        leaves an existing topic as it is, and deletes topics (unknown names ignored).
        """
        name = harness.name("admin")
        partitions = harness.partitions(3)
        admin = harness.transport.admin()
        try:
            from omconnect.transport.messages import TopicSpec

            admin.create_topics([TopicSpec(name, partitions)])
            admin.create_topics([TopicSpec(name, partitions)])
            listed = admin.list_topics()
            assert name in listed, "a created topic is listed"
            assert listed[name].partitions == partitions
            admin.delete_topics([name, harness.name("never-created")])
            deadline = Deadline(harness.settings.timeout)
            assert deadline.wait_for(lambda: name not in admin.list_topics(), 0.2), \
                "a deleted topic is still listed"
        finally:
            admin.close()

    def test_concurrent_creators_agree_on_one_layout(self, harness: TransportHarness) -> None:
        """TRANSPORT-19: two creators of one topic at once, asking for different partition
        counts (separate transport instances; separate processes where ``cross_process``),
        end with one layout, the same for every client, and every partition of it takes
        and delivers messages.
        """
        wide = harness.partitions(4)
        if wide < 2:
            pytest.skip("needs max_partitions >= 2 (one layout is all there is)")
        admin = harness.transport.admin()
        try:
            admin.list_topics()
        except UnsupportedOperationError:
            pytest.skip("needs Admin.list_topics (the case reads the layout that won)")
        finally:
            admin.close()
        for _ in range(max(1, round(5 * harness.settings.scale))):
            name = harness.name("race")
            harness.adopt(name, wide)
            _create_at_once(harness, name, [1, wide])
            layouts = set()
            for _client in range(2):  # what a fresh client sees, twice
                transport = harness.factory()
                try:
                    other = transport.admin()
                    layouts.add(other.list_topics()[name].partitions)
                    other.close()
                finally:
                    transport.close()
            assert len(layouts) == 1 and layouts <= {1, wide}, (
                f"topic {name!r} created at once with 1 and {wide} partitions: clients see "
                f"partition counts {sorted(layouts)}")
            (count,) = layouts
            harness.adopt(name, count)
            consumer = harness.listening(harness.group(), [name])
            values = [f"{name}-p{p}".encode() for p in range(count)]
            harness.send(harness.producer(), [Message(name, value=v, partition=p)
                                      for p, v in enumerate(values)])
            received = harness.receive(consumer, count)
            missing = set(values) - set(message_ids(received))
            assert not missing, (
                f"{len(missing)} of the {count} partitions of the raced topic lost a "
                f"message sent to them (no queue or stream behind them?): "
                f"{sorted(missing)[:4]}")

    def test_wakeup_ends_a_blocking_poll(self, harness: TransportHarness) -> None:
        """TRANSPORT-18 (SHOULD): ``wakeup`` from another thread ends a blocking ``poll``
        early, so a task can stop promptly.
        """
        from omconnect.transport.spi import Consumer

        topic = harness.topic()
        consumer = harness.listening(harness.group(), [topic])
        if type(consumer).wakeup is Consumer.wakeup:
            pytest.skip("needs Consumer.wakeup (optional SPI method, not implemented)")
        consumer.poll(10, 0.1)
        timer = threading.Timer(0.3, consumer.wakeup)
        timer.start()
        try:
            result = run_bounded(lambda: consumer.poll(10, 600.0), harness.settings.timeout,
                                 "poll(timeout=600) after wakeup()")
        finally:
            timer.cancel()
        assert result == []


def _first_disorder(sequence: list[int]) -> str:
    for i in range(1, len(sequence)):
        if sequence[i] < sequence[i - 1]:
            return f"{sequence[i - 1]} before {sequence[i]} (position {i})"
    return "?"



def _create_at_once(harness: TransportHarness, name: str, counts: list[int]) -> None:
    """Create topic ``name`` from one creator per entry of ``counts`` (that many
    partitions each), all released at the same moment: child processes where the
    transport is ``cross_process``, threads with transport instances of their own
    otherwise.
    """
    if harness.capabilities.cross_process:
        start, reports = workers.event(), workers.queue()
        factory = harness.portable_factory()
        children = [workers.spawn(workers.create_topic, factory, name, count, start, reports)
                    for count in counts]
        start.set()
        errors = [reports.get(timeout=harness.settings.timeout * 2) for _ in children]
        for child in children:
            child.join(10)
    else:
        gate = threading.Barrier(len(counts))
        errors = [None] * len(counts)

        def create(index: int, count: int) -> None:
            from omconnect.transport.messages import TopicSpec

            transport = harness.factory()
            try:
                admin = transport.admin()
                gate.wait(30)
                admin.create_topics([TopicSpec(name, count)])
                admin.close()
            except BaseException as exc:
                errors[index] = exc
            finally:
                transport.close()

        threads = [threading.Thread(target=create, args=(i, c)) for i, c in enumerate(counts)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(harness.settings.timeout * 2)
    failed = [e for e in errors if e is not None]
    assert not failed, f"creating a topic at the same moment as another client failed: {failed}"
