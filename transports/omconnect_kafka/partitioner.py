"""Which partition a message goes to: Kafka's default partitioner, in both drivers.

Keyed messages go to ``toPositive(murmur2(key)) % numPartitions``, exactly what the Java
client's default partitioner (``BuiltInPartitioner.partitionForKey``) computes, so a
topic written by omconnect and by Java producers keeps one partition per key. The hash
is :func:`omconnect.transport.kit.partitioning.murmur2` (shared with the in-core transports,
so a pipeline moved from ``embedded`` to ``kafka`` keeps its key-to-partition mapping).

* kafka-python: the driver installs :class:`KeyPartitioner` (through a thin
  ``kafka.partitioner.Partitioner`` subclass); its hash is memoised, which makes it
  several times faster than kafka-python's own per-byte murmur2 loop.
* confluent-kafka: librdkafka's ``partitioner=murmur2_random`` is the same function in C
  (its default, ``consistent_random``, is CRC32 and would *not* match Java).

Messages without a key are "sticky" (KIP-480, as the Java client): they go to one
partition until the client starts a new batch for it, then to another, so batches stay
full while load still spreads.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Sequence

from omconnect.transport.kit.partitioning import murmur2, partition_for_key

__all__ = ["CONFLUENT_PARTITIONER", "KeyPartitioner", "murmur2", "partition_for_key"]

CONFLUENT_PARTITIONER = "murmur2_random"
"""librdkafka's name for the Java-compatible partitioner (murmur2 for keys, random
partition, sticky per batch, without one)."""


class KeyPartitioner:
    """Kafka's default partitioner, for a client that asks once per record.

    Safe to share between threads. Key hashes are memoised (keys repeat in most
    workloads), dropped whenever the memo grows past ``memo_size``.

    Args:
        memo_size: Most key hashes kept.

    """

    def __init__(self, memo_size: int = 65536) -> None:
        self._memo: dict[bytes, int] = {}
        self._memo_size = memo_size
        self._sticky: dict[str, int] = {}
        self._lock = threading.Lock()

    def partition(
        self,
        topic: str,
        key: bytes | None,
        partitions: Sequence[int],
        available: Sequence[int],
    ) -> int:
        """The partition for a record.

        Args:
            topic: The record's topic.
            key: The serialized key, or ``None``.
            partitions: Every partition of the topic, sorted.
            available: The partitions whose leader is known now (may be empty).

        Returns:
            One of ``partitions``.

        """
        if key is not None:
            return partitions[self.keyed(key, len(partitions))]
        current = self._sticky.get(topic)
        if current is None or current not in partitions:
            return self._next_sticky(topic, partitions, available, None)
        return current

    def keyed(self, key: bytes, count: int) -> int:
        """The partition of ``key`` in a topic of ``count`` partitions (Kafka's partition
        ids are ``0 .. count - 1``): ``toPositive(murmur2(key)) % count``.
        """
        value = self._memo.get(key)
        if value is None:
            if len(self._memo) >= self._memo_size:
                self._memo = {}
            value = self._memo[key] = murmur2(key) & 0x7FFFFFFF
        return value % count

    def sticky(self, topic: str) -> int | None:
        """The partition ``topic``'s key-less records go to now (``None`` before the
        first).
        """
        return self._sticky.get(topic)

    def on_new_batch(
        self, topic: str, partitions: Sequence[int], available: Sequence[int], previous: int
    ) -> None:
        """Move the topic's key-less records to another partition (a new batch starts).

        Args:
            topic: The topic.
            partitions: Every partition of the topic.
            available: The partitions whose leader is known now.
            previous: The partition whose batch just filled up.

        """
        with self._lock:
            if self._sticky.get(topic, previous) == previous:
                self._next_sticky(topic, partitions, available, previous)

    def _next_sticky(self, topic: str, partitions: Sequence[int], available: Sequence[int],
                     previous: int | None) -> int:
        pool = [p for p in (available or partitions) if p != previous] or list(partitions)
        chosen = random.choice(pool)
        self._sticky[topic] = chosen
        return chosen
