"""Choosing a partition for a message: by key like Kafka, sticky per batch without one.

A keyed message goes to ``murmur2(key) & 0x7fffffff % partitions``: the function of
Kafka's default partitioner (``Utils.murmur2`` with seed ``0x9747b28c``). Equal keys
therefore land in one partition, and in the *same* partition number Kafka would choose
for a topic with as many partitions, so a pipeline moved between the in-core transports
and Kafka keeps its key-to-partition mapping.

A message without a key goes, with the other key-less messages of its batch, to one
partition; the next batch goes to the next partition (Kafka's "sticky" idea: whole
batches stay together, and load still spreads over the partitions).
"""

from __future__ import annotations

import itertools
import operator
import struct
import threading
from collections.abc import Callable, Sequence
from typing import Any

from omconnect.errors import TransportError
from omconnect.transport.messages import Message

__all__ = ["Partitioner", "UnknownPartitionError", "murmur2", "partition_for_key"]

_SEED = 0x9747B28C
_M = 0x5BD1E995
_MASK = 0xFFFFFFFF
_WORDS = struct.Struct("<I")
_TOPIC = operator.attrgetter("topic")
_PARTITION = operator.attrgetter("partition")
_KEY = operator.attrgetter("key")


def murmur2(data: bytes) -> int:
    """The 32-bit MurmurHash2 of ``data``, as Kafka's ``Utils.murmur2`` computes it.

    Returns:
        The hash as an unsigned 32-bit integer.

    """
    length = len(data)
    h = (_SEED ^ length) & _MASK
    body = length & ~3
    for (k,) in _WORDS.iter_unpack(data[:body]):
        k = (k * _M) & _MASK
        k ^= k >> 24
        h = ((h * _M) & _MASK) ^ ((k * _M) & _MASK)
    tail = length & 3
    if tail:
        if tail == 3:
            h ^= data[body + 2] << 16
        if tail >= 2:
            h ^= data[body + 1] << 8
        h ^= data[body]
        h = (h * _M) & _MASK
    h ^= h >> 13
    h = (h * _M) & _MASK
    h ^= h >> 15
    return h


def partition_for_key(key: bytes, partitions: int) -> int:
    """The partition of ``partitions`` that ``key`` belongs to (Kafka's choice)."""
    return (murmur2(key) & 0x7FFFFFFF) % partitions


class UnknownPartitionError(TransportError):
    """A message names a partition its topic does not have.

    Attributes:
        index: The message's index in its batch.

    """

    def __init__(self, message: str, *, index: int, **context: Any) -> None:
        super().__init__(message, **context)
        self.index = index


class Partitioner:
    """Picks partitions for the messages of a batch. Safe to share between threads.

    Key hashes are memoised (keys repeat in most workloads and hashing in Python costs
    about 1.5 µs a key); the memo is dropped whenever it grows past ``memo_size``.

    Args:
        memo_size: Most key hashes kept.

    """

    def __init__(self, memo_size: int = 65536) -> None:
        self._memo: dict[bytes, int] = {}
        self._memo_size = memo_size
        self._sticky = itertools.count()
        self._lock = threading.Lock()

    def key_hash(self, key: bytes) -> int:
        """The non-negative hash that places ``key``."""
        value = self._memo.get(key)
        if value is None:
            if len(self._memo) >= self._memo_size:
                self._memo = {}
            value = self._memo[key] = murmur2(key) & 0x7FFFFFFF
        return value

    def next_sticky(self) -> int:
        """A fresh counter value: the batch's key-less messages go to ``value % partitions``."""
        with self._lock:
            return next(self._sticky)

    def partitions(self, keys: list[bytes | None], count: int) -> list[int]:
        """The partition of each key, for a topic of ``count`` partitions.

        Every ``None`` key of the call gets the same partition, which changes from one
        call to the next.
        """
        if count == 1:
            return [0] * len(keys)
        memo: dict[bytes | None, int] = self._memo  # type: ignore[assignment]
        hashes = list(map(memo.get, keys))  # None: a None key, or not memoised yet
        if None in hashes:
            sticky = -1
            for index, key in enumerate(keys):
                if hashes[index] is None:
                    if key is None:
                        if sticky < 0:
                            sticky = self.next_sticky() % count
                        hashes[index] = sticky
                    else:
                        hashes[index] = self.key_hash(key)
        return [value % count for value in hashes]  # type: ignore[operator]

    def place(
        self, messages: Sequence[Message], partition_count: Callable[[str], int]
    ) -> list[int]:
        """The partition of each message: the one it names, else the one its key picks.

        Args:
            messages: A batch (any mix of topics).
            partition_count: The partition count of a topic.

        Raises:
            UnknownPartitionError: A message names a partition its topic lacks.

        """
        if not messages:
            return []
        if len(set(map(_TOPIC, messages))) == 1 and set(map(_PARTITION, messages)) == {None}:
            return self.partitions(list(map(_KEY, messages)), partition_count(messages[0].topic))
        counts: dict[str, int] = {}
        sticky: dict[str, int] = {}
        result = []
        for index, message in enumerate(messages):
            count = counts.get(message.topic)
            if count is None:
                count = counts[message.topic] = partition_count(message.topic)
            if message.partition is not None:
                if not 0 <= message.partition < count:
                    raise UnknownPartitionError(
                        f"partition {message.partition} does not exist: topic "
                        f"{message.topic!r} has {count} partition(s), 0 to {count - 1}",
                        index=index, topic=message.topic, partition=message.partition)
                result.append(message.partition)
            elif message.key is not None:
                result.append(self.key_hash(message.key) % count)
            else:
                if message.topic not in sticky:
                    sticky[message.topic] = self.next_sticky() % count
                result.append(sticky[message.topic])
        return result
