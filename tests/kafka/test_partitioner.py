"""Kafka's default partitioner: the Java client's murmur2 vectors and the placement rule
(no broker needed; placement on a real broker is checked in test_kafka_transport.py).
"""

from __future__ import annotations

import pytest
from omconnect_kafka.partitioner import KeyPartitioner, murmur2, partition_for_key

# org.apache.kafka.common.utils.UtilsTest#testMurmur2: Utils.murmur2 as a signed int.
JAVA_MURMUR2 = {
    b"21": -973932308,
    b"foobar": -790332482,
    b"a-little-bit-long-string": -985981536,
    b"a-little-bit-longer-string": -1486304829,
    b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8": -58897971,
    b"abc": 479470107,
}


def java_partition(key: bytes, partitions: int) -> int:
    """BuiltInPartitioner.partitionForKey: toPositive(murmur2(key)) % numPartitions."""
    return (JAVA_MURMUR2[key] & 0x7FFFFFFF) % partitions


@pytest.mark.parametrize("key", sorted(JAVA_MURMUR2))
def test_murmur2_matches_the_java_client(key):
    signed = murmur2(key) - (1 << 32) if murmur2(key) >= 1 << 31 else murmur2(key)
    assert signed == JAVA_MURMUR2[key]


@pytest.mark.parametrize("partitions", [1, 2, 3, 5, 7, 12, 100])
def test_keyed_placement_is_the_java_clients(partitions):
    placer = KeyPartitioner()
    every = list(range(partitions))
    for key in JAVA_MURMUR2:
        expected = java_partition(key, partitions)
        assert partition_for_key(key, partitions) == expected
        assert placer.partition("t", key, every, every) == expected
        assert placer.partition("t", key, every, []) == expected, \
            "a key's partition must not depend on which leaders are known"


def test_keyless_records_stick_to_a_partition_until_a_new_batch():
    placer = KeyPartitioner()
    every = list(range(4))
    first = placer.partition("t", None, every, every)
    assert {placer.partition("t", None, every, every) for _ in range(50)} == {first}
    placer.on_new_batch("t", every, every, first)
    second = placer.partition("t", None, every, every)
    assert second != first, "a new batch moves key-less records to another partition"
    assert {placer.partition("t", None, every, every) for _ in range(50)} == {second}


def test_keyless_records_prefer_partitions_with_a_leader():
    placer = KeyPartitioner()
    for topic in (f"t{i}" for i in range(30)):
        assert placer.partition(topic, None, [0, 1, 2, 3], [2]) == 2
