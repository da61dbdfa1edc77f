"""The ``memory`` transport: partitioned logs inside this process, for tests and authors.

Features:
    * Topics with partitions, created on first send (``memory.default.partitions``) or
      through the admin. A keyed message goes to Kafka's partition for its key (murmur2,
      see :mod:`omconnect.transport.kit.partitioning`), so order per key holds; key-less
      messages of one batch stay together in one partition.
    * Consumer groups: committed positions, partitions shared among the group's
      consumers with rebalance callbacks as members join, leave, close, or stop polling
      for longer than ``memory.session.timeout.ms``
      (:mod:`omconnect.transport.kit.grouping`).
    * Replay: every message is kept until its topic is deleted; ``assign``, ``seek`` and
      ``offset_range`` work on any partition, and a new group starts from the oldest
      message (or the newest, with ``start="latest"``).
    * Pause/resume, headers, ``wakeup``, a key/value store, an admin.
    * Native columnar calls: ``send_batch`` stores a batch's rows as Arrow columns
      (one slice per partition, no object per row) and ``poll_batch`` reads them back
      as slices; ``send`` stores messages. A partition may hold both, in offset order,
      and each call reads either (:class:`_Log`).
    * Not persistent and not shared across processes: everything lives in this process's
      memory and is gone when it exits.

Connection:
    There is nothing to connect to. Transports opened with the same ``memory.namespace``
    in one process share their topics, groups and stores, so a runtime and a test can
    open "the same" memory transport independently. :meth:`MemoryTransport.reset` forgets
    a namespace (or all of them) between tests.

Options (each also documented in :attr:`MemoryTransport.config_def`):
    * ``memory.namespace`` (``default``): which in-process space to share.
    * ``memory.default.partitions`` (1): partitions of a topic created by a first send.
    * ``memory.max.message.bytes`` (1048576): largest message, key + value + headers.
    * ``memory.session.timeout.ms`` (10000): a group consumer that does not poll for
      this long is evicted and its partitions move to the others.
    * ``memory.heartbeat.interval.ms`` (100): how often a polling consumer looks for
      group changes.
    * ``memory.group.assignment`` (``range``): ``range`` or ``roundrobin``.
"""

from __future__ import annotations

import bisect
import threading
import time
import uuid
import weakref
from collections.abc import Iterator, Mapping, Sequence, Set
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any, ClassVar

import attrs

from omconnect.config import ConfigDef, ConfigType, Importance, NonEmptyString, OneOf, Range
from omconnect.errors import IllegalStateError, TransportError
from omconnect.records import RecordMetadata, TopicPartition, build_record_metadata
from omconnect.transport.capabilities import Capabilities
from omconnect.transport.kit.checks import (
    check_consumer_args,
    check_message_sizes,
    check_topic_spec,
    failed_batch,
    no_native_options,
)
from omconnect.transport.kit.clock import now_ms
from omconnect.transport.kit.grouping import ASSIGNORS, GroupMember, GroupStore, GroupView
from omconnect.transport.kit.log_consumer import LogConsumer
from omconnect.transport.kit.log_kv_store import checked_items
from omconnect.transport.kit.partitioning import Partitioner, UnknownPartitionError
from omconnect.transport.messages import Message, TopicSpec, build_message
from omconnect.transport.spi import Admin, KeyValueStore, Producer, StartFrom, Transport

if TYPE_CHECKING:
    import pyarrow as pa

    from omconnect.columnar.metadata import BatchMetadata

__all__ = ["MemoryTransport"]


@attrs.define(slots=True)
class _Member:
    topics: frozenset[str]
    session_timeout_ms: int
    seen: float


@attrs.define(slots=True)
class _Group:
    members: dict[str, _Member] = attrs.field(factory=dict)
    owners: dict[TopicPartition, str] = attrs.field(factory=dict)
    offsets: dict[TopicPartition, int] = attrs.field(factory=dict)


