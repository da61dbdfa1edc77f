"""The pieces both in-core transports share: Kafka's key partitioning and the group
assignment strategies."""

from __future__ import annotations

import pytest

from omconnect.records import TopicPartition
from omconnect.transport import Message
from omconnect.transport.kit.grouping import range_assignor, round_robin_assignor
from omconnect.transport.kit.partitioning import (
    Partitioner,
    UnknownPartitionError,
    murmur2,
    partition_for_key,
)

# Kafka's own expectations for Utils.murmur2 (clients/.../UtilsTest.java), as signed ints.
KAFKA_VECTORS = {
    "21": -973932308,
    "foobar": -790332482,
    "a-little-bit-long-string": -985981536,
    "a-little-bit-longer-string": -1486304829,
    "lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8": -58897971,
    "abc": 479470107,
}


@pytest.mark.parametrize(("key", "expected"), sorted(KAFKA_VECTORS.items()))
def test_murmur2_matches_kafka(key: str, expected: int) -> None:
    value = murmur2(key.encode())
    assert (value - (1 << 32) if value >= 1 << 31 else value) == expected


def test_keys_go_where_kafkas_default_partitioner_puts_them() -> None:
    # toPositive(murmur2(key)) % partitions, e.g. "foobar" -> 1357151166 % 7
    assert partition_for_key(b"foobar", 7) == (-790332482 & 0x7FFFFFFF) % 7
    partitioner = Partitioner(memo_size=2)
    keys = [f"k{i}".encode() for i in range(50)] * 2  # the memo overflows and resets
    assert partitioner.partitions(list(keys), 6) == [partition_for_key(k, 6) for k in keys]


def test_keyless_messages_of_a_batch_stay_together_and_batches_rotate() -> None:
    partitioner = Partitioner()
    first = partitioner.partitions([None, b"a", None, None], 4)
    assert first[0] == first[2] == first[3] and first[1] == partition_for_key(b"a", 4)
    seen = {partitioner.partitions([None], 4)[0] for _ in range(8)}
    assert seen == {0, 1, 2, 3}


def test_place_honours_named_partitions_and_mixed_topics() -> None:
    partitioner = Partitioner()
    counts = {"a": 3, "b": 5}
    messages = [Message("a", b"k", b"v"), Message("b", None, b"v", partition=4),
                Message("a", None, b"v", partition=0)]
    assert partitioner.place(messages, counts.__getitem__) == [
        partition_for_key(b"k", 3), 4, 0]
    with pytest.raises(UnknownPartitionError) as caught:
        partitioner.place([Message("a", None, b"v"), Message("a", None, b"v", partition=3)],
                          counts.__getitem__)
    assert caught.value.index == 1 and "0 to 2" in str(caught.value)


def tps(topic: str, *partitions: int) -> set[TopicPartition]:
    return {TopicPartition(topic, p) for p in partitions}


def test_range_assignment_splits_each_topic_into_runs() -> None:
    members = {"m1": frozenset({"a", "b"}), "m2": frozenset({"a", "b"}),
               "m3": frozenset({"a"})}
    result = range_assignor(members, {"a": 7, "b": 3})
    assert result == {"m1": tps("a", 0, 1, 2) | tps("b", 0, 1),
                      "m2": tps("a", 3, 4) | tps("b", 2),
                      "m3": tps("a", 5, 6)}


def test_round_robin_assignment_deals_partitions_in_turn() -> None:
    members = {"m1": frozenset({"a", "b"}), "m2": frozenset({"a", "b"}),
               "m3": frozenset({"a"})}
    result = round_robin_assignor(members, {"a": 4, "b": 3})
    assert result == {"m1": tps("a", 0, 3) | tps("b", 1),
                      "m2": tps("a", 1) | tps("b", 0, 2),
                      "m3": tps("a", 2)}


@pytest.mark.parametrize("assignor", [range_assignor, round_robin_assignor])
def test_every_partition_has_exactly_one_member(assignor) -> None:  # type: ignore[no-untyped-def]
    members = {f"m{i}": frozenset({"a", "b", "c"} - {"abc"[i % 3]}) for i in range(5)}
    partitions = {"a": 10, "b": 1, "c": 4, "unsubscribed": 3}
    result = assignor(members, partitions)
    owned = [tp for share in result.values() for tp in share]
    assert len(owned) == len(set(owned))
    assert set(owned) == tps("a", *range(10)) | tps("b", 0) | tps("c", *range(4))
    for member, share in result.items():
        assert {tp.topic for tp in share} <= members[member]
