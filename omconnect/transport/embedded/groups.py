"""Consumer groups of the embedded transport, shared by every process using the database.

The protocol is :mod:`omconnect.transport.kit.grouping`'s and its state lives in the
kit's SQL tables (:mod:`omconnect.transport.kit.sql_groups`: ``group_members``, one row
per live consumer, and ``group_owners``, which member reads which partition), created by
this database's schema; committed positions are in ``group_offsets``. Each step is one
``BEGIN IMMEDIATE`` transaction, so members in different processes see each other's
changes atomically.

Liveness uses the wall clock (milliseconds since the epoch), the one clock all processes
of a machine share: a member whose last heartbeat is older than its session timeout is
evicted by the next member that syncs, and its partitions move. A consumer heartbeats from
a thread of its own (:class:`Heartbeat`) as long as it keeps polling at least every
``max.poll.interval.ms``, so a slow batch does not cost it its partitions, while a killed
process stops heart-beating and loses them after its session timeout.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable

from omconnect.transport.embedded.client import Database, write_transaction
from omconnect.transport.embedded.errors import translated_errors
from omconnect.transport.kit.sql_groups import SqlGroupStore, now_ms

__all__ = ["Heartbeat", "group_store"]


def group_store(conn: sqlite3.Connection, group: str) -> SqlGroupStore:
    """One group's membership in the database, through the consumer's connection (the
    kit's :class:`~omconnect.transport.kit.sql_groups.SqlGroupStore` on this database's
    tables, each step one ``BEGIN IMMEDIATE`` transaction).
    """
    return SqlGroupStore(conn, group, transaction=write_transaction,
                         translated=translated_errors)


class Heartbeat:
    """A thread that keeps one member alive while its consumer keeps polling.

    Args:
        database: The database.
        group: The member's group.
        member: The member id.
        interval: Seconds between heartbeats.
        alive: Whether the consumer still counts as alive: it is polling, or its last
            poll ended less than ``max.poll.interval.ms`` ago (so a stuck consumer stops
            heart-beating, is evicted, and its partitions move); ``None`` when the
            consumer is gone, which ends the thread.

    """

    def __init__(
        self,
        database: Database,
        *,
        group: str,
        member: str,
        interval: float,
        alive: Callable[[], bool | None],
    ) -> None:
        self._db = database
        self._group = group
        self._member = member
        self._interval = interval
        self._alive = alive
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True,
                                        name=f"omconnect-heartbeat-{member}")

    def start(self) -> None:
        """Start heart-beating (once)."""
        if not self._thread.is_alive() and not self._stop.is_set():
            self._thread.start()

    def stop(self) -> None:
        """Stop heart-beating. Idempotent."""
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout=1.0)

    def _run(self) -> None:
        conn: sqlite3.Connection | None = None
        try:
            while not self._stop.wait(self._interval):
                alive = self._alive()
                if alive is None:
                    return
                if not alive:
                    continue
                try:
                    if conn is None:
                        conn = self._db.connect()
                    conn.execute("UPDATE group_members SET heartbeat_ms = ? "
                                 "WHERE grp = ? AND member = ?",
                                 (now_ms(), self._group, self._member))
                except Exception:
                    pass  # timeout bounds how long a broken database goes unnoticed
        finally:
            if conn is not None:
                conn.close()
