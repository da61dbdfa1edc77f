"""The writer thread of a log transport: :class:`LogWriter`.

Every producer of a :class:`~omconnect.transport.kit.log_transport.LogTransport` hands
its batches to the transport's one writer. The writer takes every batch waiting when it
is free (up to ``MAX_RECORDS_PER_APPEND`` records), places each record on a partition,
groups each batch's records into runs per partition and stores all the runs in **one**
:meth:`~omconnect.transport.kit.log_store.LogStore.append_runs` (group commit: producers
share the store's transactions and fsyncs). Only after that returned does it resolve the
batches' futures, so an acknowledgement means "stored"; when it raises, every batch of
the step fails with a :class:`~omconnect.errors.SendError` and nothing of them is stored.

Batches are stored in the order :meth:`LogWriter.submit` was called, and the records of
a batch in the order given, so each producer keeps its order per partition.
"""

from __future__ import annotations

import atexit
import collections
import operator
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from itertools import groupby, repeat
from typing import TYPE_CHECKING, Any

from omconnect.errors import SendError, TransportError, TransportTimeoutError
from omconnect.records import RecordMetadata, TopicPartition, build_record_metadata
from omconnect.transport.kit.checks import failed_batch
from omconnect.transport.kit.clock import now_ms
from omconnect.transport.kit.log_store import LogRun, LogStore
from omconnect.transport.kit.partitioning import Partitioner, UnknownPartitionError
from omconnect.transport.messages import Message

if TYPE_CHECKING:
    from omconnect.transport.kit.column_runs import ColumnPlacement

__all__ = ["MAX_RECORDS_PER_APPEND", "LogWriter"]

MAX_RECORDS_PER_APPEND = 50_000
"""The most records the writer stores in one append when batches queue up."""

_TOPIC = operator.attrgetter("topic")
_TIMESTAMP = operator.attrgetter("timestamp")


class _Pending:
    """A submitted batch: messages, or an Arrow batch for one topic."""

    __slots__ = ("columns", "count", "future", "messages", "topic")

    def __init__(self, messages: Sequence[Message], *, topic: str = "",
                 columns: Any = None) -> None:
        self.messages = messages
        self.topic = topic
        self.columns = columns
        self.count = len(messages) if columns is None else columns.num_rows
        self.future: Future[Any] = Future()


class _Staged:
    """A batch's runs, and how to build its acknowledgement from their first offsets."""

    __slots__ = ("acknowledge", "pending", "runs")

    def __init__(self, pending: _Pending, runs: list[LogRun],
                 acknowledge: Callable[[Sequence[int]], Any]) -> None:
        self.pending = pending
        self.runs = runs
        self.acknowledge = acknowledge