class _Log:
    """One partition's records in offset order, as chunks: lists of messages (from
    ``send``) and Arrow batches of the consumed columns (from ``send_batch``; see
    :func:`~omconnect.columnar.columns.consumed_schema`). Each read returns the form asked
    for, converting only the chunks of the other form.
    """

    __slots__ = ("_chunks", "_starts", "end")

    def __init__(self) -> None:
        self._chunks: list[list[Message] | pa.RecordBatch] = []
        self._starts: list[int] = []
        self.end = 0
        """The offset the next record gets (the number of records)."""

    def __len__(self) -> int:
        return self.end

    def append(self, message: Message) -> None:
        """Add ``message`` (its partition and offset set) at :attr:`end`."""
        if not self._chunks or not isinstance(self._chunks[-1], list):
            self._starts.append(self.end)
            self._chunks.append([])
        self._chunks[-1].append(message)
        self.end += 1

    def append_columns(self, batch: pa.RecordBatch) -> None:
        """Add the rows of a consumed-schema ``batch`` whose offsets start at :attr:`end`."""
        self._starts.append(self.end)
        self._chunks.append(batch)
        self.end += batch.num_rows

    def _pieces(self, offset: int, limit: int
                ) -> Iterator[tuple[list[Message] | pa.RecordBatch, int, int]]:
        """The chunks holding ``offset`` to ``offset + limit`` (exclusive), each with the
        range of its own rows to read.
        """
        stop = min(self.end, offset + limit)
        index = max(0, bisect.bisect_right(self._starts, offset) - 1)
        while offset < stop and index < len(self._chunks):
            start = self._starts[index]
            chunk = self._chunks[index]
            size = len(chunk) if isinstance(chunk, list) else chunk.num_rows
            low, high = offset - start, min(size, stop - start)
            if low < high:
                yield chunk, low, high
                offset = start + high
            index += 1

    def messages(self, offset: int, limit: int) -> list[Message]:
        """Up to ``limit`` records from ``offset``, as messages."""
        out: list[Message] = []
        for chunk, low, high in self._pieces(offset, limit):
            if isinstance(chunk, list):
                out += chunk[low:high]
            else:
                from omconnect.transport.message_batches import batch_to_messages

                out += batch_to_messages(None, chunk.slice(low, high - low))
        return out

    def columns(self, offset: int, limit: int) -> pa.RecordBatch | None:
        """Up to ``limit`` records from ``offset``, as one consumed batch (``None`` when
        there are none); rows stored as columns are slices, no copy.
        """
        parts = []
        for chunk, low, high in self._pieces(offset, limit):
            if isinstance(chunk, list):
                from omconnect.transport.message_batches import messages_to_batch

                parts.append(messages_to_batch(chunk[low:high]))
            else:
                parts.append(chunk if (low, high) == (0, chunk.num_rows)
                             else chunk.slice(low, high - low))
        if len(parts) <= 1:
            return parts[0] if parts else None
        import pyarrow as pa

        return pa.concat_batches(parts)


