"""Consumer groups on RabbitMQ: who is in a group, and who reads which partition.

The protocol of :mod:`omconnect.transport.kit.grouping` (every member computes the same
assignment from a view of the group, gives up what is no longer its own, claims what is
free) runs over two broker mechanisms instead of a shared database:

* **Membership**: each member binds an exclusive, server-named queue to the group's fanout
  exchange ``omc.g.<group>`` and publishes a small JSON announcement there every heartbeat
  interval, from its I/O thread: its id, topics, session timeout and the partitions it
  holds. A newcomer announces ``join`` and every member answers at once with its own
  announcement; a member that closes announces ``leave``. A member not heard from for its
  session timeout (its process died) is dropped from the view.
* **Ownership**: a member holds a partition while it is the exclusive consumer of the
  partition's lock queue ``omc.l.<group>.<topic>.<p>``. The broker refuses a second
  exclusive consumer (``ACCESS_REFUSED``) and frees the lock the moment the holder's
  connection closes, so two members never read one partition at once, even when their
  views of the group differ for a moment.

Limits: heartbeats come from the I/O thread, so a member whose application stops polling
keeps its partitions (and their unacknowledged messages) until it closes or its process
dies; there is no ``max.poll.interval``. Views converge within about two heartbeat
intervals after a change.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Set
from concurrent.futures import Future
from typing import Any

from omconnect.errors import TransportError
from omconnect.records import TopicPartition
from omconnect.transport.kit.grouping import GroupStore, GroupView
from omconnect_rabbitmq.client import ChannelOps, IoConnection, chain, gather
from omconnect_rabbitmq.topology import LOCK_ARGUMENTS, group_exchange, lock_queue

__all__ = ["RabbitMQGroupStore"]

_log = logging.getLogger(__name__)

_JOIN_SETTLE = 0.15
"""Seconds a joining member waits for the others' answers before its first sync."""


class _Peer:
    __slots__ = ("owned", "seen", "timeout", "topics")

    def __init__(self, topics: frozenset[str], owned: frozenset[TopicPartition],
                 timeout: float) -> None:
        self.topics = topics
        self.owned = owned
        self.timeout = timeout
        self.seen = time.monotonic()


