"""Consumer groups on JetStream key/value: :class:`NatsGroupStore`.

The kit's group protocol (:mod:`omconnect.transport.kit.grouping`: members join, sync
every heartbeat interval, every member computes the same assignment, gives up what is no
longer its own and claims what is free) needs each step to be atomic with respect to
every other member. Here a group's whole state is one document in the bucket
``<prefix>-groups`` (key: the group), as JSON: every live member with its topics, session
timeout and last heartbeat (wall-clock milliseconds), and the owner of every claimed
partition. Each step reads the document with its revision, changes it and writes it back
with the key/value store's compare-and-set (*update* with the revision read); when
another member wrote in between, the write is refused and the step starts again from a
fresh read. So two members never own one partition, in this process or another, and a
member whose process died stops heart-beating and is evicted by the first sync after
its session timeout, freeing its partitions for the others.

Partition counts come from the topic catalog (:class:`~omconnect_nats.topics.Topology`).
"""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Callable, Set
from typing import Any, TypeVar

from omconnect.errors import TransportError
from omconnect.records import TopicPartition
from omconnect.transport.kit.clock import now_ms
from omconnect.transport.kit.grouping import GroupStore, GroupView
from omconnect_nats.client import NatsClient
from omconnect_nats.errors import ErrorContext, translated_errors
from omconnect_nats.naming import encode_token
from omconnect_nats.topics import Topology

__all__ = ["NatsGroupStore"]

_T = TypeVar("_T")
_ATTEMPTS = 200


class _Doc:
    """A group's state, as read at one revision."""

    __slots__ = ("changed", "members", "owners")

    def __init__(self, raw: bytes | None) -> None:
        data = json.loads(raw) if raw else {}
        self.members: dict[str, dict[str, Any]] = data.get("members", {})
        self.owners: dict[TopicPartition, str] = {
            TopicPartition(topic, int(partition)): member
            for topic, partition, member in data.get("owners", [])}
        self.changed = False

    def encode(self) -> bytes:
        owners = sorted([tp.topic, tp.partition, member] for tp, member in self.owners.items())
        return json.dumps({"members": self.members, "owners": owners},
                          separators=(",", ":")).encode()

    def remove(self, member: str) -> None:
        if self.members.pop(member, None) is not None:
            self.changed = True
        for tp in [tp for tp, owner in self.owners.items() if owner == member]:
            del self.owners[tp]
            self.changed = True

    def evict_expired(self, now: int) -> None:
        for member, state in list(self.members.items()):
            if state["beat"] + state["timeout"] < now:
                self.remove(member)


class NatsGroupStore(GroupStore):
    """One group's membership, through the transport's connection; see the module
    docstring.

    Args:
        client: The transport's client.
        topology: The transport's topics and buckets.
        group: The group.
        where: For error messages.

    """

    def __init__(self, client: NatsClient, topology: Topology, group: str,
                 where: ErrorContext) -> None:
        self._client = client
        self._topology = topology
        self._group = group
        self._key = encode_token(group)
        self._where = where

    def _run(self, action: str, change: Callable[[_Doc], _T]) -> _T:
        with translated_errors(action, self._where):
            return self._client.call(self._update(change), action=action)

    async def _update(self, change: Callable[[_Doc], _T]) -> _T:
        js = await self._client.jetstream()
        bucket = await self._topology.bucket(js, self._topology.names.groups_bucket)
        for _ in range(_ATTEMPTS):
            revision: int | None = None
            raw: bytes | None = None
            try:
                entry = await bucket.get(self._key)
                revision, raw = entry.revision, entry.value
            except Exception as exc:
                if type(exc).__name__ not in ("KeyNotFoundError", "KeyDeletedError"):
                    raise
                revision = getattr(getattr(exc, "entry", None), "revision", None)
            doc = _Doc(raw)
            result = change(doc)
            if not doc.changed:
                return result
            try:
                if revision is None:
                    await bucket.create(self._key, doc.encode())
                else:
                    await bucket.update(self._key, doc.encode(), last=revision)
                return result
            except Exception as exc:
                if type(exc).__name__ != "KeyWrongLastSequenceError" and getattr(
                        exc, "err_code", None) != 10071:
                    raise
            await asyncio.sleep(random.uniform(0.001, 0.02))
        raise TransportError(f"nats: group {self._group!r}: its state kept changing under "
                             f"{_ATTEMPTS} attempts to update it")

    def join(self, member: str, topics: frozenset[str], session_timeout_ms: int) -> None:
        """Register ``member`` with its topics (counts as a heartbeat)."""
        now = now_ms()

        def change(doc: _Doc) -> None:
            doc.members[member] = {"topics": sorted(topics), "timeout": session_timeout_ms,
                                   "beat": now}
            doc.changed = True

        self._run("joining the consumer group", change)

    def sync(self, member: str) -> GroupView | None:
        """Evict expired members, heartbeat ``member``, and read the group."""
        now = now_ms()

        def change(doc: _Doc) -> GroupView | None:
            doc.evict_expired(now)
            state = doc.members.get(member)
            if state is None:
                return None
            state["beat"] = now
            doc.changed = True
            return GroupView(
                members={m: frozenset(s["topics"]) for m, s in doc.members.items()},
                partitions={}, owners=dict(doc.owners))

        view = self._run("syncing with the consumer group", change)
        if view is None:
            return None
        wanted = frozenset().union(*view.members.values())
        partitions = self._client.call(self._partitions(sorted(wanted)),
                                       action="reading the topic catalog")
        return GroupView(members=view.members, partitions=partitions, owners=view.owners)

    async def _partitions(self, topics: list[str]) -> dict[str, int]:
        js = await self._client.jetstream()
        counts = await asyncio.gather(*(self._topology.partitions(js, t) for t in topics))
        return {topic: count for topic, count in zip(topics, counts, strict=True)
                if count is not None}

    def exchange(self, member: str, release: Set[TopicPartition],
                 claim: Set[TopicPartition]) -> set[TopicPartition]:
        """Free ``release``; take the unowned partitions of ``claim`` (none if ``member``
        was evicted meanwhile).
        """
        def change(doc: _Doc) -> set[TopicPartition]:
            for tp in release:
                if doc.owners.get(tp) == member:
                    del doc.owners[tp]
                    doc.changed = True
            if member not in doc.members:
                doc.remove(member)
                return set()
            for tp in claim:
                if tp not in doc.owners:
                    doc.owners[tp] = member
                    doc.changed = True
            return {tp for tp in claim if doc.owners.get(tp) == member}

        return self._run("claiming partitions", change)

    def leave(self, member: str) -> None:
        """Remove ``member`` and free its partitions."""
        self._run("leaving the consumer group", lambda doc: doc.remove(member))

    def heartbeat(self, member: str) -> None:
        """Stamp ``member``'s heartbeat (from the consumer's heartbeat thread)."""
        now = now_ms()

        def change(doc: _Doc) -> None:
            state = doc.members.get(member)
            if state is not None:
                state["beat"] = now
                doc.changed = True

        self._run("heart-beating", change)
