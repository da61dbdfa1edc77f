"""The embedded transport's key/value store (where the runtime keeps source offsets).

One table, ``kv``, keyed by (namespace, key). A write is one ``BEGIN IMMEDIATE``
transaction, committed before it returns, so it survives the process being killed (and,
with ``synchronous=full``, the machine losing power); the last committed write wins,
whichever process made it.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator, Mapping

from omconnect.errors import IllegalStateError
from omconnect.transport.embedded.client import Database, write_transaction
from omconnect.transport.embedded.errors import translated_errors
from omconnect.transport.kit.log_kv_store import checked_items
from omconnect.transport.spi import KeyValueStore

__all__ = ["EmbeddedKeyValueStore"]


class EmbeddedKeyValueStore(KeyValueStore):
    """The store ``namespace`` of a database. Safe to call from several threads.

    Args:
        database: The database.
        namespace: The store's name.

    """

    def __init__(self, database: Database, namespace: str) -> None:
        self._conn: sqlite3.Connection | None = database.connect()
        self._namespace = namespace
        self._lock = threading.Lock()

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            raise IllegalStateError("the key/value store is closed")
        return self._conn

    def get(self, key: str) -> bytes | None:
        """The value stored under ``key``, or ``None``."""
        with self._lock, translated_errors("reading the key/value store", key=key):
            row = self._connection().execute(
                "SELECT value FROM kv WHERE namespace = ? AND key = ?",
                (self._namespace, key)).fetchone()
        return None if row is None else bytes(row[0])

    def put_many(self, items: Mapping[str, bytes | None]) -> None:
        """Store every item in one transaction; a ``None`` value deletes the key."""
        checked = checked_items(items)
        if not checked:
            return
        upserts = [(self._namespace, k, v) for k, v in checked.items() if v is not None]
        deletes = [(self._namespace, k) for k, v in checked.items() if v is None]
        with self._lock, translated_errors("writing the key/value store"), \
                write_transaction(self._connection()) as conn:
            conn.executemany("INSERT OR REPLACE INTO kv (namespace, key, value) "
                             "VALUES (?, ?, ?)", upserts)
            conn.executemany("DELETE FROM kv WHERE namespace = ? AND key = ?", deletes)

    def scan(self, prefix: str = "") -> Iterator[tuple[str, bytes]]:
        """Every (key, value) whose key starts with ``prefix``, in key order."""
        found = []
        with self._lock, translated_errors("scanning the key/value store"):
            cursor = self._connection().execute(
                "SELECT key, value FROM kv WHERE namespace = ? AND key >= ? ORDER BY key",
                (self._namespace, prefix))
            for key, value in cursor:
                if not key.startswith(prefix):
                    break
                found.append((key, bytes(value)))
            cursor.close()
        return iter(found)

    def close(self) -> None:
        """Close the connection. Idempotent."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
