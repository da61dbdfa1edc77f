"""The embedded transport's tables, in one SQLite database file.

Records are stored in chunks (runs of consecutive records of one partition, packed as
:mod:`~omconnect.transport.embedded.codec` describes), one chunk per ``log`` row, keyed by
a single integer::

    id = partition_id << OFFSET_BITS | offset of the chunk's last record

so a partition is a contiguous range of the table's rowid B-tree: appending is an insert
at the end of that range; the chunks holding offsets from ``n`` on are one range scan
from ``id >= partition_id << OFFSET_BITS | n`` (the first row returned is the chunk that
contains ``n``); the next offset of a partition is one seek (``max(id)`` below the range's
end). ``partition_id`` comes from ``partitions`` (AUTOINCREMENT: a deleted topic's ids are
never reused), which bounds a database to 2**23 partitions ever created and a partition
to 2**40 records.

``meta`` holds the schema version and ``topics_version``, which every change to the set
of topics increments, so producers and consumers can cache the topic catalog and check it
with one read.
"""

from __future__ import annotations

import sqlite3

__all__ = [
    "MAX_OFFSET",
    "OFFSET_BITS",
    "SCHEMA_VERSION",
    "create_schema",
]

SCHEMA_VERSION = 1
OFFSET_BITS = 40
MAX_OFFSET = (1 << OFFSET_BITS) - 1

_DDL = """
CREATE TABLE IF NOT EXISTS meta (
    name  TEXT PRIMARY KEY,
    value INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS topics (
    name       TEXT PRIMARY KEY,
    partitions INTEGER NOT NULL,
    config     TEXT NOT NULL DEFAULT '{}',
    created_ms INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS partitions (
    id        INTEGER PRIMARY KEY AUTOINCREMENT,
    topic     TEXT NOT NULL,
    partition INTEGER NOT NULL,
    UNIQUE (topic, partition)
);

CREATE TABLE IF NOT EXISTS log (
    id    INTEGER PRIMARY KEY,  -- partition_id << 40 | offset of the chunk's last record
    count INTEGER NOT NULL,     -- records in the chunk: offsets id - count + 1 .. id
    data  BLOB NOT NULL         -- the records, packed as codec.py describes
);

CREATE TABLE IF NOT EXISTS group_members (
    grp                TEXT NOT NULL,
    member             TEXT NOT NULL,
    topics             TEXT NOT NULL,   -- JSON list
    session_timeout_ms INTEGER NOT NULL,
    heartbeat_ms       INTEGER NOT NULL,
    joined_ms          INTEGER NOT NULL,
    PRIMARY KEY (grp, member)
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS group_owners (
    grp       TEXT NOT NULL,
    topic     TEXT NOT NULL,
    partition INTEGER NOT NULL,
    member    TEXT NOT NULL,
    PRIMARY KEY (grp, topic, partition)
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS group_offsets (
    grp          TEXT NOT NULL,
    topic        TEXT NOT NULL,
    partition    INTEGER NOT NULL,
    next_offset  INTEGER NOT NULL,
    committed_ms INTEGER NOT NULL,
    PRIMARY KEY (grp, topic, partition)
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS kv (
    namespace TEXT NOT NULL,
    key       TEXT NOT NULL,
    value     BLOB NOT NULL,
    PRIMARY KEY (namespace, key)
) WITHOUT ROWID;

INSERT OR IGNORE INTO meta (name, value) VALUES ('topics_version', 0);
"""


def create_schema(conn: sqlite3.Connection) -> int:
    """Create missing tables (inside the caller's write transaction).

    Returns:
        The schema version the database was made with (``SCHEMA_VERSION`` when new).

    """
    for statement in _DDL.split(";"):
        if statement.strip():
            conn.execute(statement)
    conn.execute("INSERT OR IGNORE INTO meta (name, value) VALUES ('schema_version', ?)",
                 (SCHEMA_VERSION,))
    row = conn.execute("SELECT value FROM meta WHERE name = 'schema_version'").fetchone()
    return int(row[0])
