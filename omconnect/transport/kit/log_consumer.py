"""The consumer both in-core transports share, written once over a few storage primitives.

A subclass says how to read a partition from an offset, where a partition's log begins and
ends, how to store and load committed offsets, and how to wait for new messages; this
class does the rest: positions, group membership (:mod:`~omconnect.transport.kit.grouping`),
rebalance callbacks, ``assign``/``seek``, pause/resume, ``wakeup`` and a poll that visits
partitions in turn so none starves.
"""

from __future__ import annotations

import abc
import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from omconnect.errors import IllegalStateError, TransportError
from omconnect.records import TopicPartition
from omconnect.transport.kit.grouping import GroupMember
from omconnect.transport.messages import Message
from omconnect.transport.spi import Consumer, RebalanceListener, StartFrom

__all__ = ["LogConsumer"]

_log = logging.getLogger(__name__)

_NO_LISTENER = RebalanceListener()


class LogConsumer(Consumer):
    """A :class:`~omconnect.transport.Consumer` over partitioned logs.

    Args:
        group: The consumer group, or ``None`` for a consumer that only assigns.
        start: Where a partition with no committed position starts.
        member: This consumer's group membership (``None`` without a group).

    """

    def __init__(
        self, *, group: str | None, start: StartFrom, member: GroupMember | None
    ) -> None:
        self.group = group
        self._start = start
        self._member = member
        self._listener = _NO_LISTENER
        self._positions: dict[TopicPartition, int] = {}
        self._order: list[TopicPartition] = []
        self._paused: set[TopicPartition] = set()
        self._manual = False
        self._turn = 0
        self._signal = threading.Event()
        self._woken = False
        self._closed = False

    # -- what a storage provides -------------------------------------------------------

    @abc.abstractmethod
    def _read(self, partition: TopicPartition, offset: int, limit: int) -> list[Message]:
        """Up to ``limit`` messages of ``partition`` from ``offset`` on, in offset order
        (empty when the topic does not exist yet).
        """

    @abc.abstractmethod
    def _range(self, partition: TopicPartition) -> tuple[int, int] | None:
        """(first offset, next offset) of ``partition``; ``None`` when it does not exist."""

    @abc.abstractmethod
    def _store_commit(self, group: str, offsets: Mapping[TopicPartition, int]) -> None:
        """Durably store ``offsets`` as ``group``'s committed positions."""

    @abc.abstractmethod
    def _load_committed(
        self, group: str, partitions: Sequence[TopicPartition]
    ) -> dict[TopicPartition, int | None]:
        """``group``'s committed positions of ``partitions``."""

    @abc.abstractmethod
    def _wait(self, timeout: float) -> None:
        """Block up to ``timeout`` seconds or until ``self._signal`` is set (new messages
        were stored, or :meth:`wakeup` was called).
        """

    def _prepare(self) -> None:
        """Called at the start of every poll round, before rebalancing and reading (e.g.
        to refresh cached metadata).
        """

    def _release(self) -> None:
        """Release the storage's resources (on close)."""

    # -- the Consumer SPI -------------------------------------------------------------

    def subscribe(
        self, topics: Sequence[str], listener: RebalanceListener | None = None
    ) -> None:
        """Join the group for ``topics``; the group shares their partitions.

        Raises:
            IllegalStateError: The consumer has no group, or partitions were assigned
                with :meth:`assign` (the two do not mix).
            TypeError: ``topics`` is a single string rather than a list of names.

        """
        self._check_open()
        if isinstance(topics, str):
            raise TypeError(f"subscribe takes a list of topic names, got the string "
                            f"{topics!r}; write [{topics!r}]")
        if self._member is None:
            raise IllegalStateError(
                "subscribe needs a consumer group; open the consumer with a group, "
                "or use assign() to read partitions outside any group")
        if self._manual:
            raise IllegalStateError("this consumer reads assigned partitions; subscribe "
                                    "and assign cannot be mixed on one consumer")
        if not topics or not all(isinstance(t, str) and t for t in topics):
            raise ValueError(f"subscribe needs one or more non-empty topic names, got {topics!r}")
        self._listener = listener or _NO_LISTENER
        self._member.join(frozenset(topics))

    def poll(self, max_records: int, timeout: float) -> list[Message]:
        """Up to ``max_records`` messages, waiting at most ``timeout`` seconds for the first.

        Group rebalances happen here, on the caller's thread: the listener's
        ``on_partitions_revoked`` is called before partitions are given up, and
        ``on_partitions_assigned`` once new ones are claimed.
        """
        return self._poll_with(self._fetch, max_records, timeout)  # type: ignore[no-any-return]

    def poll_batch(self, max_records: int, timeout: float) -> Any:
        """:meth:`poll` as one Arrow batch, read with :meth:`_read_columns` (rebalances
        as in :meth:`poll`).
        """
        batch = self._poll_with(self._fetch_columns, max_records, timeout)
        if isinstance(batch, list):  # nothing read: the empty batch
            from omconnect.columnar.columns import empty_consumed_batch

            return empty_consumed_batch()
        return batch

    def _poll_with(self, fetch: Callable[[int], Any], max_records: int,
                   timeout: float) -> Any:
        self._check_open()
        if max_records < 1:
            raise ValueError(f"max_records must be at least 1, got {max_records}")
        deadline = time.monotonic() + max(0.0, timeout)
        try:
            while True:
                self._signal.clear()
                self._prepare()
                now = time.monotonic()
                if self._member is not None:
                    self._rebalance(now)
                batch = fetch(max_records)
                if batch or self._woken:
                    return batch
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return batch
                if self._member is not None:
                    remaining = min(remaining, self._member.seconds_to_sync(time.monotonic()))
                self._wait(remaining)
        finally:
            self._woken = False

    def commit(self, offsets: Mapping[TopicPartition, int]) -> None:
        """Store, for the group, the next offset to read on each partition.

        Raises:
            IllegalStateError: The consumer has no group.
            ValueError: An offset is not a non-negative integer.
            TransportError: The commit failed; nothing is committed.

        """
        self._check_open()
        group = self._require_group("commit")
        for tp, offset in offsets.items():
            if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
                raise ValueError(f"commit offset of {tp} must be a non-negative integer, "
                                 f"got {offset!r}")
        if offsets:
            self._store_commit(group, offsets)

    def committed(self, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, int | None]:
        """The group's committed offsets for ``partitions`` (``None`` where none)."""
        self._check_open()
        return self._load_committed(self._require_group("committed"), list(partitions))

    def assignment(self) -> frozenset[TopicPartition]:
        """The partitions this consumer currently reads."""
        return frozenset(self._positions)

    def assign(self, partitions: Iterable[TopicPartition]) -> None:
        """Read exactly ``partitions``, outside any group membership.

        Each starts at the group's committed position when the consumer has a group and
        one was committed, else at the ``start`` the consumer was opened with.

        Raises:
            IllegalStateError: The consumer subscribed (the two do not mix).

        """
        self._check_open()
        if self._member is not None and self._member.joined:
            raise IllegalStateError("this consumer subscribed to a group; subscribe and "
                                    "assign cannot be mixed on one consumer")
        wanted = list(dict.fromkeys(partitions))
        self._manual = True
        for tp in [tp for tp in self._positions if tp not in wanted]:
            self._forget(tp)
        self._take([tp for tp in wanted if tp not in self._positions])

    def seek(self, partition: TopicPartition, offset: int) -> None:
        """Read ``partition`` from ``offset`` on the next poll.

        Raises:
            IllegalStateError: The partition is not assigned to this consumer.
            ValueError: ``offset`` is negative.

        """
        self._check_open()
        if partition not in self._positions:
            raise IllegalStateError(f"cannot seek {partition}: it is not assigned to this "
                                    "consumer", topic=partition.topic,
                                    partition=partition.partition)
        if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
            raise ValueError(f"seek offset must be a non-negative integer, got {offset!r}")
        self._positions[partition] = offset

    def offset_range(self, partition: TopicPartition) -> tuple[int, int]:
        """(first offset kept, offset the next message will get) of ``partition``.

        Raises:
            TransportError: The topic or partition does not exist.

        """
        self._check_open()
        bounds = self._range(partition)
        if bounds is None:
            raise TransportError(f"partition {partition} does not exist",
                                 topic=partition.topic, partition=partition.partition)
        return bounds

    def position(self, partition: TopicPartition) -> int:
        """The offset the next poll reads ``partition`` from.

        Raises:
            IllegalStateError: The partition is not assigned to this consumer.

        """
        if partition not in self._positions:
            raise IllegalStateError(f"{partition} is not assigned to this consumer")
        return self._positions[partition]

    def pause(self, partitions: Iterable[TopicPartition]) -> None:
        """Stop returning messages of ``partitions`` until resumed; nothing is lost.

        Raises:
            IllegalStateError: A partition is not assigned to this consumer.

        """
        wanted = set(partitions)
        self._check_assigned(wanted, "pause")
        self._paused |= wanted

    def resume(self, partitions: Iterable[TopicPartition]) -> None:
        """Return messages of ``partitions`` again.

        Raises:
            IllegalStateError: A partition is not assigned to this consumer.

        """
        wanted = set(partitions)
        self._check_assigned(wanted, "resume")
        self._paused -= wanted

    def paused(self) -> frozenset[TopicPartition]:
        """The partitions paused now."""
        return frozenset(self._paused)

    def wakeup(self) -> None:
        """End a blocking :meth:`poll` early (it returns what it has). Any thread."""
        self._woken = True
        self._signal.set()

    def close(self) -> None:
        """Leave the group (calling the listener's ``on_partitions_revoked`` for what this
        consumer held, as Kafka does) and release resources, without committing.
        Idempotent.
        """
        if self._closed:
            return
        try:
            if self._member is not None:
                self._member.leave(self._revoke)
        finally:
            self._closed = True
            self._positions.clear()
            self._order.clear()
            self._release()

    # -- internals ------------------------------------------------------------------------


    def _require_group(self, action: str) -> str:
        if self.group is None:
            raise IllegalStateError(f"{action} needs a consumer group; this consumer was "
                                    "opened without one")
        return self.group

    def _check_assigned(self, partitions: set[TopicPartition], action: str) -> None:
        self._check_open()
        unknown = partitions - self._positions.keys()
        if unknown:
            names = ", ".join(sorted(str(tp) for tp in unknown))
            raise IllegalStateError(f"cannot {action} {names}: not assigned to this consumer")

    def _rebalance(self, now: float) -> None:
        assert self._member is not None
        claimed = self._member.maintain(now, self._revoke)
        if claimed:
            try:
                self._take(sorted(claimed))
            except BaseException:
                # Claimed but not readable (a reader or the committed offsets failed to
                # load): give them back, or they would stay owned and never be read.
                for tp in claimed:
                    self._forget(tp)
                self._member.give_back(claimed)
                raise
            self._listener.on_partitions_assigned(claimed)

    def _revoke(self, partitions: frozenset[TopicPartition]) -> None:
        try:
            self._listener.on_partitions_revoked(partitions)
        finally:
            for tp in partitions:
                self._forget(tp)

    def _take(self, partitions: Sequence[TopicPartition]) -> None:
        if not partitions:
            return
        committed = (self._load_committed(self.group, partitions)
                     if self.group is not None else {})
        for tp in partitions:
            position = committed.get(tp)
            if position is None:
                bounds = self._range(tp) or (0, 0)
                position = bounds[0] if self._start == "earliest" else bounds[1]
            self._positions[tp] = position
        self._order = sorted(self._positions)

    def _forget(self, partition: TopicPartition) -> None:
        self._positions.pop(partition, None)
        self._paused.discard(partition)
        self._order = sorted(self._positions)

    def _read_columns(self, partition: TopicPartition, offset: int, limit: int) -> Any:
        """Up to ``limit`` records of ``partition`` from ``offset`` as a consumed Arrow
        batch (see :func:`~omconnect.columnar.columns.consumed_schema`), or ``None`` when
        there are none. This default converts :meth:`_read`'s messages; a store that
        keeps columns overrides it.
        """
        messages = self._read(partition, offset, limit)
        if not messages:
            return None
        from omconnect.transport.message_batches import messages_to_batch

        return messages_to_batch(messages)

    def _fetch_columns(self, max_records: int) -> Any:
        """:meth:`_fetch`, in Arrow batches: one batch, or ``[]`` when nothing was read."""
        parts = self._fetch_parts(max_records, self._read_columns, len,
                                  lambda part: part.column("offset")[-1].as_py())
        if len(parts) <= 1:
            return parts[0] if parts else []
        import pyarrow as pa

        return pa.concat_batches(parts)

    def _fetch(self, max_records: int) -> list[Message]:
        batch: list[Message] = []
        for messages in self._fetch_parts(max_records, self._read, len,
                                          lambda part: part[-1].offset):
            batch += messages
        return batch

    def _fetch_parts(self, max_records: int, read: Callable[[TopicPartition, int, int], Any],
                     size: Callable[[Any], int], last_offset: Callable[[Any], int]
                     ) -> list[Any]:
        """What ``read`` returns for the readable partitions, in turn (a different first
        partition each poll), up to ``max_records`` in all; each partition's position
        moved past what it returned.
        """
        readable = [tp for tp in self._order if tp not in self._paused]
        if not readable:
            return []
        first = self._turn % len(readable)
        self._turn += 1
        parts: list[Any] = []
        got = 0
        for tp in readable[first:] + readable[:first]:
            wanted = max_records - got
            if wanted <= 0:
                break
            try:
                part = read(tp, self._positions[tp], wanted)
            except Exception:
                if not parts:
                    raise
                # Hand out what earlier partitions returned (their positions moved past
                # it); the failing partition is read again by a later poll.
                _log.debug("reading %s failed after %d records of this poll; returning "
                           "those", tp, got, exc_info=True)
                break
            if part is not None and size(part):
                self._positions[tp] = last_offset(part) + 1
                parts.append(part)
                got += size(part)
        return parts