class _Space:
    """Everything one namespace holds. Every access holds :attr:`lock`."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.topics: dict[str, list[_Log]] = {}
        self.topic_configs: dict[str, dict[str, str]] = {}
        self.groups: dict[str, _Group] = {}
        self.stores: dict[str, dict[str, bytes]] = {}
        self.signals: weakref.WeakSet[threading.Event] = weakref.WeakSet()

    def create_topic(
        self, name: str, partitions: int, config: Mapping[str, str] | None = None
    ) -> list[_Log]:
        logs = self.topics.get(name)
        if logs is None:
            logs = self.topics[name] = [_Log() for _ in range(partitions)]
            self.topic_configs[name] = dict(config or {})
        return logs

    def delete_topic(self, name: str) -> None:
        if self.topics.pop(name, None) is None:
            return
        self.topic_configs.pop(name, None)
        for group in self.groups.values():
            for table in (group.owners, group.offsets):
                for tp in [tp for tp in table if tp.topic == name]:
                    del table[tp]

    def notify(self) -> None:
        for signal in list(self.signals):
            signal.set()


_SPACES: dict[str, _Space] = {}
_SPACES_LOCK = threading.Lock()


def _space(namespace: str) -> _Space:
    with _SPACES_LOCK:
        space = _SPACES.get(namespace)
        if space is None:
            space = _SPACES[namespace] = _Space()
        return space



class MemoryTransport(Transport):
    """In-process partitioned logs; see the module docstring for features and options.

    Args:
        config: Options without the ``memory.`` prefix, e.g. ``{"namespace": "t1"}``.

    Raises:
        ConfigError: An option is unknown or invalid (named as ``memory.<key>``).

    """

    name: ClassVar[str] = "memory"
    config_def: ClassVar[ConfigDef] = (
        ConfigDef()
        .define("namespace", ConfigType.STRING, "default", importance=Importance.MEDIUM,
                validators=[NonEmptyString()],
                documentation="Transports with the same namespace in one process share "
                              "topics, groups and stores.")
        .define("default.partitions", ConfigType.INT, 1, validators=[Range(min=1, max=1024)],
                documentation="Partitions of a topic created by its first send.")
        .define("max.message.bytes", ConfigType.INT, 1024 * 1024, validators=[Range(min=1)],
                documentation="Largest message accepted (key + value + headers), in bytes.")
        .define("session.timeout.ms", ConfigType.INT, 10_000, validators=[Range(min=1)],
                documentation="A group consumer that does not poll for this long is "
                              "evicted; its partitions move to the others.")
        .define("heartbeat.interval.ms", ConfigType.INT, 100, validators=[Range(min=1)],
                documentation="How often a polling consumer checks for group changes.")
        .define("group.assignment", ConfigType.STRING, "range",
                validators=[OneOf(tuple(ASSIGNORS))],
                documentation="How a group shares partitions: range or roundrobin.")
    )

    def __init__(self, config: Mapping[str, Any] | None = None) -> None:
        super().__init__(config)
        self.namespace: str = self.config["namespace"]
        self._space = _space(self.namespace)
        self._partitioner = Partitioner()
        self._capabilities = Capabilities(
            ordered_per_key=True,
            consumer_groups=True,
            replayable=True,
            persistent=False,
            new_subscriber_receives_old_messages=True,
            transactions=False,
            pause=True,
            cross_process=False,
            headers=True,
            max_message_bytes=self.config["max.message.bytes"],
            max_partitions=1024,
        )

    @staticmethod
    def reset(namespace: str | None = None) -> None:
        """Forget everything in ``namespace`` (every namespace when ``None``).

        Transports already open on it keep the old state; open new ones afterwards.
        """
        with _SPACES_LOCK:
            if namespace is None:
                _SPACES.clear()
            else:
                _SPACES.pop(namespace, None)

    @property
    def capabilities(self) -> Capabilities:
        """Replayable, ordered per key, with groups; neither persistent nor cross-process."""
        return self._capabilities

    def producer(self, options: Mapping[str, Any] | None = None) -> Producer:
        """A producer; sends complete before :meth:`Producer.send` returns."""
        no_native_options(options, "producer")
        return MemoryProducer(self._space, self._partitioner,
                              max_message_bytes=self.config["max.message.bytes"],
                              default_partitions=self.config["default.partitions"])

    def consumer(
        self,
        group: str | None = None,
        *,
        start: StartFrom = "earliest",
        options: Mapping[str, Any] | None = None,
    ) -> MemoryConsumer:
        """A consumer in ``group`` (``None`` for one that only assigns)."""
        no_native_options(options, "consumer")
        check_consumer_args(group, start)
        member = None
        if group is not None:
            member = GroupMember(
                MemoryGroupStore(self._space, group),
                f"memory-{uuid.uuid4().hex[:12]}",
                assignor=ASSIGNORS[self.config["group.assignment"]],
                heartbeat_interval=self.config["heartbeat.interval.ms"] / 1000,
                session_timeout_ms=self.config["session.timeout.ms"],
            )
        return MemoryConsumer(self._space, group=group, start=start, member=member)

    def kv_store(self, namespace: str) -> KeyValueStore:
        """The store ``namespace`` of this transport's space (kept until reset)."""
        if not isinstance(namespace, str) or not namespace:
            raise ValueError(f"a key/value store needs a non-empty namespace, got {namespace!r}")
        return MemoryKeyValueStore(self._space, namespace)

    def admin(self) -> Admin:
        """An admin over this transport's space."""
        return MemoryAdmin(self._space)


