"""The storage primitives of a log transport: :class:`LogStore`.

A log transport keeps each topic partition as a log of messages numbered from 0 by
offset, and a consumer group's committed positions beside it. A transport on a store
(a database, a key/value server, files) implements these primitives, and
:class:`~omconnect.transport.kit.log_transport.LogTransport` derives the whole Transport
SPI from them: the producer (futures, batching, back-pressure, flush and close,
per-message outcomes), the consumer (positions, groups, rebalance callbacks, assign and
seek, pause and resume, wakeup), the key/value store and the admin.

Each client of the transport opens a store of its own (:meth:`LogTransport.open_store`)
and uses it from one thread at a time, so a store may hold one connection and needs no
locking of its own.

The abstract methods are what every store implements. The others have defaults built on
them, which a store overrides when it can do better: :meth:`LogStore.append_runs` and
:meth:`LogStore.read_columns` to keep Arrow columns without an object per record (the
columnar path), :meth:`LogStore.snapshot` to let idle consumers notice other processes'
writes cheaply, :meth:`LogStore.wait` to be woken by the store itself, and
:meth:`LogStore.create_topics`/:meth:`LogStore.topic_specs` to keep topic configs.
"""

from __future__ import annotations

import abc
import threading
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from omconnect.records import TopicPartition
from omconnect.transport.kit.grouping import GroupStore
from omconnect.transport.messages import Message, TopicSpec, build_message

__all__ = ["LogRun", "LogStore"]


class LogRun:
    """Records for one partition, in offset order, as :meth:`LogStore.append_runs` takes
    them: either ``messages`` with their ``timestamps`` (each message's own, or the send
    time where it had none), or ``columns``, an Arrow batch with ``key`` and ``value``
    (binary), ``timestamp`` (int64 milliseconds, no nulls) and an optional ``headers``
    column (:mod:`omconnect.columnar.columns`).
    """

    __slots__ = ("columns", "messages", "partition", "timestamps")

    def __init__(self, partition: TopicPartition, *,
                 messages: Sequence[Message] = (), timestamps: Sequence[int] = (),
                 columns: Any = None) -> None:
        self.partition = partition
        self.messages = messages
        self.timestamps = timestamps
        self.columns = columns

    def __len__(self) -> int:
        return len(self.messages) if self.columns is None else int(self.columns.num_rows)

    def as_messages(self) -> list[Message]:
        """The run's records as messages with their partition and timestamp set."""
        tp = self.partition
        if self.columns is not None:
            from omconnect.transport.message_batches import batch_to_messages

            rows = batch_to_messages(tp.topic, self.columns)
            stamps = self.columns.column("timestamp").to_pylist()
        else:
            rows, stamps = list(self.messages), list(self.timestamps)
        return [m if m.timestamp == stamp and m.partition == tp.partition
                else build_message(tp.topic, m.key, m.value, m.headers, stamp, tp.partition,
                                   None)
                for m, stamp in zip(rows, stamps, strict=True)]


