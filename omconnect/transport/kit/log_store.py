"""The storage primitives of a log transport: :class:`LogStore`.

A log transport keeps each topic partition as a log of messages numbered from 0 by
offset, and a consumer group's committed positions beside it. A transport on a store
(a database, a key/value server, files) implements these primitives, and
:class:`~omconnect.transport.kit.log_transport.LogTransport` derives the whole Transport
SPI from them: the producer (futures, batching, back-pressure, flush and close,
per-message outcomes), the consumer (positions, groups, rebalance callbacks, assign and
seek, pause and resume, wakeup), the key/value store and the admin.

Each client of the transport opens a store of its own (:meth:`LogTransport.open_store`)
and uses it from one thread at a time, so a store may hold one connection and needs no
locking of its own.
"""

from __future__ import annotations

import abc
import threading
from collections.abc import Iterator, Mapping, Sequence

from omconnect.records import TopicPartition
from omconnect.transport.kit.grouping import GroupStore
from omconnect.transport.messages import Message

__all__ = ["LogStore"]


class LogStore(abc.ABC):
    """What a log transport's storage does; see the module docstring."""

    # -- topics ------------------------------------------------------------------------

    @abc.abstractmethod
    def create_topic(self, name: str, partitions: int) -> int:
        """Create topic ``name`` with ``partitions`` partitions unless it exists; return
        its partition count (the existing one when it existed).
        """

    @abc.abstractmethod
    def topics(self) -> dict[str, int]:
        """Every topic's partition count, by name."""

    @abc.abstractmethod
    def delete_topics(self, names: Sequence[str]) -> None:
        """Delete topics with their messages and committed positions; unknown names are
        ignored.
        """

    # -- the log ---------------------------------------------------------------------

    @abc.abstractmethod
    def append(self, messages: Sequence[tuple[TopicPartition, Message]]) -> list[int]:
        """Store ``messages`` (each with the partition it goes to; their topics exist)
        **atomically**: all of them, or none when this raises. Return the offset given to
        each, in order.

        Offsets of a partition are consecutive from 0, in the order given, and become
        visible to readers in offset order (TRANSPORT-74): a reader never sees an offset
        while a smaller one of the same partition is still to come, even with other
        writers appending at the same time (give out offsets and store the messages in
        one transaction).
        """

    @abc.abstractmethod
    def read(self, partition: TopicPartition, offset: int, limit: int) -> list[Message]:
        """Up to ``limit`` messages of ``partition`` from ``offset`` on, in offset order,
        with ``partition``, ``offset`` and ``timestamp`` set (empty when there are none or
        the topic does not exist).
        """

    @abc.abstractmethod
    def offset_range(self, partition: TopicPartition) -> tuple[int, int] | None:
        """(first offset kept, next offset) of ``partition``; ``None`` when the topic or
        the partition does not exist.
        """

    def wait(self, timeout: float, signal: threading.Event) -> None:
        """Block until new messages may have been stored, ``signal`` is set or
        ``timeout`` seconds passed. This default waits on ``signal`` (set in this process
        by every append and by ``wakeup``) for at most ``timeout``; a store that can be
        written by other processes overrides it to notice their writes too (a
        notification, a version number checked every so often).
        """
        signal.wait(timeout)

    # -- committed positions -----------------------------------------------------------

    @abc.abstractmethod
    def commit(self, group: str, offsets: Mapping[TopicPartition, int]) -> None:
        """Durably store ``offsets`` as ``group``'s committed positions (all or none)."""

    @abc.abstractmethod
    def committed(self, group: str,
                  partitions: Sequence[TopicPartition]) -> dict[TopicPartition, int | None]:
        """``group``'s committed position of each of ``partitions`` (``None``: none)."""

    # -- consumer groups ---------------------------------------------------------------

    @abc.abstractmethod
    def group_store(self, group: str) -> GroupStore:
        """Where ``group``'s membership lives (for a SQL database:
        :class:`~omconnect.transport.kit.sql_groups.SqlGroupStore` on this store's
        connection).
        """

    # -- the key/value store -------------------------------------------------------------

    @abc.abstractmethod
    def kv_get(self, namespace: str, key: str) -> bytes | None:
        """The value of ``key`` in ``namespace``, or ``None``."""

    @abc.abstractmethod
    def kv_put(self, namespace: str, items: Mapping[str, bytes | None]) -> None:
        """Store every item of ``namespace`` at once, durably; ``None`` deletes the key."""

    @abc.abstractmethod
    def kv_scan(self, namespace: str, prefix: str) -> Iterator[tuple[str, bytes]]:
        """Every (key, value) of ``namespace`` whose key starts with ``prefix``, in key
        order.
        """

    def close(self) -> None:
        """Release the store's connection. The default does nothing."""
