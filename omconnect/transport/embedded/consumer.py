"""Consuming from the embedded log: one range scan per partition per poll.

A consumer has its own connection. In WAL mode its reads never wait for a writer. An idle
poll sleeps until a producer of this process commits (an in-process signal) or, for
writers in other processes, until SQLite's ``data_version`` changes, which it checks every
``embedded.poll.interval.ms``.
"""

from __future__ import annotations

import time
import weakref
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from omconnect.records import TopicPartition
from omconnect.transport.embedded.catalog import Catalog, partition_range
from omconnect.transport.embedded.client import Database, write_transaction
from omconnect.transport.embedded.codec import decode_chunk
from omconnect.transport.embedded.errors import translated_errors
from omconnect.transport.embedded.groups import Heartbeat, group_store
from omconnect.transport.kit.grouping import Assignor, GroupMember
from omconnect.transport.kit.log_consumer import LogConsumer
from omconnect.transport.messages import Message
from omconnect.transport.spi import RebalanceListener, StartFrom

__all__ = ["EmbeddedConsumer"]

# The chunks holding offsets from the first parameter on (see schema.py).
_SELECT = "SELECT id, count, data FROM log WHERE id >= ? AND id < ? ORDER BY id"


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


class EmbeddedConsumer(LogConsumer):
    """Reads the embedded log; see :class:`~omconnect.transport.kit.log_consumer.LogConsumer`.

    Args:
        database: The database.
        group: The consumer group, or ``None``.
        start: Where a partition with no committed position starts.
        member_id: This consumer's id in its group.
        assignor: How the group shares partitions.
        session_timeout_ms: How long the group keeps this consumer without a heartbeat.
        heartbeat_interval_ms: How often it heartbeats and checks for group changes.
        max_poll_interval_ms: Longest time between polls before it stops heart-beating.
        poll_interval_ms: How often an idle poll checks for other processes' writes.

    """

    def __init__(
        self,
        database: Database,
        *,
        group: str | None,
        start: StartFrom,
        member_id: str,
        assignor: Assignor,
        session_timeout_ms: int,
        heartbeat_interval_ms: int,
        max_poll_interval_ms: int,
        poll_interval_ms: int,
    ) -> None:
        self._db = database
        self._conn = database.connect()
        self._catalog = Catalog()
        self._poll_interval = poll_interval_ms / 1000
        self._seen_version = -1
        self._polled_at = time.monotonic()
        self._polling = False
        self._max_poll_interval = max_poll_interval_ms / 1000
        self._heartbeat: Heartbeat | None = None
        member = None
        if group is not None:
            member = GroupMember(group_store(self._conn, group), member_id,
                                 assignor=assignor,
                                 heartbeat_interval=heartbeat_interval_ms / 1000,
                                 session_timeout_ms=session_timeout_ms)
            self._heartbeat = Heartbeat(database, group=group, member=member_id,
                                        interval=heartbeat_interval_ms / 1000,
                                        alive=_weakly(self._alive))
        super().__init__(group=group, start=start, member=member)
        database.signals.add(self._signal)

    def subscribe(
        self, topics: Sequence[str], listener: RebalanceListener | None = None
    ) -> None:
        """Join the group for ``topics`` and start heart-beating."""
        super().subscribe(topics, listener)
        self._polled_at = time.monotonic()
        if self._heartbeat is not None:
            self._heartbeat.start()

    def poll(self, max_records: int, timeout: float) -> list[Message]:
        """Up to ``max_records`` messages, waiting at most ``timeout`` seconds for the first."""
        self._polling = True
        try:
            return super().poll(max_records, timeout)
        finally:
            self._polling = False
            self._polled_at = time.monotonic()

    def poll_batch(self, max_records: int, timeout: float) -> Any:
        """:meth:`poll` as one Arrow batch, built over the stored chunks' bytes."""
        self._polling = True
        try:
            return super().poll_batch(max_records, timeout)
        finally:
            self._polling = False
            self._polled_at = time.monotonic()

    def _alive(self) -> bool:
        """Whether this consumer counts as alive for its group (see :class:`Heartbeat`)."""
        return self._polling or time.monotonic() - self._polled_at <= self._max_poll_interval

    def _prepare(self) -> None:
        with translated_errors("reading the topic catalog"):
            self._seen_version = self._data_version()
            self._catalog.refresh(self._conn)

    def _partition_id(self, partition: TopicPartition) -> int | None:
        ids = self._catalog.partition_ids.get(partition.topic)
        if ids is None or partition.partition >= len(ids):
            with translated_errors("reading the topic catalog"):
                self._catalog.refresh(self._conn)
            ids = self._catalog.partition_ids.get(partition.topic)
        if ids is None or not 0 <= partition.partition < len(ids):
            return None
        return ids[partition.partition]

    def _read(self, partition: TopicPartition, offset: int, limit: int) -> list[Message]:
        pid = self._partition_id(partition)
        if pid is None:
            return []
        start, end = partition_range(pid)
        if offset >= end - start:  # beyond what a partition can hold (and SQLite's integers)
            return []
        topic = partition.topic
        number = partition.partition
        messages: list[Message] = []
        with translated_errors("reading the log", topic=topic, partition=number, offset=offset):
            cursor = self._conn.execute(_SELECT, (start + offset, end))
            try:
                for rowid, count, data in cursor:
                    base = rowid - start - count + 1
                    messages += decode_chunk(data, topic=topic, partition=number,
                                             base_offset=base, first=max(0, offset - base),
                                             limit=limit - len(messages))
                    if len(messages) >= limit:
                        break
            finally:
                cursor.close()
        return messages

    def _read_columns(self, partition: TopicPartition, offset: int, limit: int) -> Any:
        from omconnect.transport.embedded.columns import decode_chunk_columns

        pid = self._partition_id(partition)
        if pid is None:
            return None
        start, end = partition_range(pid)
        if offset >= end - start:
            return None
        topic = partition.topic
        number = partition.partition
        parts: list[Any] = []
        got = 0
        with translated_errors("reading the log", topic=topic, partition=number, offset=offset):
            cursor = self._conn.execute(_SELECT, (start + offset, end))
            try:
                for rowid, count, data in cursor:
                    base = rowid - start - count + 1
                    part = decode_chunk_columns(data, topic=topic, partition=number,
                                                base_offset=base, first=max(0, offset - base),
                                                limit=limit - got)
                    if part.num_rows:
                        parts.append(part)
                        got += part.num_rows
                    if got >= limit:
                        break
            finally:
                cursor.close()
        if not parts:
            return None
        if len(parts) == 1:
            return parts[0]
        import pyarrow as pa

        return pa.concat_batches(parts)

    def _range(self, partition: TopicPartition) -> tuple[int, int] | None:
        pid = self._partition_id(partition)
        if pid is None:
            return None
        start, end = partition_range(pid)
        with translated_errors("reading offsets", topic=partition.topic,
                           partition=partition.partition):
            first = self._conn.execute("SELECT id, count FROM log WHERE id >= ? AND id < ? "
                                       "ORDER BY id LIMIT 1", (start, end)).fetchone()
            if first is None:
                return 0, 0
            (last,) = self._conn.execute("SELECT max(id) FROM log WHERE id >= ? AND id < ?",
                                         (start, end)).fetchone()
        return first[0] - start - first[1] + 1, last - start + 1

    def _store_commit(self, group: str, offsets: Mapping[TopicPartition, int]) -> None:
        now = time.time_ns() // 1_000_000
        with translated_errors("committing offsets", group=group), \
                write_transaction(self._conn) as conn:
            conn.executemany(
                "INSERT INTO group_offsets (grp, topic, partition, next_offset, committed_ms) "
                "VALUES (?, ?, ?, ?, ?) ON CONFLICT (grp, topic, partition) DO UPDATE SET "
                "next_offset = excluded.next_offset, committed_ms = excluded.committed_ms",
                [(group, tp.topic, tp.partition, offset, now) for tp, offset in offsets.items()])

    def _load_committed(
        self, group: str, partitions: Sequence[TopicPartition]
    ) -> dict[TopicPartition, int | None]:
        with translated_errors("reading committed offsets", group=group):
            rows = self._conn.execute(
                "SELECT topic, partition, next_offset FROM group_offsets WHERE grp = ?",
                (group,)).fetchall()
        stored = {TopicPartition(topic, partition): offset for topic, partition, offset in rows}
        return {tp: stored.get(tp) for tp in partitions}

    def _wait(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while True:
            step = min(deadline - time.monotonic(), self._poll_interval)
            if step <= 0 or self._signal.wait(step):
                return
            with translated_errors("checking for new messages"):
                if self._data_version() != self._seen_version:
                    return

    def _data_version(self) -> int:
        return int(self._conn.execute("PRAGMA data_version").fetchone()[0])

    def _release(self) -> None:
        if self._heartbeat is not None:
            self._heartbeat.stop()
        self._db.signals.discard(self._signal)
        self._conn.close()
