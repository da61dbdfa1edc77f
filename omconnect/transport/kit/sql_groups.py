"""Consumer groups kept in a SQL database: :class:`SqlGroupStore`, the
:class:`~omconnect.transport.kit.grouping.GroupStore` of any DB-API database with
``INSERT ... ON CONFLICT`` (SQLite 3.24+, PostgreSQL 9.5+).

The state is two tables (:data:`GROUP_TABLES`) next to the transport's own table of
topics (any table with a name and a partition count, named by ``topics_table``): one row
per live member with its topics, session timeout and last heartbeat, and one row per
owned partition. Each step runs in one write transaction that the store's owner provides,
so members in different processes see each other's changes atomically. Liveness uses the
wall clock (milliseconds since the epoch), the clock every process of a machine shares.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator, Set
from contextlib import AbstractContextManager
from typing import Any

from omconnect.records import TopicPartition
from omconnect.transport.kit.clock import now_ms
from omconnect.transport.kit.grouping import GroupStore, GroupView

__all__ = ["GROUP_TABLES", "SqlGroupStore", "now_ms"]

GROUP_TABLES = (
    "CREATE TABLE IF NOT EXISTS group_members (grp TEXT NOT NULL, member TEXT NOT NULL, "
    "topics TEXT NOT NULL, session_timeout_ms INTEGER NOT NULL, heartbeat_ms INTEGER NOT "
    "NULL, joined_ms INTEGER NOT NULL, PRIMARY KEY (grp, member))",
    "CREATE TABLE IF NOT EXISTS group_owners (grp TEXT NOT NULL, topic TEXT NOT NULL, "
    "partition INTEGER NOT NULL, member TEXT NOT NULL, PRIMARY KEY (grp, topic, partition))",
)
"""The statements that create the two tables (idempotent)."""



class SqlGroupStore(GroupStore):
    """One group's membership, through one connection (used from one thread at a time).

    Args:
        conn: A DB-API connection.
        group: The group.
        transaction: Opens a write transaction on ``conn`` (commits when the block ends,
            rolls back when it raises) and yields the connection or a cursor to run
            statements on; for SQLite, ``BEGIN IMMEDIATE`` so two processes never
            deadlock upgrading a read.
        placeholder: The connection's parameter marker (``?`` for sqlite3, ``%s`` for
            psycopg).
        topics_table: ``<table>(<name column>, <partitions column>)`` holding every
            topic's partition count.
        translated: Wraps each step to translate the driver's errors (given the action).

    """

    def __init__(
        self,
        conn: Any,
        group: str,
        *,
        transaction: Callable[[Any], AbstractContextManager[Any]],
        placeholder: str = "?",
        topics_table: str = "topics(name, partitions)",
        translated: Callable[..., AbstractContextManager[None]] | None = None,
    ) -> None:
        self._conn = conn
        self._group = group
        self._transaction = transaction
        self._p = placeholder
        table, _, columns = topics_table.partition("(")
        name, partitions = (c.strip() for c in columns.rstrip(")").split(","))
        self._topics_sql = f"SELECT {name}, {partitions} FROM {table.strip()}"
        self._translated = translated

    @contextlib.contextmanager
    def _step(self, action: str) -> Iterator[Any]:
        """A write transaction for one step, its errors translated."""
        with contextlib.ExitStack() as stack:
            if self._translated is not None:
                stack.enter_context(self._translated(action, group=self._group))
            yield stack.enter_context(self._transaction(self._conn))

    def _sql(self, statement: str) -> str:
        return statement.replace("?", self._p) if self._p != "?" else statement

    def join(self, member: str, topics: frozenset[str], session_timeout_ms: int) -> None:
        """Register ``member`` with its topics (counts as a heartbeat)."""
        now = now_ms()
        with self._step("joining the consumer group") as db:
            db.execute(self._sql(
                "INSERT INTO group_members (grp, member, topics, session_timeout_ms, "
                "heartbeat_ms, joined_ms) VALUES (?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (grp, member) DO UPDATE SET topics = excluded.topics, "
                "session_timeout_ms = excluded.session_timeout_ms, "
                "heartbeat_ms = excluded.heartbeat_ms"),
                (self._group, member, json.dumps(sorted(topics)), session_timeout_ms, now, now))

    def sync(self, member: str) -> GroupView | None:
        """Evict expired members, heartbeat ``member``, and read the group."""
        now = now_ms()
        group, sql = self._group, self._sql
        with self._step("syncing with the consumer group") as db:
            expired = [row[0] for row in _rows(db, sql(
                "SELECT member FROM group_members "
                "WHERE grp = ? AND heartbeat_ms + session_timeout_ms < ?"), (group, now))]
            for gone in expired:
                self._remove(db, gone)
            beat = db.execute(sql("UPDATE group_members SET heartbeat_ms = ? "
                                  "WHERE grp = ? AND member = ?"), (now, group, member))
            if (beat if beat is not None else db).rowcount == 0:
                return None
            members = {m: frozenset(json.loads(topics)) for m, topics in _rows(db, sql(
                "SELECT member, topics FROM group_members WHERE grp = ?"), (group,))}
            wanted = frozenset().union(*members.values())
            partitions = {name: count for name, count in _rows(db, self._topics_sql, ())
                          if name in wanted}
            owners = {TopicPartition(topic, partition): owner
                      for topic, partition, owner in _rows(db, sql(
                          "SELECT topic, partition, member FROM group_owners WHERE grp = ?"),
                          (group,))}
        return GroupView(members=members, partitions=partitions, owners=owners)

    def exchange(
        self, member: str, release: Set[TopicPartition], claim: Set[TopicPartition]
    ) -> set[TopicPartition]:
        """Free ``release``; take the unowned partitions of ``claim`` (none if ``member``
        was evicted meanwhile).
        """
        group, sql = self._group, self._sql
        with self._step("claiming partitions") as db:
            for tp in release:
                db.execute(sql("DELETE FROM group_owners WHERE grp = ? AND topic = ? AND "
                               "partition = ? AND member = ?"),
                           (group, tp.topic, tp.partition, member))
            alive = _rows(db, sql("SELECT 1 FROM group_members WHERE grp = ? AND member = ?"),
                          (group, member))
            if not alive:
                db.execute(sql("DELETE FROM group_owners WHERE grp = ? AND member = ?"),
                           (group, member))
                return set()
            for tp in claim:
                db.execute(sql("INSERT INTO group_owners (grp, topic, partition, member) "
                               "VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING"),
                           (group, tp.topic, tp.partition, member))
            owned = {TopicPartition(topic, partition) for topic, partition in _rows(db, sql(
                "SELECT topic, partition FROM group_owners WHERE grp = ? AND member = ?"),
                (group, member))}
        return owned & set(claim)

    def leave(self, member: str) -> None:
        """Remove ``member`` and free its partitions."""
        with self._step("leaving the consumer group") as db:
            self._remove(db, member)

    def heartbeat(self, member: str) -> None:
        """Stamp ``member``'s heartbeat (for a heartbeat thread between polls)."""
        with self._step("heart-beating") as db:
            db.execute(self._sql("UPDATE group_members SET heartbeat_ms = ? "
                                 "WHERE grp = ? AND member = ?"),
                       (now_ms(), self._group, member))

    def _remove(self, db: Any, member: str) -> None:
        sql = self._sql
        db.execute(sql("DELETE FROM group_members WHERE grp = ? AND member = ?"),
                   (self._group, member))
        db.execute(sql("DELETE FROM group_owners WHERE grp = ? AND member = ?"),
                   (self._group, member))


def _rows(db: Any, statement: str, parameters: tuple[Any, ...]) -> list[Any]:
    """Every row of a query, on a connection (sqlite3: ``execute`` returns a cursor) or a
    cursor (psycopg: ``execute`` returns ``None``, the cursor holds the rows).
    """
    cursor = db.execute(statement, parameters)
    return list((cursor if cursor is not None else db).fetchall())
