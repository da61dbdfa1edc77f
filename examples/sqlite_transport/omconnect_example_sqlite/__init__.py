"""An example transport: a durable queue in one SQLite file, built on the log-transport
base (``omconnect.transport.kit``). It is the worked example of
``docs/writing-a-transport.md``; the conformance suite and the quick start run on it in CI.

Select it with ``transport=sqlite-log`` and ``sqlite-log.path=/some/queue.db``. Several
processes may share the file: SQLite's WAL lets readers work while one writer appends,
and every write is one ``BEGIN IMMEDIATE`` transaction.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

from omconnect.config import ConfigDef, ConfigType, NonEmptyString, Range
from omconnect.errors import RetriableTransportError, TransportError
from omconnect.records import TopicPartition
from omconnect.testing.profile import TMP_PLACEHOLDER, TransportProfile
from omconnect.transport.kit.grouping import GroupStore
from omconnect.transport.kit.log_store import LogStore
from omconnect.transport.kit.log_transport import LOG_CONFIG_DEF, LogTransport
from omconnect.transport.kit.sql_groups import GROUP_TABLES, SqlGroupStore
from omconnect.transport.messages import Message, WireHeaders, build_message

__all__ = ["SqliteLogStore", "SqliteLogTransport", "conformance_profile"]
__version__ = "0.1.0"

SCHEMA = (
    "CREATE TABLE IF NOT EXISTS topics (name TEXT PRIMARY KEY, partitions INTEGER NOT NULL)",
    "CREATE TABLE IF NOT EXISTS log (topic TEXT NOT NULL, partition INTEGER NOT NULL, "
    "offset INTEGER NOT NULL, key BLOB, value BLOB, headers TEXT, timestamp INTEGER, "
    "PRIMARY KEY (topic, partition, offset)) WITHOUT ROWID",
    "CREATE TABLE IF NOT EXISTS commits (grp TEXT NOT NULL, topic TEXT NOT NULL, "
    "partition INTEGER NOT NULL, offset INTEGER NOT NULL, "
    "PRIMARY KEY (grp, topic, partition))",
    "CREATE TABLE IF NOT EXISTS kv (namespace TEXT NOT NULL, key TEXT NOT NULL, "
    "value BLOB NOT NULL, PRIMARY KEY (namespace, key)) WITHOUT ROWID",
    *GROUP_TABLES,
)


def translate(exc: BaseException, action: str) -> TransportError:
    """The omconnect error for a sqlite3 error: a busy or locked database is worth a
    retry, anything else is fatal. Chained to ``exc``.
    """
    message = f"sqlite-log: {action} failed: {exc}"
    busy = isinstance(exc, sqlite3.OperationalError) and (
        "locked" in str(exc) or "busy" in str(exc))
    error = RetriableTransportError(message) if busy else TransportError(message)
    error.__cause__ = exc
    return error


@contextlib.contextmanager
def translated_errors(action: str, **context: Any) -> Iterator[None]:
    """Translate the sqlite3 errors raised in the block (see :func:`translate`)."""
    try:
        yield
    except sqlite3.Error as exc:
        raise translate(exc, action) from exc


@contextlib.contextmanager
def write_transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """``BEGIN IMMEDIATE`` ... ``COMMIT`` (rolled back if the block raises)."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def _encode_headers(headers: WireHeaders) -> str | None:
    if not headers:
        return None
    return json.dumps([[k, None if v is None else bytes(v).hex()] for k, v in headers])


def _decode_headers(text: str | None) -> WireHeaders:
    if not text:
        return ()
    return tuple((k, None if v is None else bytes.fromhex(v)) for k, v in json.loads(text))


