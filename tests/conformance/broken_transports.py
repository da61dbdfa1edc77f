"""Deliberately broken transports: the memory transport with one defect each.

The kit's self-tests run the conformance suite against them and check that the case
meant to catch each defect fails.
"""

from __future__ import annotations

import itertools
import threading
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future
from typing import Any, ClassVar

from omconnect.records import RecordMetadata, TopicPartition
from omconnect.transport import Capabilities, Message
from omconnect.transport.spi import (
    Admin,
    Consumer,
    KeyValueStore,
    Producer,
    RebalanceListener,
    StartFrom,
    Transport,
)
from omconnect.transports.memory import MemoryTransport


class _Wrapping(Transport):
    """A memory transport whose parts can be replaced by broken ones."""

    name: ClassVar[str] = "memory"
    config_def = MemoryTransport.config_def

    def __init__(self, config: Mapping[str, Any] | None = None) -> None:
        super().__init__(config)
        self.inner = MemoryTransport(config)

    @property
    def capabilities(self) -> Capabilities:
        return self.inner.capabilities

    def producer(self, options: Mapping[str, Any] | None = None) -> Producer:
        return self.inner.producer(options)

    def consumer(self, group: str | None = None, *, start: StartFrom = "earliest",
                 options: Mapping[str, Any] | None = None) -> Consumer:
        return self.inner.consumer(group, start=start, options=options)

    def kv_store(self, namespace: str) -> KeyValueStore:
        return self.inner.kv_store(namespace)

    def admin(self) -> Admin:
        return self.inner.admin()

    def close(self) -> None:
        self.inner.close()


class _ProducerProxy(Producer):
    def __init__(self, inner: Producer) -> None:
        self.inner = inner

    def send(self, messages: Sequence[Message]) -> Future[list[RecordMetadata]]:
        return self.inner.send(messages)

    def flush(self, timeout: float | None = None) -> None:
        self.inner.flush(timeout)

    def close(self, timeout: float | None = None) -> None:
        self.inner.close(timeout)


class _ConsumerProxy(Consumer):
    def __init__(self, inner: Consumer) -> None:
        self.inner = inner

    def subscribe(self, topics: Sequence[str], listener: RebalanceListener | None = None
                  ) -> None:
        self.inner.subscribe(topics, listener)

    def poll(self, max_records: int, timeout: float) -> list[Message]:
        return self.inner.poll(max_records, timeout)

    def commit(self, offsets: Mapping[TopicPartition, int]) -> None:
        self.inner.commit(offsets)

    def close(self) -> None:
        self.inner.close()

    def assignment(self) -> frozenset[TopicPartition]:
        return self.inner.assignment()

    def assign(self, partitions: Iterable[TopicPartition]) -> None:
        self.inner.assign(partitions)

    def seek(self, partition: TopicPartition, offset: int) -> None:
        self.inner.seek(partition, offset)

    def offset_range(self, partition: TopicPartition) -> tuple[int, int]:
        return self.inner.offset_range(partition)

    def pause(self, partitions: Iterable[TopicPartition]) -> None:
        self.inner.pause(partitions)

    def resume(self, partitions: Iterable[TopicPartition]) -> None:
        self.inner.resume(partitions)

    def wakeup(self) -> None:
        self.inner.wakeup()


def _chain(inner: Future[list[RecordMetadata]],
           convert: Any) -> Future[list[RecordMetadata]]:
    outer: Future[list[RecordMetadata]] = Future()

    def done(future: Future[list[RecordMetadata]]) -> None:
        error = future.exception()
        if error is not None:
            outer.set_exception(error)
        else:
            outer.set_result(convert(future.result()))

    inner.add_done_callback(done)
    return outer


class _Dropping(_ProducerProxy):
    """Acknowledges every message but silently drops every 100th."""

    counter = itertools.count(1)
    lock = threading.Lock()

    def send(self, messages: Sequence[Message]) -> Future[list[RecordMetadata]]:
        with self.lock:
            keep = [next(self.counter) % 100 != 0 for _ in messages]
        kept = [m for m, k in zip(messages, keep, strict=True) if k]

        def acks(metadata: list[RecordMetadata]) -> list[RecordMetadata]:
            stored = iter(metadata)
            return [next(stored) if k else RecordMetadata(m.topic, 0, None)
                    for m, k in zip(messages, keep, strict=True)]

        return _chain(self.inner.send(kept), acks)


class DropsEvery100th(_Wrapping):
    """Loses every 100th message sent (after acknowledging it)."""

    def producer(self, options: Mapping[str, Any] | None = None) -> Producer:
        return _Dropping(self.inner.producer(options))


class _NoCommit(_ConsumerProxy):
    def commit(self, offsets: Mapping[TopicPartition, int]) -> None:
        return None


class IgnoresCommit(_Wrapping):
    """Accepts commits and forgets them."""

    def consumer(self, group: str | None = None, *, start: StartFrom = "earliest",
                 options: Mapping[str, Any] | None = None) -> Consumer:
        return _NoCommit(self.inner.consumer(group, start=start, options=options))


class _Reversing(_ProducerProxy):
    def send(self, messages: Sequence[Message]) -> Future[list[RecordMetadata]]:
        return _chain(self.inner.send(list(reversed(messages))),
                      lambda metadata: list(reversed(metadata)))


class ReordersWithinKey(_Wrapping):
    """Stores each batch in reverse, so messages of one key lose their order."""

    def producer(self, options: Mapping[str, Any] | None = None) -> Producer:
        return _Reversing(self.inner.producer(options))


class _ForgetfulStore(KeyValueStore):
    def __init__(self, inner: KeyValueStore) -> None:
        self.inner = inner

    def get(self, key: str) -> bytes | None:
        return self.inner.get(key)

    def put_many(self, items: Mapping[str, bytes | None]) -> None:
        self.inner.put_many(items)

    def scan(self, prefix: str = "") -> Iterator[tuple[str, bytes]]:
        return self.inner.scan(prefix)

    def close(self) -> None:
        self.inner.close()


class ForgetfulStore(_Wrapping):
    """Its key/value store starts empty every time a namespace is opened."""

    def kv_store(self, namespace: str) -> KeyValueStore:
        return _ForgetfulStore(self.inner.kv_store(f"{namespace}-{uuid.uuid4().hex}"))
