"""The consumer: a group is a Pulsar subscription; positions are consumer-local.

* **Groups.** ``consumer(group)`` subscribes with subscription name ``group`` and the
  subscription type of ``pulsar.subscription.type``: ``Failover`` (per partition one
  active consumer of the group: order per key, the others take over when it leaves),
  ``Shared`` (messages spread over every consumer: more throughput, no order) or
  ``Key_Shared`` (spread by key, order per key). Each group has its own cursor, so every
  group receives every message. A consumer without a group gets a subscription of its
  own, removed when it closes.
* **Positions.** A Pulsar position is a MessageId (ledger, entry, batch index,
  partition), not an integer. The consumer numbers the messages it delivers per
  partition 0, 1, 2, ... (``Message.offset``) and remembers each one's MessageId until it
  is committed. ``commit({tp: n})`` acknowledges every delivered message of ``tp`` with
  an offset below ``n``: one cumulative acknowledgement where the subscription type
  allows it (Failover), individual acknowledgements otherwise. The numbers are the
  consumer's own: another consumer (or this group after a reopen) numbers from 0 again,
  so they cannot be stored and replayed (the transport is not ``replayable``; why stable
  integers are not derived from MessageIds is explained in ``docs/transports/pulsar.md``).
* **Redelivery.** Messages not acknowledged are delivered again to the group after the
  consumer closes or dies (Pulsar's cursor). A message the broker delivers to this
  consumer a second time while it is subscribed (after a reconnection, or by a broker
  defect: pulsar-lite's Failover dispatch does it under load) is dropped, not returned
  again: the caller already has it, and it is committed with the rest. On ``Failover``
  and ``Exclusive`` subscriptions (one active consumer per partition) that is any
  message whose MessageId is not past the last one delivered for its partition; on
  ``Shared`` and ``Key_Shared`` ones, a message delivered and not yet committed.
  :meth:`PulsarConsumer.negative_acknowledge` asks for a redelivery at once (those come
  through); :meth:`PulsarConsumer.seek_to` moves the subscription to a MessageId or a
  publish time where the broker supports it.
* **Assignment.** pulsar-client for Python (3.13) does not report which consumer of a
  Failover group the broker made active (it does not expose the C++ client's
  ``ConsumerEventListener``), so :meth:`assignment` is every partition of the
  subscribed topics (the partitions this consumer may receive from) and the rebalance
  listener hears of them once, from the first ``poll`` after ``subscribe``.

Used by one thread at a time; :meth:`wakeup` may be called from any thread (``poll``
waits in slices of at most 100 ms and returns early once woken).
"""

from __future__ import annotations

import collections
import logging
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from omconnect.errors import IllegalStateError
from omconnect.records import TopicPartition
from omconnect.transport.messages import Message
from omconnect.transport.spi import Consumer, RebalanceListener, StartFrom
from omconnect_pulsar.client import TopicNames, compiled_module, pulsar_module
from omconnect_pulsar.codec import decode, decode_fields
from omconnect_pulsar.errors import ErrorContext, translated_errors

__all__ = ["SUBSCRIPTION_TYPES", "PulsarConsumer"]

SUBSCRIPTION_TYPES = ("Failover", "Shared", "Key_Shared")
"""The subscription types a group can have (``pulsar.subscription.type``)."""

_log = logging.getLogger(__name__)
_CUMULATIVE = frozenset({"Failover", "Exclusive"})
_WAIT_SLICE_S = 0.1

_Delivered = tuple[int, Any, bytes | None]
"""A delivered message not yet committed: its offset, its ``MessageId`` and, on Shared
and Key_Shared subscriptions, the MessageId serialized (the compiled one is not
hashable), which is what the redelivery filter remembers."""


