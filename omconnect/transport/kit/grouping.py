"""Consumer groups of the in-core transports: which member reads which partition.

One protocol serves ``memory`` and ``embedded``; only where the group's state lives (a
dict, or SQLite tables shared by processes) differs, behind :class:`GroupStore`.

1. A consumer that subscribes **joins**: it registers as a member of its group with its
   topics and its session timeout.
2. From its polls, at most once per heartbeat interval, it **syncs**: it heartbeats and
   reads the group's :class:`GroupView` (live members and their topics, the topics'
   partition counts, which member owns each partition). Members whose last heartbeat is
   older than their session timeout are evicted in the same step; their partitions become
   free.
3. Every member computes the same target assignment from the view (:func:`range_assignor`
   or :func:`round_robin_assignor`, over members sorted by id). A member gives up owned
   partitions that are not in its target, calling ``on_partitions_revoked`` first so it
   can commit, and claims target partitions that nobody owns. A partition another member
   still owns is claimed at a later sync, once that member has given it up.

So a partition has at most one owner at any time, and its new owner starts from the
committed position the previous owner had the chance to write. A member that finds it was
evicted treats its partitions as revoked and joins again.
"""

from __future__ import annotations

import abc
import logging
from collections.abc import Callable, Mapping, Set
from typing import TypeAlias

import attrs

from omconnect.errors import TransportError
from omconnect.records import TopicPartition

_log = logging.getLogger(__name__)

__all__ = [
    "ASSIGNORS",
    "Assignor",
    "GroupMember",
    "GroupStore",
    "GroupView",
    "range_assignor",
    "round_robin_assignor",
]

Assignor: TypeAlias = Callable[
    [Mapping[str, frozenset[str]], Mapping[str, int]], dict[str, set[TopicPartition]]
]
"""Maps (member id -> subscribed topics, topic -> partition count) to each member's
partitions. Must be deterministic: every member computes it on its own."""


def range_assignor(
    members: Mapping[str, frozenset[str]], partitions: Mapping[str, int]
) -> dict[str, set[TopicPartition]]:
    """Kafka's range assignment: per topic, contiguous runs of partitions to the members
    subscribed to it, in member-id order; the first members get one more when the
    partitions do not divide evenly.
    """
    result: dict[str, set[TopicPartition]] = {member: set() for member in members}
    for topic in sorted(partitions):
        subscribed = sorted(m for m, topics in members.items() if topic in topics)
        if not subscribed:
            continue
        share, extra = divmod(partitions[topic], len(subscribed))
        start = 0
        for index, member in enumerate(subscribed):
            count = share + (1 if index < extra else 0)
            result[member].update(TopicPartition(topic, p) for p in range(start, start + count))
            start += count
    return result


def round_robin_assignor(
    members: Mapping[str, frozenset[str]], partitions: Mapping[str, int]
) -> dict[str, set[TopicPartition]]:
    """Kafka's round-robin assignment: every partition of every topic, in (topic,
    partition) order, to the next member in id order that is subscribed to its topic.
    """
    result: dict[str, set[TopicPartition]] = {member: set() for member in members}
    ordered = sorted(members)
    if not ordered:
        return result
    cursor = 0
    for topic in sorted(partitions):
        if not any(topic in members[m] for m in ordered):
            continue
        for partition in range(partitions[topic]):
            while topic not in members[ordered[cursor % len(ordered)]]:
                cursor += 1
            result[ordered[cursor % len(ordered)]].add(TopicPartition(topic, partition))
            cursor += 1
    return result


ASSIGNORS: dict[str, Assignor] = {"range": range_assignor, "roundrobin": round_robin_assignor}
"""The assignment strategies by the name the ``*.group.assignment`` options take."""


@attrs.frozen(kw_only=True)
class GroupView:
    """A group as one sync saw it.

    Attributes:
        members: Live member ids and the topics each is subscribed to.
        partitions: Partition count of every existing topic some member is subscribed to.
        owners: The member owning each claimed partition (live members only).

    """

    members: Mapping[str, frozenset[str]]
    partitions: Mapping[str, int]
    owners: Mapping[TopicPartition, str]


class GroupStore(abc.ABC):
    """Where one group's membership and partition ownership live. Each method is atomic
    with respect to every other member, in this process or another.
    """

    @abc.abstractmethod
    def join(self, member: str, topics: frozenset[str], session_timeout_ms: int) -> None:
        """Register ``member`` (or update its topics), counting as a heartbeat."""

    @abc.abstractmethod
    def sync(self, member: str) -> GroupView | None:
        """Heartbeat ``member``, evict members past their session timeout (freeing their
        partitions) and return the group as it is now; ``None`` when ``member`` is not in
        the group (it was evicted, or never joined).
        """

    @abc.abstractmethod
    def exchange(
        self, member: str, release: Set[TopicPartition], claim: Set[TopicPartition]
    ) -> set[TopicPartition]:
        """Give up ``release``; take each partition of ``claim`` that nobody owns.

        Returns:
            The partitions of ``claim`` that ``member`` owns now.

        """

    @abc.abstractmethod
    def leave(self, member: str) -> None:
        """Remove ``member`` and free its partitions."""

    def heartbeat(self, member: str) -> None:
        """Stamp ``member`` alive between polls (a consumer's heartbeat thread calls it,
        so a consumer busy with a long batch keeps its partitions). The default does
        nothing: members then live by their polls' :meth:`sync` alone.
        """


