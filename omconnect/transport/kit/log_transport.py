"""A whole transport from a :class:`~omconnect.transport.kit.log_store.LogStore`:
:class:`LogTransport`.

A subclass sets ``name``, its ``config_def`` (:data:`LOG_CONFIG_DEF` merged with its own
options), says which capabilities its store adds (``persistent``, ``cross_process``) and
implements :meth:`LogTransport.open_store`. It inherits:

* a producer (:class:`LogProducer`): ``send`` and the columnar ``send_batch`` hand
  the batch to the transport's writer thread
  (:class:`~omconnect.transport.kit.log_writer.LogWriter`) and return a future; the
  thread stores every batch waiting when it is free, of every producer of the
  transport, in one :meth:`~LogStore.append_runs` (group commit), then resolves each
  batch's future with a :class:`~omconnect.records.RecordMetadata` per message (a
  :class:`~omconnect.columnar.BatchMetadata` for a columnar batch), or fails it with a
  :class:`~omconnect.errors.SendError` holding each message's outcome. Messages over
  ``max.message.bytes`` are refused before anything is sent; a topic is created with
  ``default.partitions`` on its first message; ``send`` blocks while more than
  ``max.pending.records`` records wait (back-pressure); ``flush`` and ``close`` wait for
  the batches in flight. Batches of one producer are stored in the order sent.
* a consumer (:class:`LogStoreConsumer`), the kit's
  :class:`~omconnect.transport.kit.log_consumer.LogConsumer` on the store: positions,
  consumer groups (:mod:`~omconnect.transport.kit.grouping` over
  :meth:`~LogStore.group_store`) with a heartbeat thread
  (:class:`~omconnect.transport.kit.heartbeat.Heartbeat`), rebalance callbacks, assign
  and seek, pause and resume, wakeup, and the columnar ``poll_batch``
  (:meth:`~LogStore.read_columns`);
* a key/value store and an admin on the store.

``docs/writing-a-transport.md`` walks through an example (``examples/sqlite_transport``).
"""

from __future__ import annotations

import abc
import os
import socket
import threading
import time
import uuid
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

if TYPE_CHECKING:
    import pyarrow as pa

    from omconnect.columnar.metadata import BatchMetadata

from omconnect.config import ConfigDef, ConfigType, OneOf, Range
from omconnect.errors import TransportError, TransportTimeoutError
from omconnect.records import RecordMetadata, TopicPartition
from omconnect.transport.capabilities import Capabilities
from omconnect.transport.kit.checks import (
    MAX_PARTITIONS,
    check_consumer_args,
    check_message_sizes,
    check_topic_spec,
    no_native_options,
)
from omconnect.transport.kit.grouping import ASSIGNORS, GroupMember, GroupStore
from omconnect.transport.kit.heartbeat import Heartbeat
from omconnect.transport.kit.log_consumer import LogConsumer
from omconnect.transport.kit.log_kv_store import checked_items
from omconnect.transport.kit.log_store import LogStore
from omconnect.transport.kit.log_writer import LogWriter
from omconnect.transport.kit.partitioning import Partitioner
from omconnect.transport.messages import Message, TopicSpec
from omconnect.transport.spi import (
    Admin,
    KeyValueStore,
    Producer,
    RebalanceListener,
    StartFrom,
    Transport,
)

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
    .define("max.poll.interval.ms", ConfigType.INT, 300_000, validators=[Range(min=1)],
            documentation="A group consumer that does not poll for this long stops "
                          "heart-beating, so its partitions move after "
                          "session.timeout.ms.")
    .define("poll.interval.ms", ConfigType.INT, 100, validators=[Range(min=1)],
            documentation="How often a waiting consumer looks for messages other "
                          "processes stored.")
)
"""The options every log transport has (merge yours into it)."""

