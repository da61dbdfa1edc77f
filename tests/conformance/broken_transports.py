"""Deliberately broken transports: the memory transport with one defect each.

The suite's self-tests run the conformance suite against them and check that the case
meant to catch each defect fails.
"""

from __future__ import annotations

import itertools
import socket
import threading
import time
import uuid
import weakref
from collections.abc import Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import Any, ClassVar

import attrs

from omconnect.config import ConfigDef, ConfigType
from omconnect.errors import RetriableTransportError, TransportTimeoutError
from omconnect.records import RecordMetadata, TopicPartition
from omconnect.testing.profile import TransportProfile
from omconnect.transport import Capabilities, Message
from omconnect.transport.memory import MemoryTransport
from omconnect.transport.spi import (
    Admin,
    Consumer,
    KeyValueStore,
    Producer,
    RebalanceListener,
    StartFrom,
    Transport,
)


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


# -- transports with a pretend broker, for the restart and unreachable cases -------------

_OPEN: weakref.WeakSet[_Wrapping] = weakref.WeakSet()


class _PretendBroker(_Wrapping):
    """A memory transport that claims to be persistent, for the broker-restart case."""

    def __init__(self, config: Mapping[str, Any] | None = None) -> None:
        super().__init__(config)
        _OPEN.add(self)

    @property
    def capabilities(self) -> Capabilities:
        return attrs.evolve(self.inner.capabilities, persistent=True)


class KeepingBroker(_PretendBroker):
    """Its "broker" keeps everything across a restart (correct)."""


class AmnesiacBroker(_PretendBroker):
    """Its "broker" loses every message on a restart (broken)."""


class RestartBroker:
    """A BrokerControl for the pretend brokers: an amnesiac one loses its messages."""

    def restart(self) -> None:
        for transport in list(_OPEN):
            if isinstance(transport, AmnesiacBroker):
                admin = transport.inner.admin()
                topics = admin.list_topics()
                admin.delete_topics(list(topics))
                admin.create_topics(list(topics.values()))


def pretend_broker_profile(workdir: Path) -> TransportProfile:
    """The conformance profile of the pretend brokers."""
    return TransportProfile(config={"namespace": "{tmp}"}, broker=RestartBroker())


class _Connecting(_Wrapping):
    """A memory transport that first connects to ``address`` (a TCP host:port), as a
    client of a real broker would.
    """

    config_def = MemoryTransport.config_def.merge(
        ConfigDef()
        .define("address", ConfigType.STRING, "", documentation="host:port to connect to.")
        .define("connect.timeout.ms", ConfigType.INT, 1000, documentation="Connect timeout.")
    )

    def __init__(self, config: Mapping[str, Any] | None = None) -> None:
        Transport.__init__(self, config)
        own = {"address", "connect.timeout.ms"}
        self.inner = MemoryTransport({k: v for k, v in (config or {}).items() if k not in own})

    def _connect(self) -> None:
        address = self.config["address"]
        if not address:
            return
        host, _, port = address.rpartition(":")
        timeout = self.config["connect.timeout.ms"] / 1000
        try:
            socket.create_connection((host, int(port)), timeout=timeout).close()
        except TimeoutError as exc:
            raise TransportTimeoutError(f"broker {address} did not answer in {timeout} s"
                                        ) from exc
        except OSError as exc:
            raise RetriableTransportError(f"cannot connect to broker {address}: {exc}") from exc

    def producer(self, options: Mapping[str, Any] | None = None) -> Producer:
        self._connect()
        return self.inner.producer(options)

    def admin(self) -> Admin:
        self._connect()
        return self.inner.admin()


class ConnectingTransport(_Connecting):
    """Fails fast with a TransportError when its broker is unreachable (correct)."""


class _Hanging(_ProducerProxy):
    def send(self, messages: Sequence[Message]) -> Future[list[RecordMetadata]]:
        return Future()  # never completes: the acknowledgement never comes


class HangsWhenUnreachable(_Connecting):
    """Waits forever for an unreachable broker (broken)."""

    def producer(self, options: Mapping[str, Any] | None = None) -> Producer:
        if self.config["address"]:
            return _Hanging(self.inner.producer(options))
        return self.inner.producer(options)

    def admin(self) -> Admin:
        if self.config["address"]:
            time.sleep(3600)
        return self.inner.admin()


def unreachable_profile(workdir: Path) -> TransportProfile:
    """The conformance profile of the connecting transports: nothing listens on the
    unreachable address (a port just released).
    """
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return TransportProfile(config={"namespace": "{tmp}"},
                            unreachable_config={"address": f"127.0.0.1:{port}",
                                                "connect.timeout.ms": 1000},
                            unreachable_timeout=1.0)


class LateJoiner(_Wrapping):
    """A correct transport whose new groups start at the end of a topic, like a queue per
    group declared on subscribe: the suite must subscribe before it sends.
    """

    @property
    def capabilities(self) -> Capabilities:
        return attrs.evolve(self.inner.capabilities, new_subscriber_receives_old_messages=False)

    def consumer(self, group: str | None = None, *, start: StartFrom = "earliest",
                 options: Mapping[str, Any] | None = None) -> Consumer:
        return self.inner.consumer(group, start="latest", options=options)
