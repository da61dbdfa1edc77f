"""The embedded transport's topics: creating, deleting, and a cached catalog of them."""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Mapping

from omconnect.transport.embedded.schema import OFFSET_BITS
from omconnect.transport.messages import TopicSpec

__all__ = ["Catalog", "create_topic", "delete_topic", "list_topics", "partition_range"]


class Catalog:
    """Partition ids by topic, cached and re-read only when ``topics_version`` changed."""

    def __init__(self) -> None:
        self.version = -1
        self.partition_ids: dict[str, tuple[int, ...]] = {}

    def refresh(self, conn: sqlite3.Connection) -> None:
        """Re-read the catalog if a topic was created or deleted since the last read."""
        row = conn.execute("SELECT value FROM meta WHERE name = 'topics_version'").fetchone()
        if row[0] == self.version:
            return
        ids: dict[str, list[int]] = {}
        for topic, pid in conn.execute(
                "SELECT topic, id FROM partitions ORDER BY topic, partition"):
            ids.setdefault(topic, []).append(pid)
        self.partition_ids = {topic: tuple(pids) for topic, pids in ids.items()}
        self.version = row[0]

    def invalidate(self) -> None:
        """Forget the cache (after a rolled-back transaction that changed topics)."""
        self.version = -1
        self.partition_ids = {}


def partition_range(partition_id: int) -> tuple[int, int]:
    """The ``log.id`` range [start, end) holding partition ``partition_id``."""
    start = partition_id << OFFSET_BITS
    return start, start + (1 << OFFSET_BITS)


def create_topic(
    conn: sqlite3.Connection,
    name: str,
    partitions: int,
    config: Mapping[str, str] | None = None,
) -> bool:
    """Create topic ``name`` unless it exists (inside a write transaction).

    Returns:
        Whether it was created.

    """
    cursor = conn.execute(
        "INSERT OR IGNORE INTO topics (name, partitions, config, created_ms) "
        "VALUES (?, ?, ?, ?)",
        (name, partitions, json.dumps(dict(config or {}), sort_keys=True),
         time.time_ns() // 1_000_000))
    if cursor.rowcount == 0:
        return False
    conn.executemany("INSERT INTO partitions (topic, partition) VALUES (?, ?)",
                     [(name, p) for p in range(partitions)])
    _bump_version(conn)
    return True


def delete_topic(conn: sqlite3.Connection, name: str) -> bool:
    """Delete topic ``name``, its messages and every group's positions in it (inside a
    write transaction).

    Returns:
        Whether it existed.

    """
    pids = [row[0] for row in conn.execute("SELECT id FROM partitions WHERE topic = ?", (name,))]
    for pid in pids:
        conn.execute("DELETE FROM log WHERE id >= ? AND id < ?", partition_range(pid))
    conn.execute("DELETE FROM partitions WHERE topic = ?", (name,))
    conn.execute("DELETE FROM group_offsets WHERE topic = ?", (name,))
    conn.execute("DELETE FROM group_owners WHERE topic = ?", (name,))
    existed = conn.execute("DELETE FROM topics WHERE name = ?", (name,)).rowcount > 0
    if existed:
        _bump_version(conn)
    return existed


def list_topics(conn: sqlite3.Connection) -> dict[str, TopicSpec]:
    """Every topic, by name."""
    return {name: TopicSpec(name, partitions, json.loads(config))
            for name, partitions, config in conn.execute(
                "SELECT name, partitions, config FROM topics ORDER BY name")}


def _bump_version(conn: sqlite3.Connection) -> None:
    conn.execute("UPDATE meta SET value = value + 1 WHERE name = 'topics_version'")
