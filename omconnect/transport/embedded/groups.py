"""Consumer groups of the embedded transport, shared by every process using the database.

The protocol is :mod:`omconnect.transport.kit.grouping`'s; this module keeps its state in
three tables: ``group_members`` (one row per live consumer, with its topics, session
timeout and last heartbeat), ``group_owners`` (which member reads which partition) and
``group_offsets`` (committed positions). Each step is one ``BEGIN IMMEDIATE``
transaction, so members in different processes see each other's changes atomically.

Liveness uses the wall clock (milliseconds since the epoch), the one clock all processes
of a machine share: a member whose last heartbeat is older than its session timeout is
evicted by the next member that syncs, and its partitions move. A consumer heartbeats from
a thread of its own (:class:`Heartbeat`) as long as it keeps polling at least every
``max.poll.interval.ms``, so a slow batch does not cost it its partitions, while a killed
process stops heart-beating and loses them after its session timeout.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Callable, Set

from omconnect.records import TopicPartition
from omconnect.transport.embedded.client import Database, write_transaction
from omconnect.transport.embedded.errors import translated_errors
from omconnect.transport.kit.grouping import GroupStore, GroupView

__all__ = ["Heartbeat", "SqliteGroupStore"]


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


class SqliteGroupStore(GroupStore):
    """One group's membership in the database, through the consumer's connection.

    Args:
        conn: The consumer's connection (used only from the consumer's thread).
        group: The group.

    """

    def __init__(self, conn: sqlite3.Connection, group: str) -> None:
        self._conn = conn
        self._group = group

    def join(self, member: str, topics: frozenset[str], session_timeout_ms: int) -> None:
        """Register ``member`` with its topics (counts as a heartbeat)."""
        now = _now_ms()
        with translated_errors("joining the consumer group", group=self._group), \
                write_transaction(self._conn) as conn:
            conn.execute(
                "INSERT INTO group_members (grp, member, topics, session_timeout_ms, "
                "heartbeat_ms, joined_ms) VALUES (?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (grp, member) DO UPDATE SET topics = excluded.topics, "
                "session_timeout_ms = excluded.session_timeout_ms, "
                "heartbeat_ms = excluded.heartbeat_ms",
                (self._group, member, json.dumps(sorted(topics)), session_timeout_ms, now, now))

    def sync(self, member: str) -> GroupView | None:
        """Evict expired members, heartbeat ``member``, and read the group."""
        now = _now_ms()
        group = self._group
        with translated_errors("syncing with the consumer group", group=group), \
                write_transaction(self._conn) as conn:
            expired = [row[0] for row in conn.execute(
                "SELECT member FROM group_members "
                "WHERE grp = ? AND heartbeat_ms + session_timeout_ms < ?", (group, now))]
            for gone in expired:
                self._remove(conn, gone)
            beat = conn.execute("UPDATE group_members SET heartbeat_ms = ? "
                                "WHERE grp = ? AND member = ?", (now, group, member))
            if beat.rowcount == 0:
                return None
            members = {m: frozenset(json.loads(topics)) for m, topics in conn.execute(
                "SELECT member, topics FROM group_members WHERE grp = ?", (group,))}
            wanted = frozenset().union(*members.values())
            partitions = {name: count for name, count in conn.execute(
                "SELECT name, partitions FROM topics") if name in wanted}
            owners = {TopicPartition(topic, partition): owner
                      for topic, partition, owner in conn.execute(
                          "SELECT topic, partition, member FROM group_owners WHERE grp = ?",
                          (group,))}
        return GroupView(members=members, partitions=partitions, owners=owners)

    def exchange(
        self, member: str, release: Set[TopicPartition], claim: Set[TopicPartition]
    ) -> set[TopicPartition]:
        """Free ``release``; take the unowned partitions of ``claim`` (none if ``member``
        was evicted meanwhile).
        """
        group = self._group
        with translated_errors("claiming partitions", group=group), \
                write_transaction(self._conn) as conn:
            conn.executemany(
                "DELETE FROM group_owners WHERE grp = ? AND topic = ? AND partition = ? "
                "AND member = ?", [(group, tp.topic, tp.partition, member) for tp in release])
            alive = conn.execute("SELECT 1 FROM group_members WHERE grp = ? AND member = ?",
                                 (group, member)).fetchone()
            if alive is None:
                conn.execute("DELETE FROM group_owners WHERE grp = ? AND member = ?",
                             (group, member))
                return set()
            conn.executemany(
                "INSERT OR IGNORE INTO group_owners (grp, topic, partition, member) "
                "VALUES (?, ?, ?, ?)", [(group, tp.topic, tp.partition, member) for tp in claim])
            owned = {TopicPartition(topic, partition) for topic, partition in conn.execute(
                "SELECT topic, partition FROM group_owners WHERE grp = ? AND member = ?",
                (group, member))}
        return owned & set(claim)

    def leave(self, member: str) -> None:
        """Remove ``member`` and free its partitions."""
        with translated_errors("leaving the consumer group", group=self._group), \
                write_transaction(self._conn) as conn:
            self._remove(conn, member)

    def _remove(self, conn: sqlite3.Connection, member: str) -> None:
        conn.execute("DELETE FROM group_members WHERE grp = ? AND member = ?",
                     (self._group, member))
        conn.execute("DELETE FROM group_owners WHERE grp = ? AND member = ?",
                     (self._group, member))


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
                                 (_now_ms(), self._group, self._member))
                except Exception:
                    pass  # timeout bounds how long a broken database goes unnoticed
        finally:
            if conn is not None:
                conn.close()