class PulsarConsumer(Consumer):
    """Reads a Pulsar subscription; see the module docstring for groups and positions.

    Args:
        client: The transport's ``pulsar.Client``.
        names: Maps topic names to Pulsar's.
        group: The subscription name, or ``None`` for a private subscription.
        start: Where a new subscription starts: ``earliest`` or ``latest``.
        subscription_type: One of :data:`SUBSCRIPTION_TYPES`.
        consumer_options: Keyword arguments of ``Client.subscribe``.
        where: For error messages.
        partitions_of: Gives the partition count of a topic.

    """

    def __init__(
        self,
        client: Any,
        names: TopicNames,
        *,
        group: str | None,
        start: StartFrom,
        subscription_type: str,
        consumer_options: dict[str, Any],
        where: ErrorContext,
        partitions_of: Callable[[str], int],
    ) -> None:
        self._client = client
        self._names = names
        self._private = group is None
        self._subscription = group or f"omc-private-{uuid.uuid4().hex[:12]}"
        self._start = start
        self._type = subscription_type
        self._options = consumer_options
        self._where = where
        self._partitions_of = partitions_of
        self._cumulative = subscription_type in _CUMULATIVE
        self._wrapper: Any = None
        self._consumer: Any = None
        self._listener: RebalanceListener | None = None
        self._announce: frozenset[TopicPartition] = frozenset()
        self._assignment: frozenset[TopicPartition] = frozenset()
        self._next_offset: dict[tuple[str, int], int] = {}
        # per partition, each delivered message not yet committed: (offset, MessageId,
        # its serialized form on Shared/Key_Shared subscriptions, None otherwise)
        self._delivered: dict[tuple[str, int], collections.deque[_Delivered]] = {}
        self._last_id: dict[tuple[str, int], Any] = {}  # Failover/Exclusive: newest delivered
        self._committed_id: dict[tuple[str, int], Any] = {}  # ... and newest committed
        self._pending_ids: dict[tuple[str, int], set[bytes]] = {}  # Shared: delivered keys
        self.redeliveries_dropped = 0
        """Messages the broker delivered again while this consumer held them (dropped)."""
        self._woken = threading.Event()
        self._closed = False
        self._timeout_error = compiled_module().Timeout

    @property
    def subscription(self) -> str:
        """The Pulsar subscription name (the group)."""
        return self._subscription

    def subscribe(
        self, topics: Sequence[str], listener: RebalanceListener | None = None
    ) -> None:
        """Subscribe the group to ``topics`` (replacing an earlier subscription).

        Raises:
            TransportTimeoutError: The broker did not answer in time.
            TransportError: The broker refused the subscription.

        """
        self._check_open()
        if not topics:
            raise ValueError("subscribe needs at least one topic")
        pulsar = pulsar_module()
        self._close_consumer()
        targets = [self._names.full(t) for t in topics]
        position = (pulsar.InitialPosition.Earliest if self._start == "earliest"
                    else pulsar.InitialPosition.Latest)
        with translated_errors(f"subscribing group {self._subscription!r} to {list(topics)}",
                           self._where):
            assigned = frozenset(TopicPartition(t, p) for t in topics
                                 for p in range(self._partitions_of(t)))
            self._wrapper = self._client.subscribe(
                targets[0] if len(targets) == 1 else targets,
                self._subscription,
                consumer_type=getattr(pulsar.ConsumerType, self._type),
                initial_position=position,
                **self._options,
            )
        self._consumer = self._wrapper._consumer
        self._listener = listener
        self._assignment = assigned
        self._announce = assigned

    def poll(self, max_records: int, timeout: float) -> list[Message]:
        """Up to ``max_records`` messages, waiting at most ``timeout`` s for the first."""
        return [decode(raw, topic, partition, offset)
                for raw, topic, partition, offset in self._poll_kept(max_records, timeout)]

    def poll_batch(self, max_records: int, timeout: float) -> Any:
        """:meth:`poll` as one Arrow batch, built column by column from the client's
        messages: no ``Message`` per record.
        """
        from omconnect.columnar.columns import consumed_batch, empty_consumed_batch

        kept = self._poll_kept(max_records, timeout)
        if not kept:
            return empty_consumed_batch()
        received, topics, partitions, offsets = zip(*kept, strict=True)
        keys, values, headers, stamps = zip(*map(decode_fields, received), strict=True)
        return consumed_batch(topics, partitions, offsets, stamps, keys, values, headers)

    def _poll_kept(self, max_records: int, timeout: float) -> list[tuple[Any, str, int, int]]:
        """What :meth:`poll` returns, undecoded: received messages that are not dropped
        redeliveries. When every message received was such a redelivery, receiving goes
        on until ``timeout``: an empty poll means nothing new came in time, never "only
        messages this consumer already had" (a reader that stops at an empty poll would
        stop early).
        """
        deadline = time.monotonic() + max(0.0, timeout)
        while True:
            received = self._receive(max_records, timeout)
            if not received:
                return []
            kept = self._kept(received)
            timeout = deadline - time.monotonic()
            if kept or timeout <= 0:
                return kept

    def _receive(self, max_records: int, timeout: float) -> list[Any]:
        """Up to ``max_records`` of the client's messages, waiting at most ``timeout`` s
        for the first (announcing a new assignment to the listener first).
        """
        self._check_open()
        consumer = self._consumer
        if consumer is None:
            raise IllegalStateError("poll before subscribe: call subscribe(topics) first")
        if self._announce:
            announce, self._announce = self._announce, frozenset()
            if self._listener is not None:
                self._listener.on_partitions_assigned(announce)
        first = self._receive_first(consumer, timeout)
        if first is None:
            return []
        received = [first]
        timeout_error = self._timeout_error
        try:
            while len(received) < max_records:
                received.append(consumer.receive(0))
        except timeout_error:
            pass
        except Exception as exc:
            with translated_errors("receiving", self._where):
                raise exc
        return received

    def _receive_first(self, consumer: Any, timeout: float) -> Any:
        """The first message, waiting in slices so :meth:`wakeup` ends the wait."""
        deadline = time.monotonic() + max(0.0, timeout)
        timeout_error = self._timeout_error
        while True:
            if self._woken.is_set():
                self._woken.clear()
                return None
            remaining = deadline - time.monotonic()
            wait_ms = int(min(max(remaining, 0.0), _WAIT_SLICE_S) * 1000)
            try:
                return consumer.receive(wait_ms)
            except timeout_error:
                if remaining <= _WAIT_SLICE_S:
                    return None
            except Exception as exc:
                with translated_errors("receiving", self._where):
                    raise exc

    def _kept(self, received: list[Any]) -> list[tuple[Any, str, int, int]]:
        """Each received message not delivered before while this consumer holds it, with
        its topic, partition and the offset this consumer gives it (recorded for
        :meth:`commit`).
        """
        parse = self._names.parse
        next_offset = self._next_offset
        delivered = self._delivered
        kept = []
        dropped = 0
        if self._cumulative:
            last_id = self._last_id
            for raw in received:
                position = parse(raw.topic_name())
                message_id = raw.message_id()
                seen = last_id.get(position)
                if seen is not None and message_id <= seen:
                    dropped += 1
                    continue
                last_id[position] = message_id
                offset = next_offset.get(position, 0)
                next_offset[position] = offset + 1
                queue = delivered.get(position)
                if queue is None:
                    queue = delivered[position] = collections.deque()
                queue.append((offset, message_id, None))
                kept.append((raw, position[0], position[1], offset))
        else:
            pending_ids = self._pending_ids
            for raw in received:
                position = parse(raw.topic_name())
                message_id = raw.message_id()
                key = message_id.serialize()
                pending = pending_ids.get(position)
                if pending is None:
                    pending = pending_ids[position] = set()
                elif key in pending:
                    dropped += 1
                    continue
                pending.add(key)
                offset = next_offset.get(position, 0)
                next_offset[position] = offset + 1
                queue = delivered.get(position)
                if queue is None:
                    queue = delivered[position] = collections.deque()
                queue.append((offset, message_id, key))
                kept.append((raw, position[0], position[1], offset))
        if dropped:
            self.redeliveries_dropped += dropped
            _log.debug("pulsar: dropped %d message(s) of group %r delivered again while "
                       "this consumer held them", dropped, self._subscription)
        return kept

    def commit(self, offsets: Mapping[TopicPartition, int]) -> None:
        """Acknowledge every delivered message below each partition's offset.

        Raises:
            TransportError: The client could not send the acknowledgements; nothing may
                be assumed committed.

        """
        self._check_open()
        consumer = self._consumer
        if consumer is None:
            return
        for tp, offset in offsets.items():
            queue = self._delivered.get((tp.topic, tp.partition))
            if not queue:
                continue
            done = []
            while queue and queue[0][0] < offset:
                done.append(queue.popleft())
            if not done:
                continue
            with translated_errors(f"committing {tp.topic!r}[{tp.partition}]", self._where,
                               topic=tp.topic, partition=tp.partition):
                if self._cumulative:
                    newest = done[-1][1]
                    consumer.acknowledge_cumulative(newest)
                    self._committed_id[(tp.topic, tp.partition)] = newest
                else:
                    acknowledge = consumer.acknowledge
                    pending = self._pending_ids.get((tp.topic, tp.partition), set())
                    for _, message_id, key in done:
                        acknowledge(message_id)
                        pending.discard(key)

    def negative_acknowledge(self, messages: Iterable[Message]) -> None:
        """Ask Pulsar to deliver ``messages`` (delivered by this consumer, not committed)
        again, after the subscription's negative-ack delay
        (``pulsar.consumer.negative_ack_redelivery_delay_ms``, 1000 ms by default). The
        redelivered messages get new offsets.

        Raises:
            ValueError: A message was not delivered by this consumer or is committed.

        """
        self._check_open()
        wanted: dict[tuple[str, int], set[int]] = collections.defaultdict(set)
        for message in messages:
            wanted[(message.topic, message.partition or 0)].add(message.offset or 0)
        for position, offsets in wanted.items():
            queue = self._delivered.get(position, collections.deque())
            keep: collections.deque[_Delivered] = collections.deque()
            found = set()
            nacked = []
            for entry in queue:
                if entry[0] in offsets:
                    found.add(entry[0])
                    nacked.append(entry)
                    with translated_errors("negative acknowledgement", self._where):
                        self._consumer.negative_acknowledge(entry[1])
                else:
                    keep.append(entry)
            self._delivered[position] = keep
            self._expect_again(position, nacked, keep)
            if found != offsets:
                raise ValueError(f"offsets {sorted(offsets - found)} of {position[0]!r}"
                                 f"[{position[1]}] were not delivered to this consumer or "
                                 "are already committed")

    def _expect_again(self, position: tuple[str, int], nacked: list[_Delivered],
                      kept: collections.deque[_Delivered]) -> None:
        """Let negatively acknowledged messages through when they come back."""
        if not nacked:
            return
        if not self._cumulative:
            pending = self._pending_ids.get(position, set())
            for _, _, key in nacked:
                pending.discard(key)
            return
        lowest = min(message_id for _, message_id, _ in nacked)
        below = [message_id for _, message_id, _ in kept if message_id < lowest]
        committed = self._committed_id.get(position)
        if committed is not None and committed < lowest:
            below.append(committed)
        if below:
            self._last_id[position] = max(below)
        else:
            self._last_id.pop(position, None)

    def seek_to(self, position: Any) -> None:
        """Move the group's cursor: to a ``pulsar.MessageId`` (the next message read is
        the one after it) or to a publish time (``int``, ms since the epoch).

        Pulsar supports this on a subscription of one non-partitioned topic (or one
        partition). Messages delivered but not committed are forgotten; what follows the
        new position is delivered with new offsets.

        Raises:
            TransportError: The broker refused or the consumer reads several topics.

        """
        self._check_open()
        if self._wrapper is None:
            raise IllegalStateError("seek_to before subscribe")
        with translated_errors("seeking", self._where):
            self._wrapper.seek(position)
        self._forget_delivered()

    def message_id(self, message: Message) -> Any:
        """The ``pulsar.MessageId`` of a delivered, not yet committed message."""
        for offset, message_id, _ in self._delivered.get(
                (message.topic, message.partition or 0), ()):
            if offset == message.offset:
                return message_id
        raise ValueError(f"offset {message.offset} of {message.topic!r}"
                         f"[{message.partition}] is not a delivered, uncommitted message")

    def assignment(self) -> frozenset[TopicPartition]:
        """Every partition of the subscribed topics (see the module docstring)."""
        return self._assignment

    def wakeup(self) -> None:
        """End a blocking :meth:`poll` early. Any thread."""
        self._woken.set()

    def close(self) -> None:
        """Close the Pulsar consumer (a private subscription is removed). Idempotent;
        unacknowledged messages are delivered again to the group.
        """
        if self._closed:
            return
        self._closed = True
        self._close_consumer()
        self._client = None  # a closed consumer keeps no client alive

    def _forget_delivered(self) -> None:
        self._delivered.clear()
        self._last_id.clear()
        self._committed_id.clear()
        self._pending_ids.clear()

    def _close_consumer(self) -> None:
        wrapper, self._wrapper, self._consumer = self._wrapper, None, None
        self._forget_delivered()
        self._next_offset.clear()
        if wrapper is None:
            return
        try:
            if self._private:
                wrapper.unsubscribe()
            wrapper.close()
        except Exception as exc:  # the broker may be gone; the client frees it anyway
            if not _closed_already(exc):
                _log.warning("pulsar: closing the consumer of group %r failed: %s",
                             self._subscription, exc)


def _closed_already(exc: Exception) -> bool:
    return type(exc).__name__ in ("AlreadyClosed", "ConsumerNotInitialized")