_T = TypeVar("_T")
_Client = TypeVar("_Client", Producer, "LogStoreConsumer", KeyValueStore, Admin)


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
        self._writer: LogWriter | None = None
        self._writer_lock = threading.Lock()
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

    @property
    def send_timeout(self) -> float:
        """Seconds a send may block on a full queue (``send.timeout.ms``)."""
        return float(self.config["send.timeout.ms"]) / 1000

    def producer(self, options: Mapping[str, Any] | None = None) -> Producer:
        """A producer on the transport's writer thread (see :class:`LogProducer`)."""
        self._check_open()
        no_native_options(options, "producer")
        return self._keep(LogProducer(self.writer(), self.name,
                                      max_message_bytes=self.config["max.message.bytes"]))

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
        """Store what producers sent, then close every client this transport made.
        Idempotent.
        """
        with self._writer_lock:
            if self._closed:
                return
            self._closed = True
            writer, self._writer = self._writer, None
        if writer is not None:
            writer.close()
        for client in list(self._clients):
            try:
                client.close()
            except Exception:
                continue
        self._clients.clear()

    # -- for the clients ----------------------------------------------------------------

    def writer(self) -> LogWriter:
        """The transport's writer thread (started by the first producer)."""
        with self._writer_lock:
            self._check_open()
            if self._writer is None:
                config = self.config
                self._writer = LogWriter(
                    self.open_store, self.notify, partitioner=self._partitioner,
                    default_partitions=config["default.partitions"],
                    max_pending_records=config["max.pending.records"],
                    send_timeout=self.send_timeout, name=self.name)
            return self._writer

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


class LogProducer(Producer):
    """Sends through its transport's writer thread; any thread may call it. See the
    module docstring of :mod:`~omconnect.transport.kit.log_transport`.

    Args:
        writer: The transport's writer.
        name: The transport's name, for errors.
        max_message_bytes: The size limit checked before a batch is queued.

    """

    def __init__(self, writer: LogWriter, name: str, *, max_message_bytes: int) -> None:
        self._writer = writer
        self._name = name
        self._limit = max_message_bytes
        self._inflight = 0
        self._cond = threading.Condition()

    def send(self, messages: Sequence[Message]) -> Future[list[RecordMetadata]]:
        """Queue ``messages``; the future completes once the store holds all of them, or
        fails with a :class:`SendError` (none stored).

        Raises:
            MessageTooLargeError: A message is over ``max.message.bytes`` (none sent).
            TransportError: The producer or its transport is closed.
            TransportTimeoutError: The queue stayed full for the send timeout.

        """
        self._check_sendable()
        batch = tuple(messages)
        check_message_sizes(batch, self._limit)
        if not batch:
            done: Future[list[RecordMetadata]] = Future()
            done.set_result([])
            return done
        return self._track(lambda: self._writer.submit(batch))

    def send_batch(self, topic: str, batch: pa.RecordBatch) -> Future[BatchMetadata]:
        """Queue the rows of an Arrow batch; the store gets them as columns
        (:meth:`~omconnect.transport.kit.log_store.LogStore.append_runs`). The future's
        result is a :class:`~omconnect.columnar.BatchMetadata`.

        Raises:
            MessageTooLargeError: A row is over ``max.message.bytes`` (none sent).
            TransportError: The producer or its transport is closed.
            TransportTimeoutError: The queue stayed full for the send timeout.

        """
        from omconnect.columnar.sizes import check_row_sizes

        self._check_sendable()
        check_row_sizes(topic, batch, self._limit)
        if batch.num_rows == 0:
            return super().send_batch(topic, batch)
        return self._track(lambda: self._writer.submit_columns(topic, batch))

    def flush(self, timeout: float | None = None) -> None:
        """Wait until every batch sent so far is stored or failed.

        Raises:
            TransportTimeoutError: Not done within ``timeout`` seconds.

        """
        with self._cond:
            if not self._cond.wait_for(lambda: self._inflight == 0, timeout):
                raise TransportTimeoutError(
                    f"{self._name} transport: {self._inflight} batch(es) not stored within "
                    f"{timeout:g} s")

    def close(self, timeout: float | None = None) -> None:
        """Wait for what was sent (up to ``timeout`` seconds), then refuse further
        sends. Idempotent.
        """
        if self._closed:
            return
        try:
            self.flush(timeout)
        finally:
            self._closed = True

    def _check_sendable(self) -> None:
        if self._closed:
            raise TransportError(f"{self._name} transport: the producer is closed")

    def _track(self, submit: Callable[[], Future[_T]]) -> Future[_T]:
        with self._cond:
            self._inflight += 1
        try:
            future = submit()
        except BaseException:
            self._done(None)
            raise
        future.add_done_callback(self._done)
        return future

    def _done(self, _future: Future[Any] | None) -> None:
        with self._cond:
            self._inflight -= 1
            if self._inflight == 0:
                self._cond.notify_all()


