"""The producer: batches of messages sent asynchronously, one future per batch.

Each message of a batch goes out with ``send_async`` on the Pulsar producer of its topic
(or, when the message names a partition, on a producer of that partition's topic). The
per-message callbacks, which pulsar-client runs on its own I/O thread, count down one
aggregate per batch; the batch's future resolves when the last one arrives: with one
:class:`~omconnect.records.RecordMetadata` per message (topic, partition, no offset: a
Pulsar position is a MessageId, not an integer) or, if any failed, a
:class:`~omconnect.errors.SendError` whose outcomes say which.

Producers are created with ``block_if_queue_full=True``: when ``max_pending_messages``
sends are in flight, ``send`` blocks (back-pressure) instead of failing a message.
A message over ``pulsar.max.message.bytes`` fails the batch before anything is sent.

The hot path calls the client's compiled layer (``_pulsar.MessageBuilder`` and the
producer's ``send_async``) directly: the Python wrapper type-checks every argument of
every message, which costs more than the send itself.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from typing import Any

from omconnect.errors import (
    ConnectError,
    SendError,
    TransportError,
    TransportTimeoutError,
)
from omconnect.records import RecordMetadata
from omconnect.transport.kit.checks import check_message_sizes
from omconnect.transport.messages import Message
from omconnect.transport.spi import Producer
from omconnect_pulsar.client import TopicNames, compiled_module
from omconnect_pulsar.codec import encode_fields, encode_into
from omconnect_pulsar.errors import ErrorContext, translate, translated_errors

__all__ = ["PulsarProducer"]


class _Batch:
    """Collects the acknowledgements of one batch and resolves its future."""

    __slots__ = ("errors", "future", "lock", "messages", "outcomes", "remaining", "where")

    def __init__(self, messages: Sequence[Message], where: ErrorContext) -> None:
        self.messages = messages
        self.where = where
        self.future: Future[list[RecordMetadata]] = Future()
        self.outcomes: list[Any] = [None] * len(messages)
        self.remaining = len(messages)
        self.errors = 0
        self.lock = threading.Lock()
        if not messages:
            self.future.set_result([])

    def callback(self, index: int) -> Callable[[Any, Any], None]:
        """The ``send_async`` callback of message ``index``."""

        def done(result: Any, message_id: Any) -> None:
            if result.value == 0:  # Result.Ok
                message = self.messages[index]
                partition = message.partition
                if partition is None:  # routed by the client: the id names the partition
                    partition = max(0, message_id.partition())
                self._settle(index, RecordMetadata(
                    topic=message.topic, partition=partition, offset=None,
                    timestamp=message.timestamp))
            else:
                message = self.messages[index]
                self._settle(index, translate(result, f"sending to topic {message.topic!r}",
                                              self.where, size=message.size,
                                              topic=message.topic), failed=True)

        return done

    def fail_from(self, index: int, error: ConnectError) -> None:
        """Messages ``index`` and later were never handed to the client: fail them."""
        for position in range(index, len(self.outcomes)):
            self._settle(position, error, failed=True)

    def _settle(self, index: int, outcome: Any, failed: bool = False) -> None:
        with self.lock:
            self.outcomes[index] = outcome
            self.errors += failed
            self.remaining -= 1
            last = self.remaining == 0
        if not last:
            return
        if not self.errors:
            self.future.set_result(self._result())
            return
        outcomes = self._failure_outcomes()
        first = next(o for o in outcomes if isinstance(o, BaseException))
        error = SendError(f"{self.errors} of {len(outcomes)} messages were not "
                          f"acknowledged; first: {first}", outcomes)
        error.__cause__ = first
        self.future.set_exception(error)

    def _result(self) -> Any:
        return self.outcomes

    def _failure_outcomes(self) -> list[Any]:
        return self.outcomes


class _RowBatch(_Batch):
    """The acknowledgements of the rows of an Arrow batch for one topic: each row's
    outcome is its partition (an ``int``) until the batch resolves, to one
    :class:`~omconnect.columnar.BatchMetadata` (or a :class:`SendError` whose outcomes
    are per-row acknowledgements and errors).
    """

    __slots__ = ("size_of", "timestamps", "topic")

    def __init__(self, topic: str, timestamps: list[int | None],
                 size_of: Callable[[int], int], where: ErrorContext) -> None:
        super().__init__(range(len(timestamps)), where)  # type: ignore[arg-type]
        self.topic = topic
        self.timestamps = timestamps
        self.size_of = size_of

    def callback(self, index: int) -> Callable[[Any, Any], None]:
        """The ``send_async`` callback of row ``index``."""

        def done(result: Any, message_id: Any) -> None:
            if result.value == 0:  # Result.Ok
                self._settle(index, max(0, message_id.partition()))
            else:
                self._settle(index, translate(result, f"sending to topic {self.topic!r}",
                                              self.where, size=self.size_of(index),
                                              topic=self.topic), failed=True)

        return done

    def _result(self) -> Any:
        import pyarrow as pa

        from omconnect.columnar.metadata import BatchMetadata

        return BatchMetadata(self.topic, pa.array(self.outcomes, pa.int32()),
                             pa.nulls(len(self.outcomes), pa.int64()),
                             pa.array(self.timestamps, pa.int64()))

    def _failure_outcomes(self) -> list[Any]:
        return [RecordMetadata(topic=self.topic, partition=outcome, offset=None,
                               timestamp=self.timestamps[index])
                if isinstance(outcome, int) else outcome
                for index, outcome in enumerate(self.outcomes)]


class PulsarProducer(Producer):
    """Sends batches through pulsar-client producers, one per topic (and per explicit
    partition), created on first use. Safe to call from any thread.

    Args:
        client: The transport's ``pulsar.Client``.
        names: Maps topic names to Pulsar's.
        producer_options: Keyword arguments of ``Client.create_producer``.
        max_message_bytes: The largest message accepted (key + value + headers).
        where: For error messages.
        partitions_of: Gives the partition count of a topic (for explicit partitions).

    """

    def __init__(
        self,
        client: Any,
        names: TopicNames,
        producer_options: dict[str, Any],
        *,
        max_message_bytes: int,
        where: ErrorContext,
        partitions_of: Callable[[str], int],
    ) -> None:
        self._client = client
        self._names = names
        self._options = producer_options
        self._max_message_bytes = max_message_bytes
        self._where = where
        self._partitions_of = partitions_of
        self._producers: dict[tuple[str, int | None], Any] = {}
        self._pending: set[Future[list[RecordMetadata]]] = set()
        self._lock = threading.Lock()
        self._closed = False
        self._builder = compiled_module().MessageBuilder

    def send(self, messages: Sequence[Message]) -> Future[list[RecordMetadata]]:
        """Send a batch; the future resolves once every message is acknowledged.

        Raises:
            MessageTooLargeError: A message is over ``pulsar.max.message.bytes``.
            TransportError: The producer is closed.
            TransportTimeoutError: A topic's producer could not be created in time.

        """
        if self._closed:
            raise TransportError("pulsar: send on a closed producer")
        check_message_sizes(messages, self._max_message_bytes)
        batch = _Batch(messages, self._where)
        if not messages:
            return batch.future
        self._track(batch.future)
        producers = self._producers
        builder = self._builder
        for index, message in enumerate(messages):
            try:
                producer = producers.get((message.topic, message.partition))
                if producer is None:
                    producer = self.open_topic(message.topic, message.partition)
                pulsar_message = builder()
                encode_into(pulsar_message, message)
                producer.send_async(pulsar_message.build(), batch.callback(index))
            except Exception as exc:
                error = exc if isinstance(exc, ConnectError) else translate(
                    exc, f"sending to topic {message.topic!r}", self._where,
                    size=message.size, topic=message.topic)
                if index == 0:
                    self._pending.discard(batch.future)
                    raise error from exc
                batch.fail_from(index, error)
                break
        return batch.future

    def send_batch(self, topic: str, batch: Any) -> Future[Any]:
        """Send an Arrow batch: each row's key, value and timestamp go straight from the
        columns into the client's message builder (no ``Message`` per row), and the
        acknowledgement is one :class:`~omconnect.columnar.BatchMetadata`. Batches with
        headers or named partitions go through :meth:`send`.

        Raises:
            MessageTooLargeError: A row is over ``pulsar.max.message.bytes`` (nothing is
                sent).
            TransportError: The producer is closed.
            TransportTimeoutError: The topic's producer could not be created in time.

        """
        names = batch.schema.names
        if batch.num_rows == 0 or any(
                name in names and batch.column(name).null_count != batch.num_rows
                for name in ("headers", "partition")):
            return super().send_batch(topic, batch)
        if self._closed:
            raise TransportError("pulsar: send on a closed producer")
        from omconnect.columnar.sizes import check_row_sizes

        check_row_sizes(topic, batch, self._max_message_bytes, key="pulsar.max.message.bytes")
        rows = batch.num_rows
        keys = batch.column("key").to_pylist() if "key" in names else [None] * rows
        values = batch.column("value").to_pylist()
        stamps = batch.column("timestamp").to_pylist() if "timestamp" in names \
            else [None] * rows
        acks = _RowBatch(topic, stamps,
                         lambda i: len(keys[i] or b"") + len(values[i] or b""), self._where)
        self._track(acks.future)
        try:
            producer = self._producers.get((topic, None)) or self.open_topic(topic)
        except Exception:
            self._pending.discard(acks.future)
            raise
        builder = self._builder
        for index, key, value, stamp in zip(range(rows), keys, values, stamps, strict=True):
            try:
                pulsar_message = builder()
                encode_fields(pulsar_message, key, value, stamp, ())
                producer.send_async(pulsar_message.build(), acks.callback(index))
            except Exception as exc:
                error = exc if isinstance(exc, ConnectError) else translate(
                    exc, f"sending to topic {topic!r}", self._where,
                    size=acks.size_of(index), topic=topic)
                if index == 0:
                    self._pending.discard(acks.future)
                    raise error from exc
                acks.fail_from(index, error)
                break
        return acks.future

    def _track(self, future: Future[list[RecordMetadata]]) -> None:
        with self._lock:
            self._pending.add(future)
        future.add_done_callback(self._untrack)

    def _untrack(self, future: Future[list[RecordMetadata]]) -> None:
        with self._lock:
            self._pending.discard(future)

    def open_topic(self, topic: str, partition: int | None = None) -> Any:
        """The client producer for ``topic`` (or one of its partitions), created on first
        use; creating it makes the broker create a missing topic.

        Raises:
            TransportError: The partition does not exist or the producer cannot be made.

        """
        with self._lock:
            found = self._producers.get((topic, partition))
            if found is not None:
                return found
            if self._closed:
                raise TransportError("pulsar: send on a closed producer")
            target = self._names.full(topic)
            if partition is not None:
                count = self._partitions_of(topic)
                if not 0 <= partition < count:
                    raise TransportError(f"pulsar: topic {topic!r} has {count} partition(s); "
                                         f"there is no partition {partition}",
                                         topic=topic, partition=partition)
                if count > 1:
                    target = self._names.partition(topic, partition)
            with translated_errors(f"creating a producer for topic {topic!r}", self._where,
                               topic=topic):
                wrapper = self._client.create_producer(target, **self._options)
            producer = wrapper._producer
            self._producers[(topic, partition)] = producer
            return producer

    def flush(self, timeout: float | None = None) -> None:
        """Push out batched messages and wait until every send so far is settled.

        Raises:
            TransportTimeoutError: Not settled within ``timeout`` seconds.

        """
        with self._lock:
            producers = list(self._producers.values())
            pending = list(self._pending)
        for producer in producers:
            producer.flush_async(_ignore)
        deadline = None if timeout is None else time.monotonic() + timeout
        for future in pending:
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            try:
                future.exception(timeout=remaining)
            except TimeoutError:
                raise TransportTimeoutError(
                    f"pulsar: flush: sends still unacknowledged after {timeout:g} s") from None

    def close(self, timeout: float | None = None) -> None:
        """Flush, then close every Pulsar producer, waiting for the broker's answers (at
        most the operation timeout: a dead broker does not hold it longer). Idempotent.

        The closes are asynchronous and awaited together. Not awaiting them let the
        client's threads answer after the caller went on, typically after the transport
        had closed the client ("Failed to close producer: AlreadyClosed" logged).
        """
        if self._closed:
            return
        try:
            self.flush(timeout if timeout is not None else self._where.timeout_s + 5)
        finally:
            with self._lock:
                self._closed = True
                producers, self._producers = list(self._producers.values()), {}
                self._client = None  # a closed producer keeps no client alive
            closing = []
            for producer in producers:
                closed = threading.Event()
                try:
                    producer.close_async(lambda _result, closed=closed: closed.set())
                except Exception:
                    continue
                closing.append(closed)
            deadline = time.monotonic() + self._where.timeout_s
            for closed in closing:
                closed.wait(max(0.0, deadline - time.monotonic()))


def _ignore(*_: Any) -> None:
    """A callback for asynchronous calls whose outcome does not matter."""
