"""A whole transport from a :class:`~omconnect.transport.kit.log_store.LogStore`:
:class:`LogTransport`.

A subclass sets ``name``, its ``config_def`` (:data:`LOG_CONFIG_DEF` merged with its own
options), says which capabilities its store adds (``persistent``, ``cross_process``) and
implements :meth:`LogTransport.open_store`. It inherits:

* a producer (:class:`LogProducer`): ``send`` hands the batch to a writer thread and
  returns a future; the thread appends every batch waiting when it is free in one
  :meth:`~LogStore.append` (group commit), then resolves each batch's future with a
  :class:`~omconnect.records.RecordMetadata` per message, or fails it with a
  :class:`~omconnect.errors.SendError` holding each message's outcome. Messages over
  ``max.message.bytes`` are refused before anything is sent; a topic is created with
  ``default.partitions`` on its first message; ``send`` blocks while more than
  ``max.pending.records`` records wait (back-pressure); ``flush`` and ``close`` wait for
  the batches in flight. Batches of one producer are stored in the order sent.
* a consumer (:class:`LogStoreConsumer`), the kit's
  :class:`~omconnect.transport.kit.log_consumer.LogConsumer` on the store: positions,
  consumer groups (:mod:`~omconnect.transport.kit.grouping` over
  :meth:`~LogStore.group_store`), rebalance callbacks, assign and seek, pause and
  resume, wakeup;
* a key/value store and an admin on the store.

``docs/writing-a-transport.md`` walks through an example (``examples/sqlite_transport``).
"""

from __future__ import annotations

import abc
import collections
import contextlib
import threading
import time
import uuid
import weakref
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import Future
from typing import Any, ClassVar, TypeVar

from omconnect.config import ConfigDef, ConfigType, OneOf, Range
from omconnect.errors import SendError, TransportError, TransportTimeoutError
from omconnect.records import RecordMetadata, TopicPartition, build_record_metadata
from omconnect.transport.capabilities import Capabilities
from omconnect.transport.kit.checks import (
    MAX_PARTITIONS,
    check_consumer_args,
    check_message_sizes,
    check_topic_spec,
    failed_batch,
    no_native_options,
)
from omconnect.transport.kit.grouping import ASSIGNORS, GroupMember
from omconnect.transport.kit.log_consumer import LogConsumer
from omconnect.transport.kit.log_kv_store import checked_items
from omconnect.transport.kit.log_store import LogStore
from omconnect.transport.kit.partitioning import Partitioner, UnknownPartitionError
from omconnect.transport.messages import Message, TopicSpec, build_message
from omconnect.transport.spi import Admin, KeyValueStore, Producer, StartFrom, Transport

__all__ = ["LOG_CONFIG_DEF", "LogProducer", "LogStoreConsumer", "LogTransport"]

LOG_CONFIG_DEF = (
    ConfigDef()
    .define("default.partitions", ConfigType.INT, 1, validators=[Range(min=1, max=1024)],
            documentation="Partitions of a topic created by its first message.")
    .define("max.message.bytes", ConfigType.INT, 1024 * 1024, validators=[Range(min=1)],
            documentation="Largest message accepted (key + value + headers), in bytes.")
    .define("max.pending.records", ConfigType.INT, 100_000, validators=[Range(min=1)],
            documentation="Records a producer may have waiting to be stored before send "
                          "blocks.")
    .define("send.timeout.ms", ConfigType.INT, 30_000, validators=[Range(min=1)],
            documentation="How long send blocks on a full queue before it fails.")
    .define("session.timeout.ms", ConfigType.INT, 10_000, validators=[Range(min=1)],
            documentation="A group consumer that does not poll for this long is evicted; "
                          "its partitions move to the others.")
    .define("heartbeat.interval.ms", ConfigType.INT, 500, validators=[Range(min=1)],
            documentation="How often a polling consumer checks for group changes.")
    .define("group.assignment", ConfigType.STRING, "range", validators=[OneOf(tuple(ASSIGNORS))],
            documentation="How a group shares partitions: range or roundrobin.")
    .define("poll.interval.ms", ConfigType.INT, 100, validators=[Range(min=1)],
            documentation="How often a waiting consumer looks for messages other "
                          "processes stored.")
)
"""The options every log transport has (merge yours into it)."""

_MAX_RECORDS_PER_APPEND = 50_000

_Client = TypeVar("_Client", Producer, "LogStoreConsumer", KeyValueStore, Admin)


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


