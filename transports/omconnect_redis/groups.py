"""Consumer groups on Redis: :class:`RedisGroupStore`, the kit's
:class:`~omconnect.transport.kit.grouping.GroupStore` in four hashes per group.

A group's members, their session timeouts, their last heartbeats and which member owns
each partition are hashes (:meth:`~omconnect_redis.client.Keys.group`); each step of the
kit's protocol (join, sync, exchange, leave, heartbeat) is one Lua script
(:mod:`~omconnect_redis.scripts`), so members in any process or on any machine see each
other's changes whole, and liveness is measured on the server's clock. A member whose
last heartbeat is older than its session timeout is evicted by the next sync of any
member, and its partitions are claimed by the others, who start from the group's
committed positions.

Why not Redis's own consumer groups (``XREADGROUP``/``XACK``/``XAUTOCLAIM``): they hand
out single entries, each to one consumer, and remember what each consumer has not
acknowledged. The transport SPI hands out partitions, and a commit of ``n`` means every
record before offset ``n`` is done; with entries spread over members, a partition's
order per key is lost, and a commit position has no meaning for the group. Partitions
owned by one member at a time keep order per key, replay (``seek``) and pause per
partition, and a member that leaves or dies hands over exactly what was committed.
"""

from __future__ import annotations

import json
from collections.abc import Set
from typing import Any

from omconnect.records import TopicPartition
from omconnect.transport.kit.grouping import GroupStore, GroupView
from omconnect_redis.client import Keys
from omconnect_redis.errors import ErrorContext, translated_errors
from omconnect_redis.scripts import (
    GROUP_EXCHANGE,
    GROUP_HEARTBEAT,
    GROUP_JOIN,
    GROUP_LEAVE,
    GROUP_SYNC,
)

__all__ = ["RedisGroupStore"]


def _field(tp: TopicPartition) -> str:
    return f"{tp.partition}:{tp.topic}"


def _partition(field: bytes) -> TopicPartition:
    number, _, topic = field.decode().partition(":")
    return TopicPartition(topic, int(number))


class RedisGroupStore(GroupStore):
    """One group's membership on Redis (see the module docstring).

    Args:
        client: A ``redis.Redis`` on the transport's pool.
        keys: Where the data lives.
        group: The group.
        where: For error messages.

    """

    def __init__(self, client: Any, keys: Keys, group: str, where: ErrorContext) -> None:
        self._group = group
        self._where = where
        self._keys = list(keys.group(group))
        self._topics = keys.topics
        self._join = client.register_script(GROUP_JOIN)
        self._sync = client.register_script(GROUP_SYNC)
        self._exchange = client.register_script(GROUP_EXCHANGE)
        self._leave = client.register_script(GROUP_LEAVE)
        self._heartbeat = client.register_script(GROUP_HEARTBEAT)

    def join(self, member: str, topics: frozenset[str], session_timeout_ms: int) -> None:
        """Register ``member`` with its topics (counts as a heartbeat)."""
        with translated_errors("joining the consumer group", self._where, group=self._group):
            self._join(keys=self._keys,
                       args=[member, json.dumps(sorted(topics)), session_timeout_ms])

    def sync(self, member: str) -> GroupView | None:
        """Evict expired members, heartbeat ``member``, and read the group."""
        with translated_errors("syncing with the consumer group", self._where,
                               group=self._group):
            reply = self._sync(keys=[*self._keys, self._topics], args=[member])
        if reply is None:
            return None
        members, partitions, owners = reply
        return GroupView(
            members={members[i].decode(): frozenset(json.loads(members[i + 1]))
                     for i in range(0, len(members), 2)},
            partitions={partitions[i].decode(): int(partitions[i + 1])
                        for i in range(0, len(partitions), 2)},
            owners={_partition(owners[i]): owners[i + 1].decode()
                    for i in range(0, len(owners), 2)})

    def exchange(self, member: str, release: Set[TopicPartition],
                 claim: Set[TopicPartition]) -> set[TopicPartition]:
        """Free ``release``; take the unowned partitions of ``claim``."""
        with translated_errors("claiming partitions", self._where, group=self._group):
            owned = self._exchange(keys=self._keys, args=[
                member, len(release), *map(_field, release), *map(_field, claim)])
        return {_partition(field) for field in owned}

    def leave(self, member: str) -> None:
        """Remove ``member`` and free its partitions."""
        with translated_errors("leaving the consumer group", self._where, group=self._group):
            self._leave(keys=self._keys, args=[member])

    def heartbeat(self, member: str) -> None:
        """Stamp ``member`` alive (its heartbeat thread, between polls)."""
        with translated_errors("heart-beating", self._where, group=self._group):
            self._heartbeat(keys=self._keys, args=[member])
