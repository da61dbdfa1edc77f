"""Producing to the embedded log: producers hand batches to one writer thread.

The :class:`LogWriter` of a transport owns its write connection. It takes every batch
waiting when it is free (up to ``MAX_RECORDS_PER_TRANSACTION`` records), packs each
partition's records into chunks (:mod:`~omconnect.transport.embedded.codec`), inserts
them in **one** transaction, and only after ``COMMIT`` returned resolves the batches'
futures. So
a producer's acknowledgement means the records are in the WAL file (and fsync'ed there
with ``synchronous=full``); concurrent producers share transactions (group commit), and a
producer never waits for SQLite's lock on its own thread.

Producers keep their order: batches are written in the order ``send`` was called, and
within a batch in the order given.
"""

from __future__ import annotations

import atexit
import collections
import operator
import threading
import time
from collections.abc import Sequence
from concurrent.futures import Future
from itertools import groupby, repeat
from typing import Any, TypeAlias

from omconnect.errors import (
    SendError,
    TransportError,
    TransportTimeoutError,
)
from omconnect.records import RecordMetadata, build_record_metadata
from omconnect.transport.embedded.catalog import Catalog, create_topic, partition_range
from omconnect.transport.embedded.client import Database, write_transaction
from omconnect.transport.embedded.codec import encode_chunks
from omconnect.transport.embedded.errors import translated_errors
from omconnect.transport.embedded.schema import MAX_OFFSET, OFFSET_BITS
from omconnect.transport.kit.checks import check_message_sizes, failed_batch
from omconnect.transport.kit.partitioning import Partitioner, UnknownPartitionError
from omconnect.transport.messages import Message
from omconnect.transport.spi import Producer

__all__ = ["EmbeddedProducer", "LogWriter"]

MAX_RECORDS_PER_TRANSACTION = 50_000
"""The most records the writer puts in one transaction when batches queue up."""

_INSERT = "INSERT INTO log (id, count, data) VALUES (?, ?, ?)"
_TOPIC = operator.attrgetter("topic")
_TIMESTAMP = operator.attrgetter("timestamp")

Row: TypeAlias = tuple[int, int, bytes]


class _Pending:
    __slots__ = ("columns", "count", "future", "messages", "stamp", "topic")

    def __init__(self, messages: Sequence[Message], stamp: int, *, topic: str = "",
                 columns: Any = None) -> None:
        self.messages = messages
        self.stamp = stamp
        self.topic = topic
        self.columns = columns  # a pyarrow RecordBatch (send_batch), else None
        self.count = len(messages) if columns is None else columns.num_rows
        self.future: Future[Any] = Future()