class LogWriter:
    """Stores the batches of every producer of one transport; see the module docstring.

    Args:
        open_store: Opens the writer's store (called on the writer thread).
        notify: Called after each successful append (wakes waiting consumers).
        partitioner: Places records that do not name a partition.
        default_partitions: Partitions of a topic created by its first record.
        max_pending_records: Records queued or being stored beyond which :meth:`submit`
            blocks (back-pressure).
        send_timeout: The longest :meth:`submit` blocks, in seconds.
        name: The transport's name, for thread names and errors.

    """

    def __init__(self, open_store: Callable[[], LogStore], notify: Callable[[], None], *,
                 partitioner: Partitioner, default_partitions: int,
                 max_pending_records: int, send_timeout: float, name: str) -> None:
        self._open_store = open_store
        self._notify = notify
        self._partitioner = partitioner
        self._default_partitions = default_partitions
        self._max_pending = max_pending_records
        self._send_timeout = send_timeout
        self._name = name
        self._store: LogStore | None = None
        self._partitions: dict[str, int] = {}
        self._snapshot: int | None = None
        self._queue: collections.deque[_Pending] = collections.deque()
        self._pending = 0
        self._cond = threading.Condition()
        self._closing = False
        self._thread = threading.Thread(target=self._run, daemon=True,
                                        name=f"omconnect-{name}-writer")
        self._thread.start()
        # What is queued when the interpreter exits is still stored (as a Kafka producer
        # flushes on exit), unless the transport was closed before.
        atexit.register(self.close)

    def submit(self, messages: Sequence[Message]) -> Future[list[RecordMetadata]]:
        """Queue a batch of messages; its future's result is a
        :class:`~omconnect.records.RecordMetadata` per message.

        Raises:
            TransportTimeoutError: The queue stayed full for the send timeout.
            TransportError: The writer is closed.

        """
        return self._queue_pending(_Pending(messages))

    def submit_columns(self, topic: str, columns: Any) -> Future[Any]:
        """Queue an Arrow batch for ``topic``; its future's result is a
        :class:`~omconnect.columnar.BatchMetadata` (raises as :meth:`submit`).
        """
        return self._queue_pending(_Pending((), topic=topic, columns=columns))

    def close(self, timeout: float | None = None) -> None:
        """Store what is queued, then stop the thread and close the store. Idempotent."""
        atexit.unregister(self.close)
        with self._cond:
            self._closing = True
            self._cond.notify_all()
        if self._thread is not threading.current_thread():
            self._thread.join(timeout)

    def _queue_pending(self, pending: _Pending) -> Future[Any]:
        count = pending.count
        with self._cond:
            # A send from an acknowledgement callback runs on the writer thread itself,
            # which must never wait for its own progress.
            if (self._pending and threading.current_thread() is not self._thread
                    and self._pending + count > self._max_pending):
                room = self._cond.wait_for(
                    lambda: self._closing or not self._pending
                    or self._pending + count <= self._max_pending,
                    timeout=self._send_timeout)
                if not room:
                    raise TransportTimeoutError(
                        f"{self._name} transport: send waited {self._send_timeout:g} s for "
                        f"room: {self._pending} records are waiting to be stored "
                        "(max.pending.records)")
            if self._closing:
                raise TransportError(f"{self._name} transport: the transport is closed")
            self._queue.append(pending)
            self._pending += count
            self._cond.notify_all()
        return pending.future

    # -- the writer thread --------------------------------------------------------------

    def _run(self) -> None:
        try:
            while True:
                with self._cond:
                    self._cond.wait_for(lambda: self._queue or self._closing)
                    if not self._queue:
                        return
                    batches = [self._queue.popleft()]
                    count = batches[0].count
                    while self._queue and count + self._queue[0].count <= (
                            MAX_RECORDS_PER_APPEND):
                        batches.append(self._queue.popleft())
                        count += batches[-1].count
                try:
                    self._write(batches)
                except BaseException as exc:  # a bug, not a store failure: fail, then stop
                    self._fail(batches, TransportError(
                        f"{self._name} transport: the writer thread failed: {exc!r}"))
                    raise
                finally:
                    with self._cond:
                        self._pending -= count
                        self._cond.notify_all()
        finally:
            with self._cond:
                self._closing = True
                left, self._queue = list(self._queue), collections.deque()
                self._pending = 0
                self._cond.notify_all()
            self._fail(left, TransportError(f"{self._name} transport: the writer stopped"))
            if self._store is not None:
                self._store.close()

    def _write(self, batches: list[_Pending]) -> None:
        staged: list[_Staged] = []
        try:
            store = self._store = self._store or self._open_store()
            snapshot = store.snapshot()
            if snapshot != self._snapshot:  # another process wrote: topics may differ
                self._snapshot = snapshot
                self._partitions.clear()
            stamp = now_ms()
            for pending in batches:
                try:
                    staged.append(self._stage(store, pending, stamp))
                except UnknownPartitionError as exc:
                    pending.future.set_exception(failed_batch(pending.count, exc.index, exc))
            runs = [run for step in staged for run in step.runs]
            firsts = store.append_runs(runs) if runs else []
        except Exception as exc:  # nothing of these batches was stored
            self._partitions.clear()  # a topic may have been deleted
            error = exc if isinstance(exc, TransportError) else TransportError(
                f"{self._name} transport: storing a batch failed: {exc!r}")
            self._fail(batches, error)
            return
        index = 0
        for step in staged:
            taken = len(step.runs)
            step.pending.future.set_result(step.acknowledge(firsts[index:index + taken]))
            index += taken
        self._notify()

    @staticmethod
    def _fail(batches: Sequence[_Pending], error: TransportError) -> None:
        """Fail every batch not done yet with ``error`` for each of its records."""
        for pending in batches:
            if not pending.future.done():
                failure = SendError(f"batch not stored: {error}", [error] * pending.count)
                failure.__cause__ = error
                pending.future.set_exception(failure)

    def _partition_count(self, store: LogStore, topic: str) -> int:
        count = self._partitions.get(topic)
        if count is None:
            count = self._partitions[topic] = store.create_topic(topic,
                                                                 self._default_partitions)
        return count

    # -- staging: records into runs -----------------------------------------------------

    def _stage(self, store: LogStore, pending: _Pending, stamp: int) -> _Staged:
        if pending.columns is not None:
            return self._stage_columns(store, pending, stamp)
        messages = pending.messages
        partitions = self._partitioner.place(messages,
                                             lambda topic: self._partition_count(store, topic))
        timestamps = [stamp if t is None else t for t in map(_TIMESTAMP, messages)]
        topics = set(map(_TOPIC, messages))
        if len(topics) == 1:
            return _message_runs(pending, messages[0].topic, messages, partitions, timestamps)
        # Several topics: each topic's records, then the acknowledgements put back in the
        # order given.
        parts = []
        for topic in sorted(topics):
            indexes = [i for i, m in enumerate(messages) if m.topic == topic]
            parts.append((indexes, _message_runs(
                pending, topic, [messages[i] for i in indexes],
                [partitions[i] for i in indexes], [timestamps[i] for i in indexes])))

        def acknowledge(firsts: Sequence[int]) -> list[RecordMetadata]:
            metadata: list[RecordMetadata] = [None] * len(messages)  # type: ignore[list-item]
            start = 0
            for indexes, part in parts:
                taken = len(part.runs)
                for index, ack in zip(indexes, part.acknowledge(firsts[start:start + taken]),
                                      strict=True):
                    metadata[index] = ack
                start += taken
            return metadata

        return _Staged(pending, [run for _, part in parts for run in part.runs], acknowledge)

    def _stage_columns(self, store: LogStore, pending: _Pending, stamp: int) -> _Staged:
        from omconnect.transport.kit.column_runs import column_metadata, column_runs

        placement: ColumnPlacement = column_runs(
            pending.topic, pending.columns, self._partition_count(store, pending.topic),
            self._partitioner, stamp)
        return _Staged(pending, placement.runs,
                       lambda firsts: column_metadata(placement, firsts))