class LogTransport(Transport):
    """A transport derived from a :class:`LogStore`; see the module docstring."""

    config_def: ClassVar[ConfigDef] = LOG_CONFIG_DEF
    persistent: ClassVar[bool] = False
    """Whether the store keeps acknowledged messages across restarts."""
    cross_process: ClassVar[bool] = False
    """Whether several processes can share the store."""

    def __init__(self, config: Mapping[str, Any] | None = None) -> None:
        super().__init__(config)
        self._partitioner = Partitioner()
        self._signals: set[threading.Event] = set()
        self._signals_lock = threading.Lock()
        # Closed with the transport; weakly held, so clients closed and dropped before
        # (a task's producer on each restart) are not kept.
        self._clients: weakref.WeakSet[Producer | LogStoreConsumer | KeyValueStore | Admin] = (
            weakref.WeakSet())

    @abc.abstractmethod
    def open_store(self) -> LogStore:
        """A new store (a connection of its own) for one client."""

    @property
    def capabilities(self) -> Capabilities:
        """Ordered per key, groups, replay, pause and headers; ``persistent`` and
        ``cross_process`` as the subclass declares.
        """
        return Capabilities(
            ordered_per_key=True, consumer_groups=True, replayable=True,
            persistent=self.persistent, new_subscriber_receives_old_messages=True,
            pause=True, cross_process=self.cross_process, headers=True,
            max_message_bytes=self.config["max.message.bytes"], max_partitions=MAX_PARTITIONS)

    def producer(self, options: Mapping[str, Any] | None = None) -> Producer:
        """A producer with a writer thread of its own (see :class:`LogProducer`)."""
        self._check_open()
        no_native_options(options, "producer")
        return self._keep(LogProducer(self))

    def consumer(self, group: str | None = None, *, start: StartFrom = "earliest",
                 options: Mapping[str, Any] | None = None) -> LogStoreConsumer:
        """A consumer in ``group`` (``None``: one that only assigns)."""
        self._check_open()
        no_native_options(options, "consumer")
        check_consumer_args(group, start)
        return self._keep(LogStoreConsumer(self, group=group, start=start))

    def kv_store(self, namespace: str) -> KeyValueStore:
        """The key/value store ``namespace`` (created on its first write)."""
        self._check_open()
        if not isinstance(namespace, str) or not namespace:
            raise ValueError(f"a key/value store needs a non-empty namespace, got {namespace!r}")
        return self._keep(_StoreKeyValueStore(self.open_store(), namespace))

    def admin(self) -> Admin:
        """Topic administration on the store."""
        self._check_open()
        return self._keep(_StoreAdmin(self.open_store()))

    def close(self) -> None:
        """Close every client this transport made. Idempotent."""
        if self._closed:
            return
        self._closed = True
        for client in list(self._clients):
            try:
                client.close()
            except Exception:
                continue
        self._clients.clear()

    # -- for the clients ----------------------------------------------------------------

    def notify(self) -> None:
        """Wake this process's waiting consumers (after an append)."""
        with self._signals_lock:
            signals = list(self._signals)
        for signal in signals:
            signal.set()

    def listen(self, signal: threading.Event, *, stop: bool = False) -> None:
        """Have :meth:`notify` set ``signal`` (or stop, with ``stop``)."""
        with self._signals_lock:
            (self._signals.discard if stop else self._signals.add)(signal)

    def _keep(self, client: _Client) -> _Client:
        self._clients.add(client)
        return client


class _Batch:
    __slots__ = ("future", "messages")

    def __init__(self, messages: Sequence[Message]) -> None:
        self.messages = messages
        self.future: Future[list[RecordMetadata]] = Future()