class LogStoreConsumer(LogConsumer):
    """The kit's :class:`~omconnect.transport.kit.log_consumer.LogConsumer` on a store,
    with a heartbeat thread when it is in a group.
    """

    def __init__(self, transport: LogTransport, *, group: str | None,
                 start: StartFrom) -> None:
        config = transport.config
        self._transport = transport
        self._store = transport.open_store()
        self._poll_interval = config["poll.interval.ms"] / 1000
        self._max_poll_interval = config["max.poll.interval.ms"] / 1000
        self._snapshot: int | None = None
        self._polling = False
        self._polled_at = time.monotonic()
        self._heartbeat: Heartbeat | None = None
        member = None
        if group is not None:
            member_id = (f"{transport.name}-{socket.gethostname()}-{os.getpid()}-"
                         f"{uuid.uuid4().hex[:8]}")
            member = GroupMember(
                self._store.group_store(group), member_id,
                assignor=ASSIGNORS[config["group.assignment"]],
                heartbeat_interval=config["heartbeat.interval.ms"] / 1000,
                session_timeout_ms=config["session.timeout.ms"])
            self._heartbeat = Heartbeat(
                _group_store_opener(transport, group), member=member_id,
                interval=config["heartbeat.interval.ms"] / 1000, alive=_weakly(self._alive))
        super().__init__(group=group, start=start, member=member)
        transport.listen(self._signal)

    def subscribe(self, topics: Sequence[str],
                  listener: RebalanceListener | None = None) -> None:
        """Join the group for ``topics`` and start heart-beating."""
        super().subscribe(topics, listener)
        self._polled_at = time.monotonic()
        if self._heartbeat is not None:
            self._heartbeat.start()

    def _poll_with(self, fetch: Any, max_records: int, timeout: float) -> Any:
        self._polling = True
        try:
            return super()._poll_with(fetch, max_records, timeout)
        finally:
            self._polling = False
            self._polled_at = time.monotonic()

    def _alive(self) -> bool:
        """Whether this consumer counts as alive for its group (see :class:`Heartbeat`)."""
        return self._polling or time.monotonic() - self._polled_at <= self._max_poll_interval

    def _prepare(self) -> None:
        self._snapshot = self._store.snapshot()

    def _read(self, partition: TopicPartition, offset: int, limit: int) -> list[Message]:
        return self._store.read(partition, offset, limit)

    def _read_columns(self, partition: TopicPartition, offset: int, limit: int) -> Any:
        return self._store.read_columns(partition, offset, limit)

    def _range(self, partition: TopicPartition) -> tuple[int, int] | None:
        return self._store.offset_range(partition)

    def _store_commit(self, group: str, offsets: Mapping[TopicPartition, int]) -> None:
        self._store.commit(group, offsets)

    def _load_committed(self, group: str, partitions: Sequence[TopicPartition]
                        ) -> dict[TopicPartition, int | None]:
        return self._store.committed(group, partitions)

    def _wait(self, timeout: float) -> None:
        """Wait for a signal, looking every ``poll.interval.ms`` whether the store's
        snapshot changed (another process wrote); a store without snapshots is read
        again every ``poll.interval.ms``.
        """
        deadline = time.monotonic() + timeout
        while True:
            step = min(deadline - time.monotonic(), self._poll_interval)
            if step <= 0:
                return
            self._store.wait(step, self._signal)
            if self._signal.is_set() or self._snapshot is None:
                return
            if self._store.snapshot() != self._snapshot:
                return

    def _release(self) -> None:
        if self._heartbeat is not None:
            self._heartbeat.stop()
        self._transport.listen(self._signal, stop=True)
        self._store.close()


def _group_store_opener(transport: LogTransport, group: str
                        ) -> Callable[[], tuple[GroupStore, Callable[[], None]]]:
    """Opens a store for a heartbeat thread: the group's store, and how to close it."""
    def open_group_store() -> tuple[GroupStore, Callable[[], None]]:
        store = transport.open_store()
        return store.group_store(group), store.close

    return open_group_store


def _weakly(method: Callable[[], bool]) -> Callable[[], bool | None]:
    """``method`` without keeping its object alive: ``None`` once it was collected (so a
    consumer dropped without ``close`` stops heart-beating and leaves its group after the
    session timeout).
    """
    reference = weakref.WeakMethod(method)

    def call() -> bool | None:
        bound = reference()
        return None if bound is None else bound()

    return call


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
            self._store.create_topics(list(topics))

    def list_topics(self) -> dict[str, TopicSpec]:
        """Every topic."""
        self._check_open()
        with self._lock:
            return self._store.topic_specs()

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
