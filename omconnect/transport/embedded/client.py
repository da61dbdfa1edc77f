"""The embedded transport's database file: connections and transactions.

Every connection runs in autocommit mode; writes go through :func:`write_transaction`
(``BEGIN IMMEDIATE``), which takes SQLite's write lock up front so two processes never
deadlock upgrading a read to a write, and waits up to ``busy_timeout_ms`` for it.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from omconnect.errors import ConfigError, TransportError
from omconnect.transport.embedded.errors import translated_errors
from omconnect.transport.embedded.schema import SCHEMA_VERSION, create_schema

__all__ = ["Database", "write_transaction"]

@contextmanager
def write_transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """``BEGIN IMMEDIATE`` … ``COMMIT``, rolled back if the block raises."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    try:
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


_SIGNALS: dict[str, weakref.WeakSet[threading.Event]] = {}
_SIGNALS_LOCK = threading.Lock()


class Database:
    """The database of one data directory, and how to connect to it.

    Opening it creates the directory and the tables when missing and switches the file
    to WAL mode (readers never block the writer, nor the writer readers).

    Args:
        directory: The data directory (``embedded.path``).
        synchronous: SQLite's ``synchronous`` setting, ``"full"`` or ``"normal"``.
        busy_timeout_ms: How long to wait for another writer to finish.

    Raises:
        ConfigError: The directory cannot be created or written.
        TransportError: The file is not a usable database.

    """

    FILE_NAME = "omconnect.db"

    def __init__(self, directory: Path, *, synchronous: str, busy_timeout_ms: int) -> None:
        self.directory = directory
        self.file = directory / self.FILE_NAME
        self.synchronous = synchronous.upper()
        self.busy_timeout_ms = busy_timeout_ms
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ConfigError(f"cannot create the data directory {str(directory)!r}: "
                              f"{exc.strerror}; set embedded.path to a writable directory",
                              key="embedded.path") from exc
        if not os.access(directory, os.W_OK):
            raise ConfigError(f"the data directory {str(directory)!r} is not writable; set "
                              "embedded.path to a writable directory", key="embedded.path")
        key = str(self.file.resolve())
        with _SIGNALS_LOCK:
            self.signals = _SIGNALS.setdefault(key, weakref.WeakSet())
        self._initialise()

    def connect(self) -> sqlite3.Connection:
        """A new connection (autocommit; usable from any one thread at a time)."""
        with translated_errors(f"opening {self.file}"):
            conn = sqlite3.connect(self.file, timeout=self.busy_timeout_ms / 1000,
                                   isolation_level=None, check_same_thread=False)
            conn.execute(f"PRAGMA synchronous = {self.synchronous}")
            conn.execute("PRAGMA temp_store = MEMORY")
            conn.execute("PRAGMA cache_size = -16384")
        return conn

    def notify(self) -> None:
        """Wake every consumer of this database in this process (new messages)."""
        for signal in list(self.signals):
            signal.set()

    def _initialise(self) -> None:
        conn = self.connect()
        try:
            with translated_errors(f"opening {self.file}"):
                mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
                if str(mode).lower() != "wal":
                    mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
                if str(mode).lower() != "wal":
                    raise TransportError(
                        f"embedded transport: {self.file} cannot use WAL mode (got {mode}); "
                        "put embedded.path on a local filesystem")
                with write_transaction(conn):
                    version = create_schema(conn)
            if version > SCHEMA_VERSION:
                raise TransportError(
                    f"embedded transport: {self.file} has schema version {version}, newer "
                    f"than this omconnect understands ({SCHEMA_VERSION}); upgrade omconnect")
        finally:
            conn.close()