class GroupMember:
    """One consumer's side of the protocol; driven from its poll, on its thread.

    Args:
        store: The group's state.
        member_id: This member's id, unique in the group.
        assignor: How partitions are shared.
        heartbeat_interval: Seconds between syncs when nothing is pending.
        session_timeout_ms: How long the group keeps this member without a heartbeat.

    """

    def __init__(
        self,
        store: GroupStore,
        member_id: str,
        *,
        assignor: Assignor,
        heartbeat_interval: float,
        session_timeout_ms: int,
    ) -> None:
        self.store = store
        self.member_id = member_id
        self.owned: set[TopicPartition] = set()
        self.topics: frozenset[str] = frozenset()
        self._assignor = assignor
        self._interval = heartbeat_interval
        self._retry = min(heartbeat_interval, 0.05)
        self._session_timeout_ms = session_timeout_ms
        self._next_sync = 0.0
        self._joined = False

    @property
    def joined(self) -> bool:
        """Whether this member has subscribed and not left."""
        return self._joined

    def join(self, topics: frozenset[str]) -> None:
        """Join the group for ``topics`` (again, with new topics, if already joined)."""
        self.store.join(self.member_id, topics, self._session_timeout_ms)
        self.topics = topics
        self._joined = True
        self._next_sync = 0.0

    def seconds_to_sync(self, now: float) -> float:
        """Seconds from ``now`` until :meth:`maintain` has work to do."""
        return max(0.0, self._next_sync - now) if self._joined else float("inf")

    def maintain(
        self, now: float, revoke: Callable[[frozenset[TopicPartition]], None]
    ) -> frozenset[TopicPartition]:
        """Sync with the group if due: give up what is no longer ours, claim what is free.

        Args:
            now: ``time.monotonic()``.
            revoke: Called with the partitions being given up, before the group sees them
                freed (the consumer calls its listener and drops their positions).

        Returns:
            The partitions newly claimed (the consumer sets their positions and calls
            its listener's ``on_partitions_assigned``).

        Raises:
            TransportError: The group cannot be reached, or rejoining failed.
            Exception: Whatever ``revoke`` raised, once the partitions were given up.

        """
        if not self._joined or now < self._next_sync:
            return frozenset()
        view = self.store.sync(self.member_id)
        if view is None:  # evicted: everything we held is gone already
            evicted, self.owned = frozenset(self.owned), set()
            if evicted:
                revoke(evicted)
            self.store.join(self.member_id, self.topics, self._session_timeout_ms)
            view = self.store.sync(self.member_id)
            if view is None:
                raise TransportError(
                    f"consumer {self.member_id} could not rejoin its group after eviction")
        target = self._assignor(view.members, view.partitions).get(self.member_id, set())
        lost = {tp for tp in self.owned if view.owners.get(tp) != self.member_id}
        # Claims the group still shows for this member although it gave them up (an
        # exchange that failed after the revoke): release them now, claim them later.
        stale = {tp for tp, owner in view.owners.items()
                 if owner == self.member_id} - self.owned
        given_up = lost | ((self.owned - lost) - target)
        release = (given_up - lost) | stale
        failure: BaseException | None = None
        if given_up:
            self.owned -= given_up
            try:
                revoke(frozenset(given_up))
            except BaseException as exc:  # finish the exchange, then re-raise
                failure = exc
        wanted = {tp for tp in target - self.owned - stale
                  if view.owners.get(tp) in (None, self.member_id)}
        if failure is not None:
            wanted = set()
        claimed = (self.store.exchange(self.member_id, release, wanted)
                   if release or wanted else set())
        self.owned |= claimed
        pending = len(target - self.owned) > 0
        self._next_sync = now + (self._retry if pending or failure else self._interval)
        if failure is not None:
            raise failure
        return frozenset(claimed)

    def give_back(self, partitions: Set[TopicPartition]) -> None:
        """Give up ``partitions`` just claimed that the consumer could not start reading
        (their reader or committed offsets failed to load): they leave ``owned`` and their
        claims are released, so the next sync claims them again instead of holding them
        unread. A release that fails is left to the group (a lost connection frees it).
        """
        self.owned -= partitions
        self._next_sync = 0.0
        try:
            self.store.exchange(self.member_id, set(partitions), set())
        except TransportError as exc:
            _log.info("giving back %s failed (the group frees them when the member's claim "
                      "lapses): %s", sorted(partitions), exc)

    def leave(self, revoke: Callable[[frozenset[TopicPartition]], None]) -> None:
        """Give up every partition (calling ``revoke`` first) and leave the group."""
        if not self._joined:
            return
        owned, self.owned = frozenset(self.owned), set()
        self._joined = False
        try:
            if owned:
                revoke(owned)
        finally:
            self.store.leave(self.member_id)