class MemoryProducer(Producer):
    """Appends batches to the space's logs; the future is complete when ``send`` (or
    ``send_batch``) returns.
    """

    def __init__(
        self,
        space: _Space,
        partitioner: Partitioner,
        *,
        max_message_bytes: int,
        default_partitions: int,
    ) -> None:
        self._space = space
        self._partitioner = partitioner
        self._limit = max_message_bytes
        self._default_partitions = default_partitions
        self._closed = False

    def send(self, messages: Sequence[Message]) -> Future[list[RecordMetadata]]:
        """Store ``messages`` (all or none) and return their completed future.

        Raises:
            MessageTooLargeError: A message is over ``memory.max.message.bytes``.
            TransportError: The producer is closed.

        """
        if self._closed:
            raise TransportError("the producer is closed")
        check_message_sizes(messages, self._limit)
        future: Future[list[RecordMetadata]] = Future()
        stamp = now_ms()
        space = self._space
        with space.lock:
            def partition_count(topic: str) -> int:
                return len(space.create_topic(topic, self._default_partitions))

            try:
                partitions = self._partitioner.place(messages, partition_count)
            except UnknownPartitionError as exc:
                future.set_exception(failed_batch(len(messages), exc.index, exc))
                return future
            acknowledged = []
            for message, partition in zip(messages, partitions, strict=True):
                log = space.topics[message.topic][partition]
                timestamp = message.timestamp if message.timestamp is not None else stamp
                offset = log.end
                log.append(build_message(message.topic, message.key, message.value,
                                         message.headers, timestamp, partition, offset))
                acknowledged.append(build_record_metadata(message.topic, partition, offset,
                                                          timestamp))
        space.notify()
        future.set_result(acknowledged)
        return future

    def send_batch(self, topic: str, batch: pa.RecordBatch) -> Future[BatchMetadata]:
        """Store the rows of an Arrow ``batch`` (all or none) as columns, one slice per
        partition (placed as :meth:`send` places messages), and return the completed
        future of their :class:`~omconnect.columnar.BatchMetadata`.

        Raises:
            MessageTooLargeError: A row is over ``memory.max.message.bytes``.
            TransportError: The producer is closed.

        """
        from omconnect.columnar.sizes import check_row_sizes
        from omconnect.transport.kit.column_runs import column_metadata, column_runs

        if self._closed:
            raise TransportError("the producer is closed")
        check_row_sizes(topic, batch, self._limit)
        if batch.num_rows == 0:
            return super().send_batch(topic, batch)
        future: Future[BatchMetadata] = Future()
        stamp = now_ms()
        space = self._space
        with space.lock:
            logs = space.create_topic(topic, self._default_partitions)
            try:
                placement = column_runs(topic, batch, len(logs), self._partitioner, stamp)
            except UnknownPartitionError as exc:
                future.set_exception(failed_batch(batch.num_rows, exc.index, exc))
                return future
            firsts = []
            for run in placement.runs:
                log = logs[run.partition.partition]
                firsts.append(log.end)
                log.append_columns(_stored(run.partition, log.end, run.columns))
        space.notify()
        future.set_result(column_metadata(placement, firsts))
        return future

    def flush(self, timeout: float | None = None) -> None:
        """Return at once: every send completed when it returned."""

    def close(self, timeout: float | None = None) -> None:
        """Refuse further sends. Idempotent."""
        self._closed = True


def _stored(tp: TopicPartition, first: int, columns: pa.RecordBatch) -> pa.RecordBatch:
    """A placed run's columns (``key``, ``value``, ``timestamp``, optional ``headers``)
    as the consumed batch a reader gets: offsets from ``first``.
    """
    import numpy as np
    import pyarrow as pa

    from omconnect.columnar.columns import WIRE_HEADERS_TYPE, consumed_schema

    rows = columns.num_rows
    names = columns.schema.names
    headers = columns.column("headers").cast(WIRE_HEADERS_TYPE) if "headers" in names \
        else pa.nulls(rows, WIRE_HEADERS_TYPE)
    return pa.RecordBatch.from_arrays([
        pa.repeat(pa.scalar(tp.topic, pa.string()), rows),
        pa.repeat(pa.scalar(tp.partition, pa.int32()), rows),
        pa.array(np.arange(first, first + rows, dtype=np.int64)),
        columns.column("timestamp"), columns.column("key"), columns.column("value"), headers,
    ], schema=consumed_schema())


class MemoryGroupStore(GroupStore):
    """One group's membership in a space."""

    def __init__(self, space: _Space, group: str) -> None:
        self._space = space
        self._group = group

    def _state(self) -> _Group:
        state = self._space.groups.get(self._group)
        if state is None:
            state = self._space.groups[self._group] = _Group()
        return state

    def join(self, member: str, topics: frozenset[str], session_timeout_ms: int) -> None:
        """Register ``member`` with its topics."""
        with self._space.lock:
            self._state().members[member] = _Member(topics, session_timeout_ms,
                                                    time.monotonic())

    def sync(self, member: str) -> GroupView | None:
        """Evict silent members (this one included), heartbeat, return the group."""
        now = time.monotonic()
        with self._space.lock:
            state = self._state()
            expired = [m for m, info in state.members.items()
                       if now - info.seen > info.session_timeout_ms / 1000]
            for gone in expired:
                self._remove(state, gone)
            info = state.members.get(member)
            if info is None:
                return None
            info.seen = now
            topics = set().union(*(m.topics for m in state.members.values()))
            return GroupView(
                members={m: i.topics for m, i in state.members.items()},
                partitions={t: len(self._space.topics[t]) for t in topics
                            if t in self._space.topics},
                owners=dict(state.owners),
            )

    def exchange(
        self, member: str, release: Set[TopicPartition], claim: Set[TopicPartition]
    ) -> set[TopicPartition]:
        """Free ``release``; take the unowned partitions of ``claim``."""
        with self._space.lock:
            owners = self._state().owners
            for tp in release:
                if owners.get(tp) == member:
                    del owners[tp]
            claimed = set()
            for tp in claim:
                if owners.setdefault(tp, member) == member:
                    claimed.add(tp)
            return claimed

    def leave(self, member: str) -> None:
        """Remove ``member`` and free its partitions."""
        with self._space.lock:
            self._remove(self._state(), member)

    @staticmethod
    def _remove(state: _Group, member: str) -> None:
        state.members.pop(member, None)
        for tp in [tp for tp, owner in state.owners.items() if owner == member]:
            del state.owners[tp]


