"""Creating, listing and deleting the embedded transport's topics."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Sequence

from omconnect.errors import IllegalStateError
from omconnect.transport.embedded.catalog import create_topic, delete_topic, list_topics
from omconnect.transport.embedded.client import Database, write_transaction
from omconnect.transport.embedded.errors import translated_errors
from omconnect.transport.kit.checks import check_topic_spec
from omconnect.transport.messages import TopicSpec
from omconnect.transport.spi import Admin

__all__ = ["EmbeddedAdmin"]


class EmbeddedAdmin(Admin):
    """Topic administration on a database; each call is one transaction. Safe to call
    from several threads.

    Args:
        database: The database.

    """

    def __init__(self, database: Database) -> None:
        self._conn: sqlite3.Connection | None = database.connect()
        self._lock = threading.Lock()

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            raise IllegalStateError("the admin is closed")
        return self._conn

    def create_topics(self, topics: Sequence[TopicSpec]) -> None:
        """Create ``topics``; a topic that exists is left as it is (its partition count
        is not changed).

        Raises:
            ValueError: A spec has no name or a partition count outside 1 to 1024.

        """
        for spec in topics:
            check_topic_spec(spec)
        with self._lock, translated_errors("creating topics"), \
                write_transaction(self._connection()) as conn:
            for spec in topics:
                create_topic(conn, spec.name, spec.partitions, spec.config)

    def list_topics(self) -> dict[str, TopicSpec]:
        """Every topic, by name."""
        with self._lock, translated_errors("listing topics"):
            return list_topics(self._connection())

    def delete_topics(self, names: Sequence[str]) -> None:
        """Delete topics with their messages and group positions; unknown names are
        ignored.
        """
        with self._lock, translated_errors("deleting topics"), \
                write_transaction(self._connection()) as conn:
            for name in names:
                delete_topic(conn, name)

    def close(self) -> None:
        """Close the connection. Idempotent."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