class LogWriter:
    """The writer thread of one transport; producers :meth:`submit` batches to it.

    Args:
        database: Where to write.
        partitioner: Picks partitions for messages that do not name one.
        default_partitions: Partitions of a topic created by its first message.
        max_pending_records: Records queued or being written beyond which
            :meth:`submit` blocks (back-pressure), up to ``database.busy_timeout_ms``.

    """

    def __init__(
        self,
        database: Database,
        partitioner: Partitioner,
        *,
        default_partitions: int,
        max_pending_records: int,
    ) -> None:
        self._db = database
        self._partitioner = partitioner
        self._default_partitions = default_partitions
        self._max_pending = max_pending_records
        self._catalog = Catalog()
        self._queue: collections.deque[_Pending] = collections.deque()
        self._pending_records = 0
        self._cond = threading.Condition()
        self._closing = False
        self._conn = database.connect()
        self._thread = threading.Thread(target=self._run, name="omconnect-embedded-writer",
                                        daemon=True)
        self._thread.start()
        # Batches queued when the interpreter exits are still written (as a Kafka
        # producer flushes on exit), unless the transport was closed before.
        atexit.register(self.close)

    def submit(self, messages: Sequence[Message]) -> Future[list[RecordMetadata]]:
        """Queue a batch; its future completes once it is committed (or failed).

        Raises:
            TransportTimeoutError: The queue stayed full for the busy timeout.
            TransportError: The writer is closed.

        """
        return self._queue_pending(_Pending(messages, time.time_ns() // 1_000_000))

    def submit_columns(self, topic: str, columns: Any) -> Future[Any]:
        """Queue an Arrow batch for ``topic``; its future's result is a
        :class:`~omconnect.columnar.BatchMetadata` (raises as :meth:`submit`).
        """
        return self._queue_pending(_Pending((), time.time_ns() // 1_000_000, topic=topic,
                                            columns=columns))

    def _queue_pending(self, pending: _Pending) -> Future[Any]:
        count = pending.count
        with self._cond:
            # A send from an acknowledgement callback runs on the writer thread itself,
            # which must never wait for its own progress.
            if (self._pending_records and threading.current_thread() is not self._thread
                    and self._pending_records + count > self._max_pending):
                waited = self._cond.wait_for(
                    lambda: self._closing or self._pending_records + count
                    <= self._max_pending or not self._pending_records,
                    timeout=self._db.busy_timeout_ms / 1000)
                if not waited:
                    raise TransportTimeoutError(
                        f"embedded transport: {self._pending_records} records still waiting "
                        f"to be written after {self._db.busy_timeout_ms} ms")
            if self._closing:
                raise TransportError("embedded transport: the transport is closed")
            self._queue.append(pending)
            self._pending_records += count
            self._cond.notify_all()
        return pending.future

    def close(self, timeout: float | None = None) -> None:
        """Write what is queued, then stop the thread and close the connection."""
        atexit.unregister(self.close)
        with self._cond:
            self._closing = True
            self._cond.notify_all()
        self._thread.join(timeout)
        if not self._thread.is_alive():
            self._conn.close()

    def _run(self) -> None:
        while True:
            with self._cond:
                self._cond.wait_for(lambda: self._queue or self._closing)
                if not self._queue:
                    return
                batches = [self._queue.popleft()]
                records = batches[0].count
                while self._queue and records + self._queue[0].count <= (
                        MAX_RECORDS_PER_TRANSACTION):
                    batches.append(self._queue.popleft())
                    records += batches[-1].count
            try:
                self._write(batches)
            finally:
                with self._cond:
                    self._pending_records -= records
                    self._cond.notify_all()

    def _write(self, batches: list[_Pending]) -> None:
        outcomes: list[Any] = []
        try:
            with translated_errors("appending to the log"), write_transaction(self._conn):
                self._catalog.refresh(self._conn)
                next_offsets: dict[int, int] = {}
                rows: list[Row] = []
                for pending in batches:
                    outcomes.append(self._stage(pending, next_offsets, rows))
                for pid, offset in next_offsets.items():
                    if offset > MAX_OFFSET:
                        raise TransportError(f"embedded transport: partition id {pid} is full "
                                             f"({MAX_OFFSET + 1} messages)")
                self._conn.executemany(_INSERT, rows)
        except Exception as exc:  # the transaction is rolled back: nothing was stored
            self._catalog.invalidate()
            error = exc if isinstance(exc, TransportError) else TransportError(
                f"embedded transport: appending to the log failed: {exc!r}")
            for pending in batches:
                send_error = SendError(f"batch not stored: {error}",
                                       [error] * pending.count)
                send_error.__cause__ = error
                pending.future.set_exception(send_error)
            return
        for pending, outcome in zip(batches, outcomes, strict=True):
            if isinstance(outcome, SendError):
                pending.future.set_exception(outcome)
            else:
                pending.future.set_result(outcome)
        self._db.notify()

    def _stage(
        self, pending: _Pending, next_offsets: dict[int, int], rows: list[Row]
    ) -> Any:
        """Add ``pending``'s chunks to ``rows``; its acknowledgements, or why it failed."""
        if pending.columns is not None:
            from omconnect.transport.embedded.column_staging import stage_columns

            return stage_columns(self, pending.topic, pending.columns, pending.stamp,
                                 next_offsets, rows)
        messages = pending.messages
        try:
            partitions = self._partitioner.place(messages, self._partition_count)
        except UnknownPartitionError as exc:
            return failed_batch(len(messages), exc.index, exc)
        stamp = pending.stamp
        timestamps = [stamp if t is None else t for t in map(_TIMESTAMP, messages)]
        topics = set(map(_TOPIC, messages))
        if len(topics) == 1:
            return self._stage_topic(messages[0].topic, messages, partitions, timestamps,
                                     next_offsets, rows)
        metadata: list[RecordMetadata] = [None] * len(messages)  # type: ignore[list-item]
        for topic in sorted(topics):
            indexes = [i for i, m in enumerate(messages) if m.topic == topic]
            staged = self._stage_topic(topic, [messages[i] for i in indexes],
                                       [partitions[i] for i in indexes],
                                       [timestamps[i] for i in indexes], next_offsets, rows)
            for index, acknowledgement in zip(indexes, staged, strict=True):
                metadata[index] = acknowledgement
        return metadata

    def _stage_topic(
        self,
        topic: str,
        messages: Sequence[Message],
        partitions: list[int],
        timestamps: list[int],
        next_offsets: dict[int, int],
        rows: list[Row],
    ) -> list[RecordMetadata]:
        """Stage the messages of one topic (their partitions and timestamps given)."""
        pids = self._catalog.partition_ids[topic]
        counters: dict[int, int] = {}
        for partition in set(partitions):
            offset = next_offsets.get(pids[partition])
            counters[partition] = self._next_offset(pids[partition]) if offset is None else offset
        offsets: list[int] | range
        if len(counters) == 1:
            start = counters[partitions[0]]
            offsets = range(start, start + len(partitions))
            counters[partitions[0]] = start + len(partitions)
        else:
            offsets = []
            take = offsets.append
            for partition in partitions:
                offset = counters[partition]
                counters[partition] = offset + 1
                take(offset)
        metadata = list(map(build_record_metadata, repeat(topic), partitions, offsets,
                            timestamps))
        runs: list[tuple[int, Sequence[Message], list[int]]]
        if len(counters) == 1:
            runs = [(partitions[0], messages, timestamps)]
        else:  # a stable sort keeps each partition's messages in the order given
            order = sorted(range(len(partitions)), key=partitions.__getitem__)
            runs = []
            for partition, group in groupby(order, key=partitions.__getitem__):
                indexes = list(group)
                runs.append((partition, [messages[i] for i in indexes],
                             [timestamps[i] for i in indexes]))
        for partition, run, run_timestamps in runs:
            pid = pids[partition]
            end = next_offsets[pid] = counters[partition]
            last = end - len(run) - 1
            for count, data in encode_chunks(run, run_timestamps):
                last += count
                rows.append(((pid << OFFSET_BITS) | last, count, data))
        return metadata

    def partition_ids(self, topic: str) -> list[int]:
        """The partition ids of ``topic`` (created with the default partitions if new);
        for the writer thread, inside its transaction.
        """
        self._partition_count(topic)
        return list(self._catalog.partition_ids[topic])

    def next_offset(self, pid: int, next_offsets: dict[int, int]) -> int:
        """The offset the next record of partition id ``pid`` gets in this transaction."""
        offset = next_offsets.get(pid)
        return self._next_offset(pid) if offset is None else offset

    @property
    def partitioner(self) -> Partitioner:
        """How partitions are chosen."""
        return self._partitioner

    def _partition_count(self, topic: str) -> int:
        ids = self._catalog.partition_ids.get(topic)
        if ids is None:
            create_topic(self._conn, topic, self._default_partitions)
            self._catalog.refresh(self._conn)
            ids = self._catalog.partition_ids[topic]
        return len(ids)

    def _next_offset(self, pid: int) -> int:
        start, end = partition_range(pid)
        row = self._conn.execute("SELECT max(id) FROM log WHERE id >= ? AND id < ?",
                                 (start, end)).fetchone()
        return 0 if row[0] is None else row[0] - start + 1


class EmbeddedProducer(Producer):
    """Sends batches through its transport's :class:`LogWriter`. Any thread may call it.

    Args:
        writer: The transport's writer.
        max_message_bytes: The size limit checked before a batch is queued.

    """

    def __init__(self, writer: LogWriter, *, max_message_bytes: int) -> None:
        self._writer = writer
        self._limit = max_message_bytes
        self._inflight = 0
        self._cond = threading.Condition()
        self._closed = False

    def send(self, messages: Sequence[Message]) -> Future[list[RecordMetadata]]:
        """Queue a batch; the future resolves once it is committed to the database file.

        Raises:
            MessageTooLargeError: A message is over ``embedded.max.message.bytes``
                (nothing of the batch is queued).
            TransportError: The producer or its transport is closed.

        """
        if self._closed:
            raise TransportError("embedded transport: the producer is closed")
        batch = tuple(messages)
        check_message_sizes(batch, self._limit)
        if not batch:
            done: Future[list[RecordMetadata]] = Future()
            done.set_result([])
            return done
        with self._cond:
            self._inflight += 1
        try:
            future = self._writer.submit(batch)
        except BaseException:
            self._done(None)
            raise
        future.add_done_callback(self._done)
        return future

    def send_batch(self, topic: str, batch: Any) -> Future[Any]:
        """Queue an Arrow batch; its columns go into the log's chunks as they are (see
        :mod:`~omconnect.transport.embedded.columns`). The future's result is a
        :class:`~omconnect.columnar.BatchMetadata`.

        Raises:
            MessageTooLargeError: A row is over ``embedded.max.message.bytes`` (nothing of
                the batch is queued).
            TransportError: The producer or its transport is closed.

        """
        from omconnect.columnar.sizes import check_row_sizes

        if self._closed:
            raise TransportError("embedded transport: the producer is closed")
        check_row_sizes(topic, batch, self._limit)
        if batch.num_rows == 0:
            return super().send_batch(topic, batch)
        with self._cond:
            self._inflight += 1
        try:
            future = self._writer.submit_columns(topic, batch)
        except BaseException:
            self._done(None)
            raise
        future.add_done_callback(self._done)
        return future

    def flush(self, timeout: float | None = None) -> None:
        """Block until every batch sent so far is committed or failed.

        Raises:
            TransportTimeoutError: Not done within ``timeout`` seconds.

        """
        with self._cond:
            if not self._cond.wait_for(lambda: self._inflight == 0, timeout):
                raise TransportTimeoutError(
                    f"embedded transport: {self._inflight} batch(es) not written within "
                    f"{timeout} s")

    def close(self, timeout: float | None = None) -> None:
        """Flush, then refuse further sends. Idempotent."""
        if self._closed:
            return
        self.flush(timeout)
        self._closed = True

    def _done(self, _future: Future[list[RecordMetadata]] | None) -> None:
        with self._cond:
            self._inflight -= 1
            if self._inflight == 0:
                self._cond.notify_all()