class LogStore(abc.ABC):
    """What a log transport's storage does; see the module docstring."""

    # -- topics ------------------------------------------------------------------------

    @abc.abstractmethod
    def create_topic(self, name: str, partitions: int) -> int:
        """Create topic ``name`` with ``partitions`` partitions unless it exists; return
        its partition count (the existing one when it existed).
        """

    @abc.abstractmethod
    def topics(self) -> dict[str, int]:
        """Every topic's partition count, by name."""

    def create_topics(self, specs: Sequence[TopicSpec]) -> None:
        """Create each topic of ``specs`` that does not exist (the admin's call). The
        default calls :meth:`create_topic` for each, dropping their configs; a store that
        keeps configs overrides it and :meth:`topic_specs`.
        """
        for spec in specs:
            self.create_topic(spec.name, spec.partitions)

    def topic_specs(self) -> dict[str, TopicSpec]:
        """Every topic as a spec, by name. The default builds them from :meth:`topics`."""
        return {name: TopicSpec(name, count) for name, count in self.topics().items()}

    @abc.abstractmethod
    def delete_topics(self, names: Sequence[str]) -> None:
        """Delete topics with their messages and committed positions; unknown names are
        ignored.
        """

    # -- the log ---------------------------------------------------------------------

    @abc.abstractmethod
    def append(self, messages: Sequence[tuple[TopicPartition, Message]]) -> list[int]:
        """Store ``messages`` (each with the partition it goes to; their topics exist)
        **atomically**: all of them, or none when this raises. Return the offset given to
        each, in order.

        Offsets of a partition are consecutive from 0, in the order given, and become
        visible to readers in offset order (TRANSPORT-74): a reader never sees an offset
        while a smaller one of the same partition is still to come, even with other
        writers appending at the same time (give out offsets and store the messages in
        one transaction).
        """

    def append_runs(self, runs: Sequence[LogRun]) -> list[int]:
        """Store every run **atomically**, as :meth:`append`; return the offset of each
        run's first record (the others follow it: a run's offsets are consecutive).

        This is what the producer calls. The default turns the runs into messages and
        calls :meth:`append`; a store that keeps columns overrides it to write a run's
        Arrow columns without an object per record.
        """
        placed = [(run.partition, message) for run in runs for message in run.as_messages()]
        offsets = self.append(placed)
        firsts, index = [], 0
        for run in runs:
            firsts.append(offsets[index] if len(run) else -1)
            index += len(run)
        return firsts

    @abc.abstractmethod
    def read(self, partition: TopicPartition, offset: int, limit: int) -> list[Message]:
        """Up to ``limit`` messages of ``partition`` from ``offset`` on, in offset order,
        with ``partition``, ``offset`` and ``timestamp`` set (empty when there are none or
        the topic does not exist).
        """

    @abc.abstractmethod
    def offset_range(self, partition: TopicPartition) -> tuple[int, int] | None:
        """(first offset kept, next offset) of ``partition``; ``None`` when the topic or
        the partition does not exist.
        """

    def read_columns(self, partition: TopicPartition, offset: int, limit: int) -> Any:
        """:meth:`read` as a consumed Arrow batch
        (:func:`~omconnect.columnar.columns.consumed_schema`), or ``None`` when there is
        nothing. The default converts :meth:`read`'s messages; a store that keeps columns
        overrides it.
        """
        messages = self.read(partition, offset, limit)
        if not messages:
            return None
        from omconnect.transport.message_batches import messages_to_batch

        return messages_to_batch(messages)

    def snapshot(self) -> int | None:
        """A number that changes whenever any process stored messages or changed topics
        (SQLite's ``data_version``, a sequence), read at the start of each poll; an idle
        consumer compares it every ``poll.interval.ms`` and reads again only when it
        changed. The default, ``None``, means the store cannot tell: an idle consumer
        reads again every ``poll.interval.ms``. A store that caches metadata may refresh
        it here.
        """
        return None

    def wait(self, timeout: float, signal: threading.Event) -> None:
        """Block until new messages may have been stored, ``signal`` is set or
        ``timeout`` seconds passed. This default waits on ``signal`` (set in this process
        by every append and by ``wakeup``) for at most ``timeout``; a store that can be
        written by other processes overrides it to notice their writes too (a
        notification, a version number checked every so often).
        """
        signal.wait(timeout)

    # -- committed positions -----------------------------------------------------------

    @abc.abstractmethod
    def commit(self, group: str, offsets: Mapping[TopicPartition, int]) -> None:
        """Durably store ``offsets`` as ``group``'s committed positions (all or none)."""

    @abc.abstractmethod
    def committed(self, group: str,
                  partitions: Sequence[TopicPartition]) -> dict[TopicPartition, int | None]:
        """``group``'s committed position of each of ``partitions`` (``None``: none)."""

    # -- consumer groups ---------------------------------------------------------------

    @abc.abstractmethod
    def group_store(self, group: str) -> GroupStore:
        """Where ``group``'s membership lives (for a SQL database:
        :class:`~omconnect.transport.kit.sql_groups.SqlGroupStore` on this store's
        connection).
        """

    # -- the key/value store -------------------------------------------------------------

    @abc.abstractmethod
    def kv_get(self, namespace: str, key: str) -> bytes | None:
        """The value of ``key`` in ``namespace``, or ``None``."""

    @abc.abstractmethod
    def kv_put(self, namespace: str, items: Mapping[str, bytes | None]) -> None:
        """Store every item of ``namespace`` at once, durably; ``None`` deletes the key."""

    @abc.abstractmethod
    def kv_scan(self, namespace: str, prefix: str) -> Iterator[tuple[str, bytes]]:
        """Every (key, value) of ``namespace`` whose key starts with ``prefix``, in key
        order.
        """

    def close(self) -> None:
        """Release the store's connection. The default does nothing."""