def _message_runs(pending: _Pending, topic: str, messages: Sequence[Message],
                  partitions: list[int], timestamps: list[int]) -> _Staged:
    """The runs of one topic's messages (partitions and timestamps given), in partition
    order, each keeping the order given.
    """
    first_partition = partitions[0]
    if partitions.count(first_partition) == len(partitions):
        run = LogRun(TopicPartition(topic, first_partition), messages=messages,
                     timestamps=timestamps)

        def acknowledge_one(firsts: Sequence[int]) -> list[RecordMetadata]:
            offsets = range(firsts[0], firsts[0] + len(messages))
            return list(map(build_record_metadata, repeat(topic), partitions, offsets,
                            timestamps))

        return _Staged(pending, [run], acknowledge_one)
    order = sorted(range(len(partitions)), key=partitions.__getitem__)  # stable
    groups = [(partition, list(indexes))
              for partition, indexes in groupby(order, key=partitions.__getitem__)]
    runs = [LogRun(TopicPartition(topic, partition),
                   messages=[messages[i] for i in indexes],
                   timestamps=[timestamps[i] for i in indexes])
            for partition, indexes in groups]

    def acknowledge(firsts: Sequence[int]) -> list[RecordMetadata]:
        offsets = [0] * len(partitions)
        for first, (_, indexes) in zip(firsts, groups, strict=True):
            for offset, index in enumerate(indexes, first):
                offsets[index] = offset
        return list(map(build_record_metadata, repeat(topic), partitions, offsets,
                        timestamps))

    return _Staged(pending, runs, acknowledge)
