"""Consuming from Kafka: groups with rebalance callbacks, manual commits, replay.

:class:`KafkaConsumer` holds what both drivers share: argument and state checks (a
consumer either subscribes or assigns), creating subscribed topics on first use, a poll
that :meth:`~KafkaConsumer.wakeup` can end early, and error translation. Commits are
synchronous and explicit (auto-commit is always off): committing ``n`` for a partition
means the group resumes there.

Rebalances happen inside :meth:`~KafkaConsumer.poll`; the listener's
``on_partitions_revoked`` runs before the group moves the partitions, so a commit made
there is what the next owner starts from. ``close`` leaves the group (the listener sees
the revocation, as in Kafka) without committing anything itself.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from omconnect.errors import IllegalStateError
from omconnect.records import TopicPartition
from omconnect.transport.messages import Message
from omconnect.transport.spi import Consumer, RebalanceListener
from omconnect_kafka.admin import TopicCreator
from omconnect_kafka.client.base import ConsumerClient
from omconnect_kafka.errors import ListenerFailed, translated_errors

__all__ = ["KafkaConsumer"]

WAKEUP_SLICE = 0.1
"""Longest a single client poll blocks, so :meth:`KafkaConsumer.wakeup` takes effect
within this many seconds."""

_NO_LISTENER = RebalanceListener()


class KafkaConsumer(Consumer):
    """Reads through one consumer of the chosen driver; one thread at a time (any
    thread may call :meth:`wakeup`).

    Args:
        client: The driver's consumer.
        group: The consumer group, or ``None`` for a consumer that only assigns.
        topics: Creates subscribed topics on first use.

    """

    def __init__(self, client: ConsumerClient, *, group: str | None,
                 topics: TopicCreator) -> None:
        self.group = group
        self._client = client
        self._topics = topics
        self._mode: str | None = None
        self._woken = threading.Event()
        self._closed = False

    def subscribe(
        self, topics: Sequence[str], listener: RebalanceListener | None = None
    ) -> None:
        """Join the group for ``topics`` (created when missing, see
        ``kafka.auto.create.topics``).

        Raises:
            IllegalStateError: The consumer has no group, or it assigned partitions.
            TypeError: ``topics`` is a single string rather than a list of names.
            ValueError: ``topics`` is empty or holds an empty name.

        """
        self._check_open()
        if isinstance(topics, str):
            raise TypeError(f"subscribe takes a list of topic names, got the string "
                            f"{topics!r}; write [{topics!r}]")
        if self.group is None:
            raise IllegalStateError(
                "subscribe needs a consumer group; open the consumer with a group, or use "
                "assign() to read partitions outside any group")
        if self._mode == "assign":
            raise IllegalStateError("this consumer reads assigned partitions; subscribe "
                                    "and assign cannot be mixed on one consumer")
        names = list(topics)
        if not names or not all(isinstance(t, str) and t for t in names):
            raise ValueError(f"subscribe needs one or more non-empty topic names, got {topics!r}")
        self._topics.ensure(set(names))
        with translated_errors("subscribing", group=self.group):
            self._client.subscribe(names, listener or _NO_LISTENER)
        self._mode = "subscribe"

    def assign(self, partitions: Iterable[TopicPartition]) -> None:
        """Read exactly ``partitions``, outside group membership: each from the group's
        committed position when there is one, else from the consumer's ``start``.

        Raises:
            IllegalStateError: The consumer subscribed.

        """
        self._check_open()
        if self._mode == "subscribe":
            raise IllegalStateError("this consumer subscribed to a group; subscribe and "
                                    "assign cannot be mixed on one consumer")
        wanted = list(dict.fromkeys(partitions))
        with translated_errors("assigning partitions"):
            self._client.assign(wanted)
        self._mode = "assign"

    def poll(self, max_records: int, timeout: float) -> list[Message]:
        """Up to ``max_records`` messages, waiting at most ``timeout`` seconds for the
        first; rebalances (and their listener calls) happen here.

        Raises:
            ValueError: ``max_records`` is below 1.
            RetriableTransportError: The broker is unreachable or moving; poll again.
            TransportError: The client failed (its message kept).
            Exception: Whatever the rebalance listener raised.

        """
        return self._poll_with(self._client.poll, max_records, timeout)  # type: ignore[no-any-return]

    def poll_batch(self, max_records: int, timeout: float) -> Any:
        """:meth:`poll` as one Arrow batch; with confluent-kafka built from the client's
        messages column by column, with no ``Message`` per record (raises as :meth:`poll`).
        """
        if not self._client.polls_columns:
            return super().poll_batch(max_records, timeout)
        batch = self._poll_with(self._client.poll_columns, max_records, timeout)
        if batch is None:
            from omconnect.columnar.columns import empty_consumed_batch

            return empty_consumed_batch()
        return batch

    def _poll_with(self, poll: Callable[[int, float], Any], max_records: int,
                   timeout: float) -> Any:
        self._check_open()
        if max_records < 1:
            raise ValueError(f"max_records must be at least 1, got {max_records}")
        deadline = time.monotonic() + max(0.0, timeout)
        try:
            while True:
                remaining = deadline - time.monotonic()
                with translated_errors("polling", group=self.group):
                    messages = poll(max_records, min(max(remaining, 0.0), WAKEUP_SLICE))
                if messages or self._woken.is_set() or remaining <= WAKEUP_SLICE:
                    return messages
        except ListenerFailed as failed:
            raise failed.error from None
        finally:
            self._woken.clear()

    def commit(self, offsets: Mapping[TopicPartition, int]) -> None:
        """Commit, for the group, the next offset to read on each partition; returns once
        the broker stored them.

        Raises:
            IllegalStateError: The consumer has no group.
            ValueError: An offset is not a non-negative integer.
            TransportError: The commit failed; nothing may be assumed committed.

        """
        self._check_open()
        group = self._require_group("commit")
        for tp, offset in offsets.items():
            if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
                raise ValueError(f"commit offset of {tp} must be a non-negative integer, "
                                 f"got {offset!r}")
        if offsets:
            with translated_errors("committing offsets", group=group):
                self._client.commit(offsets)

    def committed(self, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, int | None]:
        """The group's committed offsets for ``partitions`` (``None`` where none).

        Raises:
            IllegalStateError: The consumer has no group.

        """
        self._check_open()
        group = self._require_group("committed")
        with translated_errors("reading committed offsets", group=group):
            return self._client.committed(list(partitions))

    def assignment(self) -> frozenset[TopicPartition]:
        """The partitions this consumer reads now."""
        self._check_open()
        with translated_errors("reading the assignment"):
            return self._client.assignment()

    def seek(self, partition: TopicPartition, offset: int) -> None:
        """Read ``partition`` from ``offset`` on the next poll.

        Raises:
            IllegalStateError: The partition is not assigned to this consumer.
            ValueError: ``offset`` is negative.

        """
        if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
            raise ValueError(f"seek offset must be a non-negative integer, got {offset!r}")
        self._check_assigned({partition}, "seek")
        with translated_errors("seeking", topic=partition.topic, partition=partition.partition,
                          offset=offset):
            self._client.seek(partition, offset)

    def offset_range(self, partition: TopicPartition) -> tuple[int, int]:
        """(earliest offset kept, offset the next message will get), as the broker's
        ListOffsets reports them.
        """
        self._check_open()
        with translated_errors("reading offsets", topic=partition.topic,
                          partition=partition.partition):
            return self._client.offset_range(partition)

    def pause(self, partitions: Iterable[TopicPartition]) -> None:
        """Stop returning messages of ``partitions`` until resumed; nothing is lost.

        Raises:
            IllegalStateError: A partition is not assigned to this consumer.

        """
        wanted = set(partitions)
        self._check_assigned(wanted, "pause")
        with translated_errors("pausing partitions"):
            self._client.pause(sorted(wanted))

    def resume(self, partitions: Iterable[TopicPartition]) -> None:
        """Return messages of ``partitions`` again.

        Raises:
            IllegalStateError: A partition is not assigned to this consumer.

        """
        wanted = set(partitions)
        self._check_assigned(wanted, "resume")
        with translated_errors("resuming partitions"):
            self._client.resume(sorted(wanted))

    def wakeup(self) -> None:
        """End a blocking :meth:`poll` early (within ``WAKEUP_SLICE`` seconds). Any
        thread.
        """
        self._woken.set()

    def close(self) -> None:
        """Leave the group and release the client, without committing. Idempotent.

        The listener's ``on_partitions_revoked`` runs first (it may still commit); an
        error it raises is raised here, after the client is released.
        """
        if self._closed:
            return
        try:
            with translated_errors("closing the consumer", group=self.group):
                self._client.close()
        except ListenerFailed as failed:
            raise failed.error from None
        finally:
            self._closed = True


    def _require_group(self, action: str) -> str:
        if self.group is None:
            raise IllegalStateError(f"{action} needs a consumer group; this consumer was "
                                    "opened without one")
        return self.group

    def _check_assigned(self, partitions: set[TopicPartition], action: str) -> None:
        self._check_open()
        unknown = partitions - self.assignment()
        if unknown:
            names = ", ".join(sorted(str(tp) for tp in unknown))
            raise IllegalStateError(f"cannot {action} {names}: not assigned to this consumer")