class SqliteLogStore(LogStore):
    """The storage primitives on one connection to the database file."""

    def __init__(self, path: Path, busy_timeout_ms: int) -> None:
        with translated_errors(f"opening {path}"):
            path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(path, timeout=busy_timeout_ms / 1000,
                                         isolation_level=None, check_same_thread=False)
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=FULL")
            with write_transaction(self._conn) as conn:
                for statement in SCHEMA:
                    conn.execute(statement)

    def _write(self, action: str) -> contextlib.ExitStack:
        stack = contextlib.ExitStack()
        stack.enter_context(translated_errors(action))
        stack.enter_context(write_transaction(self._conn))
        return stack

    def create_topic(self, name: str, partitions: int) -> int:
        """Create the topic unless it exists; its partition count."""
        with self._write(f"creating topic {name!r}"):
            self._conn.execute("INSERT INTO topics VALUES (?, ?) ON CONFLICT DO NOTHING",
                               (name, partitions))
            (count,) = self._conn.execute("SELECT partitions FROM topics WHERE name = ?",
                                          (name,)).fetchone()
        return int(count)

    def topics(self) -> dict[str, int]:
        """Every topic's partition count."""
        with translated_errors("listing topics"):
            return dict(self._conn.execute("SELECT name, partitions FROM topics"))

    def delete_topics(self, names: Sequence[str]) -> None:
        """Delete topics, their messages, positions and owners."""
        with self._write("deleting topics"):
            for table, column in (("topics", "name"), ("log", "topic"), ("commits", "topic"),
                                  ("group_owners", "topic")):
                self._conn.executemany(f"DELETE FROM {table} WHERE {column} = ?",
                                       [(name,) for name in names])

    def append(self, messages: Sequence[tuple[TopicPartition, Message]]) -> list[int]:
        """Give out offsets and insert the messages in one transaction."""
        offsets: list[int] = []
        following: dict[TopicPartition, int] = {}
        with self._write("appending to the log"):
            for tp, message in messages:
                offset = following.get(tp)
                if offset is None:
                    (offset,) = self._conn.execute(
                        "SELECT COALESCE(MAX(offset) + 1, 0) FROM log "
                        "WHERE topic = ? AND partition = ?", (tp.topic, tp.partition)
                    ).fetchone()
                following[tp] = offset + 1
                offsets.append(offset)
                self._conn.execute(
                    "INSERT INTO log VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (tp.topic, tp.partition, offset, message.key, message.value,
                     _encode_headers(message.headers), message.timestamp))
        return offsets

    def read(self, partition: TopicPartition, offset: int, limit: int) -> list[Message]:
        """Up to ``limit`` messages from ``offset`` on."""
        with translated_errors("reading the log"):
            rows = self._conn.execute(
                "SELECT offset, key, value, headers, timestamp FROM log WHERE topic = ? "
                "AND partition = ? AND offset >= ? ORDER BY offset LIMIT ?",
                (partition.topic, partition.partition, offset, limit)).fetchall()
        return [build_message(partition.topic, key, value, _decode_headers(headers), stamp,
                              partition.partition, number)
                for number, key, value, headers, stamp in rows]

    def offset_range(self, partition: TopicPartition) -> tuple[int, int] | None:
        """(first, next) offset; ``None`` for a partition that does not exist."""
        with translated_errors("reading the log's range"):
            found = self._conn.execute("SELECT partitions FROM topics WHERE name = ?",
                                       (partition.topic,)).fetchone()
            if found is None or not 0 <= partition.partition < found[0]:
                return None
            low, high = self._conn.execute(
                "SELECT MIN(offset), MAX(offset) FROM log WHERE topic = ? AND partition = ?",
                (partition.topic, partition.partition)).fetchone()
        return (0, 0) if low is None else (low, high + 1)

    def commit(self, group: str, offsets: Mapping[TopicPartition, int]) -> None:
        """Store the group's positions."""
        with self._write("committing offsets"):
            self._conn.executemany(
                "INSERT INTO commits VALUES (?, ?, ?, ?) ON CONFLICT (grp, topic, partition) "
                "DO UPDATE SET offset = excluded.offset",
                [(group, tp.topic, tp.partition, offset) for tp, offset in offsets.items()])

    def committed(self, group: str,
                  partitions: Sequence[TopicPartition]) -> dict[TopicPartition, int | None]:
        """The group's positions of ``partitions``."""
        with translated_errors("reading committed offsets"):
            stored = {TopicPartition(topic, number): offset
                      for topic, number, offset in self._conn.execute(
                          "SELECT topic, partition, offset FROM commits WHERE grp = ?",
                          (group,))}
        return {tp: stored.get(tp) for tp in partitions}

    def group_store(self, group: str) -> GroupStore:
        """The kit's SQL group store on this connection."""
        return SqlGroupStore(self._conn, group, transaction=write_transaction,
                             translated=translated_errors)

    def kv_get(self, namespace: str, key: str) -> bytes | None:
        """The value of ``key``."""
        with translated_errors("reading the key/value store"):
            row = self._conn.execute("SELECT value FROM kv WHERE namespace = ? AND key = ?",
                                     (namespace, key)).fetchone()
        return None if row is None else bytes(row[0])

    def kv_put(self, namespace: str, items: Mapping[str, bytes | None]) -> None:
        """Write (or, for ``None``, delete) every item in one transaction."""
        with self._write("writing the key/value store"):
            for key, value in items.items():
                if value is None:
                    self._conn.execute("DELETE FROM kv WHERE namespace = ? AND key = ?",
                                       (namespace, key))
                else:
                    self._conn.execute(
                        "INSERT INTO kv VALUES (?, ?, ?) ON CONFLICT (namespace, key) "
                        "DO UPDATE SET value = excluded.value", (namespace, key, value))

    def kv_scan(self, namespace: str, prefix: str) -> Iterator[tuple[str, bytes]]:
        """Keys starting with ``prefix``, in key order."""
        with translated_errors("scanning the key/value store"):
            rows = self._conn.execute(
                "SELECT key, value FROM kv WHERE namespace = ? AND substr(key, 1, ?) = ? "
                "ORDER BY key", (namespace, len(prefix), prefix)).fetchall()
        return iter([(key, bytes(value)) for key, value in rows])

    def close(self) -> None:
        """Close the connection."""
        self._conn.close()


class SqliteLogTransport(LogTransport):
    """The ``sqlite-log`` transport: a durable queue in one SQLite file."""

    name: ClassVar[str] = "sqlite-log"
    config_def: ClassVar[ConfigDef] = LOG_CONFIG_DEF.merge(
        ConfigDef()
        .define("path", ConfigType.STRING, None, validators=[NonEmptyString()],
                documentation="The database file (created if missing).")
        .define("busy.timeout.ms", ConfigType.INT, 10_000, validators=[Range(min=0)],
                documentation="How long a write waits for another writer's lock."))
    persistent: ClassVar[bool] = True
    cross_process: ClassVar[bool] = True

    def open_store(self) -> SqliteLogStore:
        """A store on a connection of its own."""
        return SqliteLogStore(Path(self.config["path"]).expanduser(),
                              self.config["busy.timeout.ms"])


def conformance_profile(workdir: Path) -> TransportProfile:
    """The conformance profile: a database file per case, short group timeouts."""
    return TransportProfile(config={"path": f"{TMP_PLACEHOLDER}/queue.db",
                                    "session.timeout.ms": 2000, "heartbeat.interval.ms": 100})