class MemoryConsumer(LogConsumer):
    """Reads a space's logs; see :class:`~omconnect.transport.kit.log_consumer.LogConsumer`."""

    def __init__(
        self, space: _Space, *, group: str | None, start: StartFrom, member: GroupMember | None
    ) -> None:
        super().__init__(group=group, start=start, member=member)
        self._space = space
        space.signals.add(self._signal)

    def _read(self, partition: TopicPartition, offset: int, limit: int) -> list[Message]:
        with self._space.lock:
            logs = self._space.topics.get(partition.topic)
            if logs is None or partition.partition >= len(logs):
                return []
            return logs[partition.partition].messages(offset, limit)

    def _read_columns(self, partition: TopicPartition, offset: int, limit: int) -> Any:
        with self._space.lock:
            logs = self._space.topics.get(partition.topic)
            if logs is None or partition.partition >= len(logs):
                return None
            return logs[partition.partition].columns(offset, limit)

    def _range(self, partition: TopicPartition) -> tuple[int, int] | None:
        with self._space.lock:
            logs = self._space.topics.get(partition.topic)
            if logs is None or not 0 <= partition.partition < len(logs):
                return None
            return 0, logs[partition.partition].end

    def _store_commit(self, group: str, offsets: Mapping[TopicPartition, int]) -> None:
        with self._space.lock:
            state = self._space.groups.setdefault(group, _Group())
            state.offsets.update(offsets)

    def _load_committed(
        self, group: str, partitions: Sequence[TopicPartition]
    ) -> dict[TopicPartition, int | None]:
        with self._space.lock:
            state = self._space.groups.get(group)
            offsets = state.offsets if state is not None else {}
            return {tp: offsets.get(tp) for tp in partitions}

    def _wait(self, timeout: float) -> None:
        self._signal.wait(timeout)

    def _release(self) -> None:
        self._space.signals.discard(self._signal)


class MemoryKeyValueStore(KeyValueStore):
    """A namespace's map in a space; last write wins."""

    def __init__(self, space: _Space, namespace: str) -> None:
        self._space = space
        self._namespace = namespace
        self._closed = False

    def _data(self) -> dict[str, bytes]:
        if self._closed:
            raise IllegalStateError("the key/value store is closed")
        data = self._space.stores.get(self._namespace)
        if data is None:
            data = self._space.stores[self._namespace] = {}
        return data

    def get(self, key: str) -> bytes | None:
        """The value under ``key``, or ``None``."""
        with self._space.lock:
            return self._data().get(key)

    def put_many(self, items: Mapping[str, bytes | None]) -> None:
        """Store every item at once; ``None`` deletes."""
        checked = checked_items(items)
        with self._space.lock:
            data = self._data()
            for key, value in checked.items():
                if value is None:
                    data.pop(key, None)
                else:
                    data[key] = value

    def scan(self, prefix: str = "") -> Iterator[tuple[str, bytes]]:
        """Every (key, value) whose key starts with ``prefix``, in key order."""
        with self._space.lock:
            found = sorted((k, v) for k, v in self._data().items() if k.startswith(prefix))
        return iter(found)

    def close(self) -> None:
        """Refuse further calls; the data stays in the space. Idempotent."""
        self._closed = True


class MemoryAdmin(Admin):
    """Creates, lists and deletes a space's topics."""

    def __init__(self, space: _Space) -> None:
        self._space = space

    def create_topics(self, topics: Sequence[TopicSpec]) -> None:
        """Create ``topics``; existing ones are left as they are."""
        for spec in topics:
            check_topic_spec(spec)
        with self._space.lock:
            for spec in topics:
                self._space.create_topic(spec.name, spec.partitions, spec.config)

    def list_topics(self) -> dict[str, TopicSpec]:
        """Every topic, by name."""
        with self._space.lock:
            return {name: TopicSpec(name, len(logs), dict(self._space.topic_configs[name]))
                    for name, logs in self._space.topics.items()}

    def delete_topics(self, names: Sequence[str]) -> None:
        """Delete topics with their messages and group positions; unknown names are ignored."""
        with self._space.lock:
            for name in names:
                self._space.delete_topic(name)