class RabbitMQGroupStore(GroupStore):
    """One consumer's view of its group, kept on the consumer's I/O connection.

    Args:
        io: The consumer's connection.
        group: The group.
        heartbeat_interval: Seconds between announcements.
        partition_counts: Maps a topic to its partition count (``None`` when missing);
            called on the consumer's thread.

    """

    def __init__(
        self,
        io: IoConnection,
        group: str,
        *,
        heartbeat_interval: float,
        partition_counts: Callable[[str], int | None],
    ) -> None:
        self._io = io
        self.group = group
        self._exchange = group_exchange(group)
        self._interval = heartbeat_interval
        self._partition_counts = partition_counts
        self._lock = threading.Lock()
        self._peers: dict[str, _Peer] = {}
        self._member: str | None = None
        self._topics: frozenset[str] = frozenset()
        self._timeout = 10.0
        self._answered = threading.Event()
        # loop-thread state
        self._control: ChannelOps | None = None
        self._locks: dict[TopicPartition, ChannelOps] = {}
        self._timer: Any = None

    # -- the loop's side ----------------------------------------------------------------
    def setup(self) -> Future[Any]:
        """Declare the group's exchange and this member's queue; start listening (loop
        thread; called on every new connection).
        """
        self._locks = {}

        def declared(channel: ChannelOps) -> Future[Any]:
            self._control = channel
            exchange = channel.do("exchange_declare", self._exchange, exchange_type="fanout",
                                  durable=True)
            queue = channel.do("queue_declare", "", exclusive=True, auto_delete=True)

            def bind(frame: Any) -> Future[Any]:
                name = frame.method.queue
                return chain(channel.do("queue_bind", name, self._exchange),
                             lambda _: channel.do("basic_consume", name, self._on_announcement,
                                                  auto_ack=True))

            return chain(gather([exchange]), lambda _: chain(queue, bind))

        setup = chain(self._io.channel(f"group {self.group!r}"), declared)
        setup.add_done_callback(lambda f: self._announce("join") if self._member else None)
        return setup

    def connection_lost(self) -> None:
        """The connection is gone: so are the locks (loop thread)."""
        self._control = None
        self._locks = {}

    def _on_announcement(self, _channel: Any, _method: Any, _properties: Any,
                         body: bytes) -> None:
        try:
            data = json.loads(body)
            member = str(data["id"])
            kind = str(data["kind"])
        except (ValueError, KeyError, TypeError):
            _log.warning("group %r: ignoring a malformed announcement", self.group)
            return
        if member == self._member:
            return
        with self._lock:
            if kind == "leave":
                self._peers.pop(member, None)
            else:
                self._peers[member] = _Peer(
                    frozenset(data.get("topics", ())),
                    frozenset(TopicPartition(t, int(p)) for t, p in data.get("owned", ())),
                    float(data.get("timeout", 10.0)))
        self._answered.set()
        if kind == "join" and self._member is not None:
            self._announce("beat")

    def _announce(self, kind: str) -> None:
        channel = self._control
        if channel is None or channel.closed is not None or self._member is None:
            return
        body = json.dumps({
            "id": self._member, "kind": kind, "topics": sorted(self._topics),
            "owned": sorted([tp.topic, tp.partition] for tp in self._locks),
            "timeout": self._timeout,
        }).encode()
        try:
            channel.channel.basic_publish(self._exchange, "", body)
        except Exception as exc:  # the channel is closing; the next connection re-announces
            _log.debug("group %r: announcement not sent: %s", self.group, exc)

    def _beat(self) -> None:
        self._timer = None
        if self._member is None or self._io.closed:
            return
        self._announce("beat")
        self._timer = self._io.call_later(self._interval, self._beat)

    def _claim(self, tp: TopicPartition) -> Future[bool]:
        result: Future[bool] = Future()
        queue = lock_queue(self.group, tp.topic, tp.partition)

        def consume(channel: ChannelOps) -> Future[Any]:
            declared = channel.do("queue_declare", queue, durable=True, arguments=LOCK_ARGUMENTS)

            def held(_frame: Any) -> None:
                self._locks[tp] = channel

                def freed(_reason: BaseException) -> None:
                    if self._locks.get(tp) is channel:
                        del self._locks[tp]

                channel.on_close(freed)

            return chain(chain(declared, lambda _: channel.do(
                "basic_consume", queue, _ignore, exclusive=True)), held)

        attempt = chain(self._io.channel(f"lock of {tp}"), consume)

        def settle(done: Future[Any]) -> None:
            result.set_result(done.exception() is None)

        attempt.add_done_callback(settle)
        return result

    def _release(self, partitions: Set[TopicPartition]) -> None:
        for tp in partitions:
            channel = self._locks.pop(tp, None)
            if channel is not None:
                channel.close()

    # -- GroupStore --------------------------------------------------------------------
    def join(self, member: str, topics: frozenset[str], session_timeout_ms: int) -> None:
        """Announce ``member`` with its topics; wait briefly for the others' answers."""
        first = self._member is None
        self._member = member
        self._topics = topics
        self._timeout = session_timeout_ms / 1000
        self._answered.clear()

        def start() -> None:
            self._announce("join")
            if self._timer is None:
                self._timer = self._io.call_later(self._interval, self._beat)

        self._io.call(start, action=f"joining group {self.group!r}")
        if first:
            self._answered.wait(_JOIN_SETTLE)

    def sync(self, member: str) -> GroupView | None:
        """The group as this member sees it now (peers past their timeout dropped)."""
        if member != self._member:
            return None
        now = time.monotonic()
        with self._lock:
            for gone in [m for m, p in self._peers.items() if now - p.seen > p.timeout]:
                del self._peers[gone]
            peers = dict(self._peers)
        held = self._io.call(lambda: frozenset(self._locks), action="reading group locks") \
            if self._io.connected.is_set() else frozenset()
        members = {m: p.topics for m, p in peers.items()}
        members[member] = self._topics
        owners: dict[TopicPartition, str] = {}
        for other, peer in peers.items():
            for tp in peer.owned:
                owners[tp] = other
        for tp in held:
            owners[tp] = member
        partitions: dict[str, int] = {}
        for topic in set().union(*members.values()):
            count = self._partition_counts(topic)
            if count is not None:
                partitions[topic] = count
        return GroupView(members=members, partitions=partitions, owners=owners)

    def exchange(
        self, member: str, release: Set[TopicPartition], claim: Set[TopicPartition]
    ) -> set[TopicPartition]:
        """Close the locks of ``release``; try to take the locks of ``claim``."""
        if member != self._member:
            raise TransportError(f"group {self.group!r}: member {member} is not this consumer")
        wanted = sorted(claim)

        def work() -> Future[list[bool]]:
            self._release(release)
            attempts = gather([self._claim(tp) for tp in wanted])
            if release:
                attempts.add_done_callback(lambda _: self._announce("beat"))
            return attempts

        if not self._io.connected.is_set():
            return set()
        try:
            results = self._io.call(work, action=f"claiming partitions of group {self.group!r}")
        except TransportError as exc:
            _log.info("group %r: claiming %s failed: %s", self.group, wanted, exc)
            return set()
        return {tp for tp, ok in zip(wanted, results, strict=True) if ok}

    def holds(self, tp: TopicPartition) -> bool:
        """Whether this member holds ``tp``'s lock (consumer thread)."""
        return tp in self._io.call(lambda: frozenset(self._locks), action="reading group locks")

    def leave(self, member: str) -> None:
        """Release every lock and announce ``leave``."""
        if member != self._member:
            return

        def work() -> None:
            self._release(set(self._locks))
            self._announce("leave")
            if self._timer is not None:
                self._io.cancel_timer(self._timer)
                self._timer = None
            self._member = None

        if self._io.connected.is_set() and not self._io.closed:
            try:
                self._io.call(work, action=f"leaving group {self.group!r}")
            except TransportError as exc:
                _log.info("group %r: leaving failed (the broker frees the locks when the "
                          "connection closes): %s", self.group, exc)
        self._member = None


def _ignore(channel: Any, method: Any, _properties: Any, _body: bytes) -> None:
    """Lock queues hold no messages; should one arrive, give it back."""
    channel.basic_reject(method.delivery_tag, requeue=True)
