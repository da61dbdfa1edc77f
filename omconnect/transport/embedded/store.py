"""The embedded transport's storage primitives: :class:`EmbeddedStore`, the kit's
:class:`~omconnect.transport.kit.log_store.LogStore` on one SQLite connection.

Everything else (producers with group commit, consumers with groups and heartbeats,
the key/value store, the admin) is the kit's
:class:`~omconnect.transport.kit.log_transport.LogTransport`. The log keeps records in
chunks (:mod:`~omconnect.transport.embedded.codec`, and
:mod:`~omconnect.transport.embedded.columns` for Arrow columns, with no object per
record either way), one row per chunk keyed by partition id and last offset
(:mod:`~omconnect.transport.embedded.schema`), so a partition is read with one range
scan. Every write is one ``BEGIN IMMEDIATE`` transaction, committed before it returns.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator, Mapping, Sequence
from itertools import groupby
from typing import Any

from omconnect.errors import TransportError
from omconnect.records import TopicPartition
from omconnect.transport.embedded.catalog import (
    Catalog,
    create_topic,
    delete_topic,
    list_topics,
    partition_range,
)
from omconnect.transport.embedded.client import Database, write_transaction
from omconnect.transport.embedded.codec import decode_chunk, encode_chunks
from omconnect.transport.embedded.errors import translated_errors
from omconnect.transport.embedded.schema import MAX_OFFSET, OFFSET_BITS
from omconnect.transport.kit.log_store import LogRun, LogStore
from omconnect.transport.kit.sql_groups import SqlGroupStore
from omconnect.transport.messages import Message, TopicSpec

__all__ = ["EmbeddedStore"]

# The chunks holding offsets from the first parameter on (see schema.py).
_SELECT = "SELECT id, count, data FROM log WHERE id >= ? AND id < ? ORDER BY id"
_INSERT = "INSERT INTO log (id, count, data) VALUES (?, ?, ?)"


class EmbeddedStore(LogStore):
    """The log, positions, groups and key/value data of a database, through one
    connection of its own.

    Args:
        database: The database.

    """

    def __init__(self, database: Database) -> None:
        self._conn: sqlite3.Connection = database.connect()
        self._catalog = Catalog()

    # -- topics ------------------------------------------------------------------------

    def create_topic(self, name: str, partitions: int) -> int:
        """Create ``name`` unless it exists; its partition count."""
        ids = self._partition_ids(name)
        if ids is None:
            with translated_errors("creating a topic", topic=name), \
                    write_transaction(self._conn) as conn:
                create_topic(conn, name, partitions)
            ids = self._partition_ids(name)
        if ids is None:
            raise TransportError(f"embedded transport: topic {name!r} was deleted as it was "
                                 "created; send again")
        return len(ids)

    def create_topics(self, specs: Sequence[TopicSpec]) -> None:
        """Create each topic that does not exist, with its config, in one transaction."""
        with translated_errors("creating topics"), write_transaction(self._conn) as conn:
            for spec in specs:
                create_topic(conn, spec.name, spec.partitions, spec.config)

    def topics(self) -> dict[str, int]:
        """Every topic's partition count."""
        with translated_errors("reading the topic catalog"):
            self._catalog.refresh(self._conn)
        return {name: len(ids) for name, ids in self._catalog.partition_ids.items()}

    def topic_specs(self) -> dict[str, TopicSpec]:
        """Every topic, with its config."""
        with translated_errors("listing topics"):
            return list_topics(self._conn)

    def delete_topics(self, names: Sequence[str]) -> None:
        """Delete topics, their messages and every group's positions in them."""
        with translated_errors("deleting topics"), write_transaction(self._conn) as conn:
            for name in names:
                delete_topic(conn, name)
        self._catalog.invalidate()

    # -- the log ---------------------------------------------------------------------

    def append(self, messages: Sequence[tuple[TopicPartition, Message]]) -> list[int]:
        """Store ``messages`` in one transaction; the offset of each."""
        runs = [LogRun(tp, messages=[m for _, m in group],
                       timestamps=[m.timestamp or 0 for _, m in group])
                for tp, group in ((tp, list(g)) for tp, g in groupby(messages,
                                                                     key=lambda p: p[0]))]
        offsets: list[int] = []
        for run, first in zip(runs, self.append_runs(runs), strict=True):
            offsets += range(first, first + len(run))
        return offsets

    def append_runs(self, runs: Sequence[LogRun]) -> list[int]:
        """Pack each run into chunks (from messages or straight from Arrow columns) and
        insert them all in one transaction; the first offset of each run.

        Raises:
            TransportError: A run's partition does not exist, a partition would pass its
                last offset, or the database failed (nothing is stored).

        """
        try:
            with translated_errors("appending to the log"), \
                    write_transaction(self._conn) as conn:
                self._catalog.refresh(conn)
                next_offsets: dict[int, int] = {}
                rows: list[tuple[int, int, bytes]] = []
                firsts = []
                for run in runs:
                    pid = self._run_partition_id(run.partition)
                    first = next_offsets.get(pid)
                    if first is None:
                        first = self._next_offset(pid)
                    firsts.append(first)
                    last = first - 1
                    for count, data in _chunks(run):
                        last += count
                        rows.append(((pid << OFFSET_BITS) | last, count, data))
                    next_offsets[pid] = last + 1
                    if last > MAX_OFFSET:
                        raise TransportError(f"embedded transport: {run.partition} is full "
                                             f"({MAX_OFFSET + 1} messages)")
                conn.executemany(_INSERT, rows)
        except BaseException:
            self._catalog.invalidate()  # the transaction may have changed topics
            raise
        return firsts

    def read(self, partition: TopicPartition, offset: int, limit: int) -> list[Message]:
        """Up to ``limit`` messages from ``offset`` on: one range scan of the chunks."""
        messages: list[Message] = []
        for rowid_base, count, data in self._chunks_from(partition, offset):
            base = rowid_base - count + 1
            messages += decode_chunk(data, topic=partition.topic, partition=partition.partition,
                                     base_offset=base, first=max(0, offset - base),
                                     limit=limit - len(messages))
            if len(messages) >= limit:
                break
        return messages

    def read_columns(self, partition: TopicPartition, offset: int, limit: int) -> Any:
        """:meth:`read` as one Arrow batch, built over the stored chunks' bytes."""
        from omconnect.transport.embedded.columns import decode_chunk_columns

        parts: list[Any] = []
        got = 0
        for rowid_base, count, data in self._chunks_from(partition, offset):
            base = rowid_base - count + 1
            part = decode_chunk_columns(data, topic=partition.topic,
                                        partition=partition.partition, base_offset=base,
                                        first=max(0, offset - base), limit=limit - got)
            if part.num_rows:
                parts.append(part)
                got += part.num_rows
            if got >= limit:
                break
        if len(parts) <= 1:
            return parts[0] if parts else None
        import pyarrow as pa

        return pa.concat_batches(parts)

    def offset_range(self, partition: TopicPartition) -> tuple[int, int] | None:
        """(first offset, next offset); ``None`` when the partition does not exist."""
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

    def snapshot(self) -> int:
        """SQLite's ``data_version`` (it changes when another connection commits); the
        topic catalog is re-read here when a topic was created or deleted.
        """
        with translated_errors("checking for new messages"):
            version = int(self._conn.execute("PRAGMA data_version").fetchone()[0])
            self._catalog.refresh(self._conn)
        return version

    # -- committed positions -----------------------------------------------------------

    def commit(self, group: str, offsets: Mapping[TopicPartition, int]) -> None:
        """Store ``group``'s positions in one transaction."""
        now = time.time_ns() // 1_000_000
        with translated_errors("committing offsets", group=group), \
                write_transaction(self._conn) as conn:
            conn.executemany(
                "INSERT INTO group_offsets (grp, topic, partition, next_offset, committed_ms) "
                "VALUES (?, ?, ?, ?, ?) ON CONFLICT (grp, topic, partition) DO UPDATE SET "
                "next_offset = excluded.next_offset, committed_ms = excluded.committed_ms",
                [(group, tp.topic, tp.partition, offset, now) for tp, offset in offsets.items()])

    def committed(self, group: str,
                  partitions: Sequence[TopicPartition]) -> dict[TopicPartition, int | None]:
        """``group``'s position of each of ``partitions``."""
        with translated_errors("reading committed offsets", group=group):
            rows = self._conn.execute(
                "SELECT topic, partition, next_offset FROM group_offsets WHERE grp = ?",
                (group,)).fetchall()
        stored = {TopicPartition(topic, partition): offset for topic, partition, offset in rows}
        return {tp: stored.get(tp) for tp in partitions}

    def group_store(self, group: str) -> SqlGroupStore:
        """The kit's SQL group store on this connection (each step one ``BEGIN
        IMMEDIATE`` transaction, so members in different processes see each other's
        changes atomically).
        """
        return SqlGroupStore(self._conn, group, transaction=write_transaction,
                             translated=translated_errors)

    # -- the key/value store -------------------------------------------------------------

    def kv_get(self, namespace: str, key: str) -> bytes | None:
        """The value of ``key``, or ``None``."""
        with translated_errors("reading the key/value store", key=key):
            row = self._conn.execute("SELECT value FROM kv WHERE namespace = ? AND key = ?",
                                     (namespace, key)).fetchone()
        return None if row is None else bytes(row[0])

    def kv_put(self, namespace: str, items: Mapping[str, bytes | None]) -> None:
        """Every item in one transaction; ``None`` deletes."""
        upserts = [(namespace, k, v) for k, v in items.items() if v is not None]
        deletes = [(namespace, k) for k, v in items.items() if v is None]
        with translated_errors("writing the key/value store"), \
                write_transaction(self._conn) as conn:
            conn.executemany("INSERT OR REPLACE INTO kv (namespace, key, value) "
                             "VALUES (?, ?, ?)", upserts)
            conn.executemany("DELETE FROM kv WHERE namespace = ? AND key = ?", deletes)

    def kv_scan(self, namespace: str, prefix: str) -> Iterator[tuple[str, bytes]]:
        """Every (key, value) whose key starts with ``prefix``, in key order."""
        found = []
        with translated_errors("scanning the key/value store"):
            cursor = self._conn.execute(
                "SELECT key, value FROM kv WHERE namespace = ? AND key >= ? ORDER BY key",
                (namespace, prefix))
            try:
                for key, value in cursor:
                    if not key.startswith(prefix):
                        break
                    found.append((key, bytes(value)))
            finally:
                cursor.close()
        return iter(found)

    def close(self) -> None:
        """Close the connection."""
        self._conn.close()

    # -- helpers -------------------------------------------------------------------------

    def _partition_ids(self, topic: str) -> tuple[int, ...] | None:
        with translated_errors("reading the topic catalog"):
            self._catalog.refresh(self._conn)
        return self._catalog.partition_ids.get(topic)

    def _partition_id(self, partition: TopicPartition) -> int | None:
        ids = self._catalog.partition_ids.get(partition.topic)
        if ids is None or partition.partition >= len(ids):
            ids = self._partition_ids(partition.topic)
        if ids is None or not 0 <= partition.partition < len(ids):
            return None
        return ids[partition.partition]

    def _run_partition_id(self, partition: TopicPartition) -> int:
        ids = self._catalog.partition_ids.get(partition.topic)
        if ids is None or not 0 <= partition.partition < len(ids):
            raise TransportError(f"embedded transport: {partition} does not exist (the topic "
                                 "was deleted or has fewer partitions); send again")
        return ids[partition.partition]

    def _chunks_from(self, partition: TopicPartition, offset: int
                     ) -> Iterator[tuple[int, int, bytes]]:
        """(last offset, count, data) of each chunk holding ``offset`` or later."""
        pid = self._partition_id(partition)
        if pid is None:
            return
        start, end = partition_range(pid)
        if offset >= end - start:  # beyond what a partition can hold (and SQLite's integers)
            return
        with translated_errors("reading the log", topic=partition.topic,
                               partition=partition.partition, offset=offset):
            cursor = self._conn.execute(_SELECT, (start + offset, end))
            try:
                for rowid, count, data in cursor:
                    yield rowid - start, count, data
            finally:
                cursor.close()

    def _next_offset(self, pid: int) -> int:
        start, end = partition_range(pid)
        row = self._conn.execute("SELECT max(id) FROM log WHERE id >= ? AND id < ?",
                                 (start, end)).fetchone()
        return 0 if row[0] is None else row[0] - start + 1


def _chunks(run: LogRun) -> list[tuple[int, bytes]]:
    """The run's records packed into chunks: (count, stored form) of each."""
    columns = run.columns
    if columns is None:
        return encode_chunks(run.messages, run.timestamps)
    from omconnect.transport.embedded.columns import encode_column_chunks

    names = columns.schema.names
    return encode_column_chunks(
        columns.column("key"), columns.column("value"),
        columns.column("timestamp").to_numpy(),
        columns.column("headers") if "headers" in names else None)