class LogProducer(Producer):
    """Sends through a writer thread that appends queued batches together; see the
    module docstring of :mod:`~omconnect.transport.kit.log_transport`.
    """

    def __init__(self, transport: LogTransport) -> None:
        config = transport.config
        self._transport = transport
        self._limit = config["max.message.bytes"]
        self._max_pending = config["max.pending.records"]
        self._send_timeout = config["send.timeout.ms"] / 1000
        self._default_partitions = config["default.partitions"]
        self._queue: collections.deque[_Batch] = collections.deque()
        self._pending = 0  # records queued or being stored
        self._cond = threading.Condition()
        self._store: LogStore | None = None
        self._partitions: dict[str, int] = {}
        self._thread = threading.Thread(target=self._run, daemon=True,
                                        name=f"omconnect-{transport.name}-writer")
        self._thread.start()

    def send(self, messages: Sequence[Message]) -> Future[list[RecordMetadata]]:
        """Queue ``messages`` for the writer thread; the future completes once the store
        holds all of them, or fails with a :class:`SendError` (none stored).

        Raises:
            MessageTooLargeError: A message is over ``max.message.bytes`` (none sent).
            TransportError: The producer is closed.
            TransportTimeoutError: The queue stayed full for ``send.timeout.ms``.

        """
        if self._closed:
            raise TransportError("the producer is closed")
        check_message_sizes(messages, self._limit)
        batch = _Batch(list(messages))
        if not batch.messages:
            batch.future.set_result([])
            return batch.future
        deadline = time.monotonic() + self._send_timeout
        with self._cond:
            while self._pending >= self._max_pending and not self._closed:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TransportTimeoutError(
                        f"send waited {self._send_timeout:g} s for room: {self._pending} "
                        "records are waiting to be stored (max.pending.records)")
                self._cond.wait(left)
            if self._closed:
                raise TransportError("the producer is closed")
            self._queue.append(batch)
            self._pending += len(batch.messages)
            self._cond.notify_all()
        return batch.future

    def flush(self, timeout: float | None = None) -> None:
        """Wait until every batch sent so far is stored or failed.

        Raises:
            TransportTimeoutError: Not done within ``timeout`` seconds.

        """
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while self._pending:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    raise TransportTimeoutError(
                        f"flush: {self._pending} records not stored within {timeout:g} s")
                self._cond.wait(left)

    def close(self, timeout: float | None = None) -> None:
        """Store what was sent (up to ``timeout`` seconds), then stop. Idempotent."""
        with self._cond:
            if self._closed:
                return
        with contextlib.suppress(TransportTimeoutError):  # the thread fails what is left
            self.flush(timeout)
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        self._thread.join(timeout)

    # -- the writer thread --------------------------------------------------------------

    def _run(self) -> None:
        try:
            while True:
                with self._cond:
                    while not self._queue and not self._closed:
                        self._cond.wait()
                    if not self._queue:
                        return
                    batches, count = [], 0
                    while self._queue and count < _MAX_RECORDS_PER_APPEND:
                        batches.append(self._queue.popleft())
                        count += len(batches[-1].messages)
                try:
                    done = self._store_batches(batches)
                except BaseException as exc:  # a bug, not a store failure: fail, then stop
                    self._fail(batches, TransportError(f"the writer thread failed: {exc!r}"))
                    raise
                with self._cond:
                    self._pending -= done
                    self._cond.notify_all()
        finally:
            self._fail_queued()
            if self._store is not None:
                self._store.close()

    def _store_batches(self, batches: list[_Batch]) -> int:
        """Append ``batches`` in one step; resolve or fail their futures. Returns the
        number of records handled.
        """
        count = sum(len(b.messages) for b in batches)
        stamp = _now_ms()
        try:
            store = self._store = self._store or self._transport.open_store()
            placed: list[tuple[TopicPartition, Message]] = []
            good: list[_Batch] = []
            for batch in batches:
                try:
                    partitions = self._transport._partitioner.place(
                        batch.messages, lambda topic: self._partition_count(store, topic))
                except UnknownPartitionError as exc:
                    batch.future.set_exception(failed_batch(len(batch.messages), exc.index,
                                                            exc))
                    continue
                good.append(batch)
                placed += [(TopicPartition(m.topic, p), m if m.timestamp is not None
                            else build_message(m.topic, m.key, m.value, m.headers, stamp, p,
                                               None))
                           for m, p in zip(batch.messages, partitions, strict=True)]
            offsets = store.append(placed) if placed else []
        except Exception as exc:
            error = exc if isinstance(exc, TransportError) else TransportError(
                f"{self._transport.name} transport: storing a batch failed: {exc}")
            self._fail(batches, error)
            self._partitions.clear()  # a topic may have been deleted
            return count
        index = 0
        for batch in good:
            results = []
            for _ in batch.messages:
                tp, message = placed[index]
                results.append(build_record_metadata(tp.topic, tp.partition, offsets[index],
                                                     message.timestamp))
                index += 1
            batch.future.set_result(results)
        self._transport.notify()
        return count

    @staticmethod
    def _fail(batches: list[_Batch], error: TransportError) -> None:
        """Fail every batch not done yet with ``error`` for each of its messages."""
        for batch in batches:
            if not batch.future.done():
                batch.future.set_exception(SendError(
                    f"batch not stored: {error}", [error] * len(batch.messages)))

    def _partition_count(self, store: LogStore, topic: str) -> int:
        count = self._partitions.get(topic)
        if count is None:
            count = self._partitions[topic] = store.create_topic(topic,
                                                                 self._default_partitions)
        return count

    def _fail_queued(self) -> None:
        with self._cond:
            left, self._queue = list(self._queue), collections.deque()
            self._pending = 0
            self._cond.notify_all()
        self._fail(left, TransportError("the producer was closed first"))


class LogStoreConsumer(LogConsumer):
    """The kit's :class:`~omconnect.transport.kit.log_consumer.LogConsumer` on a store."""

    def __init__(self, transport: LogTransport, *, group: str | None,
                 start: StartFrom) -> None:
        config = transport.config
        self._transport = transport
        self._store = transport.open_store()
        self._poll_interval = config["poll.interval.ms"] / 1000
        member = None
        if group is not None:
            member = GroupMember(
                self._store.group_store(group), f"{transport.name}-{uuid.uuid4().hex[:12]}",
                assignor=ASSIGNORS[config["group.assignment"]],
                heartbeat_interval=config["heartbeat.interval.ms"] / 1000,
                session_timeout_ms=config["session.timeout.ms"])
        super().__init__(group=group, start=start, member=member)
        transport.listen(self._signal)

    def _read(self, partition: TopicPartition, offset: int, limit: int) -> list[Message]:
        return self._store.read(partition, offset, limit)

    def _range(self, partition: TopicPartition) -> tuple[int, int] | None:
        return self._store.offset_range(partition)

    def _store_commit(self, group: str, offsets: Mapping[TopicPartition, int]) -> None:
        self._store.commit(group, offsets)

    def _load_committed(self, group: str, partitions: Sequence[TopicPartition]
                        ) -> dict[TopicPartition, int | None]:
        return self._store.committed(group, partitions)

    def _wait(self, timeout: float) -> None:
        self._store.wait(min(timeout, self._poll_interval), self._signal)

    def _release(self) -> None:
        self._transport.listen(self._signal, stop=True)
        self._store.close()


class _StoreKeyValueStore(KeyValueStore):
    """A namespace of the store's key/value data. Thread-safe."""

    def __init__(self, store: LogStore, namespace: str) -> None:
        self._store = store
        self._namespace = namespace
        self._lock = threading.Lock()

    def get(self, key: str) -> bytes | None:
        """The value of ``key``, or ``None``."""
        self._check_open()
        with self._lock:
            return self._store.kv_get(self._namespace, key)

    def put_many(self, items: Mapping[str, bytes | None]) -> None:
        """Store every item at once; ``None`` deletes the key."""
        self._check_open()
        checked = checked_items(items)
        if checked:
            with self._lock:
                self._store.kv_put(self._namespace, checked)

    def scan(self, prefix: str = "") -> Iterator[tuple[str, bytes]]:
        """Every (key, value) whose key starts with ``prefix``, in key order."""
        self._check_open()
        with self._lock:
            return iter(list(self._store.kv_scan(self._namespace, prefix)))

    def close(self) -> None:
        """Close the store's connection. Idempotent."""
        with self._lock:
            if not self._closed:
                self._closed = True
                self._store.close()


class _StoreAdmin(Admin):
    """Topics on the store. Thread-safe."""

    def __init__(self, store: LogStore) -> None:
        self._store = store
        self._lock = threading.Lock()

    def create_topics(self, topics: Sequence[TopicSpec]) -> None:
        """Create each topic that does not exist."""
        self._check_open()
        for spec in topics:
            check_topic_spec(spec)
        with self._lock:
            for spec in topics:
                self._store.create_topic(spec.name, spec.partitions)

    def list_topics(self) -> dict[str, TopicSpec]:
        """Every topic."""
        self._check_open()
        with self._lock:
            return {name: TopicSpec(name, count)
                    for name, count in self._store.topics().items()}

    def delete_topics(self, names: Sequence[str]) -> None:
        """Delete topics and their messages."""
        self._check_open()
        with self._lock:
            self._store.delete_topics(list(names))

    def close(self) -> None:
        """Close the store's connection. Idempotent."""
        with self._lock:
            if not self._closed:
                self._closed = True
                self._store.close()
