"""Producing to Kafka: one future per batch, resolved when every message is acknowledged.

:class:`KafkaProducer` holds what both drivers share: the closed check, the size limit
(checked before anything of a batch is sent), creating topics on first use, refusing a
partition the topic does not have, counting batches in flight for ``flush``, and
translating failures. The driver hands the messages to its client and reports each
acknowledgement to the batch's :class:`~omconnect_kafka.client.base.BatchAck`.

Acknowledgements are ``acks=all``: a message is acknowledged once every in-sync replica
has it, so it survives the loss of the leader.
"""

from __future__ import annotations

import operator
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from typing import Any

from omconnect.errors import MessageTooLargeError, TransportError, TransportTimeoutError
from omconnect.records import RecordMetadata
from omconnect.transport.messages import Message
from omconnect.transport.spi import Producer
from omconnect_kafka.admin import TopicCreator
from omconnect_kafka.client.base import BatchAck, ColumnAck, ProducerClient
from omconnect_kafka.errors import ErrorContext, translate, translated_errors

__all__ = ["RECORD_FRAMING_BYTES", "KafkaProducer", "SizeLimit"]

RECORD_FRAMING_BYTES = 512
"""Bytes of ``max.request.size`` kept for the record batch header (61 bytes), the
record's own framing (up to 36) and header framing (10 per header): a message whose key,
value and headers fit in ``max.request.size - RECORD_FRAMING_BYTES`` always fits a
request.
"""

_KEY = operator.attrgetter("key")
_VALUE = operator.attrgetter("value")
_HEADERS = operator.attrgetter("headers")
_TOPIC = operator.attrgetter("topic")
_PARTITION = operator.attrgetter("partition")


class SizeLimit:
    """The largest message the transport sends: ``max.request.size`` less framing.

    Args:
        max_request_size: ``kafka.max.request.size``.

    """

    def __init__(self, max_request_size: int) -> None:
        self.max_request_size = max_request_size
        self.limit = max(1, max_request_size - RECORD_FRAMING_BYTES)

    def context(self, message: Message) -> ErrorContext:
        """What a "too large" error says about ``message``."""
        return ErrorContext(message.size, self.limit, "kafka.max.request.size")

    def check(self, messages: Sequence[Message]) -> None:
        """Raise for the first message over the limit (key + value + headers).

        Raises:
            MessageTooLargeError: Naming the size, the limit, the option that sets it,
                the topic and the message's index in the batch.

        """
        total = sum(map(len, filter(None, map(_KEY, messages))))
        total += sum(map(len, filter(None, map(_VALUE, messages))))
        if total <= self.limit and not any(map(_HEADERS, messages)):
            return
        for index, message in enumerate(messages):
            size = message.size
            if size > self.limit:
                error = MessageTooLargeError(size, self.limit, topic=message.topic,
                                             key="kafka.max.request.size", index=index)
                error.message = (f"{error.message} (kafka.max.request.size="
                                 f"{self.max_request_size} less {RECORD_FRAMING_BYTES} bytes "
                                 "of record framing); nothing of the batch was sent")
                raise error


class KafkaProducer(Producer):
    """Sends batches through one client of the chosen driver. Any thread may call it.

    Args:
        client: The driver's producer.
        topics: Creates topics on first use.
        limit: The size limit.

    """

    def __init__(self, client: ProducerClient, *, topics: TopicCreator, limit: SizeLimit
                 ) -> None:
        self._client = client
        self._topics = topics
        self._limit = limit
        self._partition_counts: dict[str, int] = {}
        self._inflight = 0
        self._cond = threading.Condition()
        self._closed = False

    def send(self, messages: Sequence[Message]) -> Future[list[RecordMetadata]]:
        """Send a batch; the future resolves once the broker acknowledged every message.

        Raises:
            MessageTooLargeError: A message is over the limit (nothing is sent).
            TransportError: The producer is closed, a topic cannot be created, or a
                message names a partition its topic does not have (nothing is sent).
            TransportTimeoutError: The cluster is not reachable within
                ``kafka.connect.timeout.ms``.

        """
        if self._closed:
            raise TransportError("kafka transport: the producer is closed")
        batch = messages if isinstance(messages, (list, tuple)) else list(messages)
        if not batch:
            done: Future[list[RecordMetadata]] = Future()
            done.set_result([])
            return done
        self._limit.check(batch)
        self._topics.ensure(set(map(_TOPIC, batch)))
        if set(map(_PARTITION, batch)) != {None}:
            self._check_partitions(batch)
        ack = BatchAck(batch, self._client.acknowledgements, self._describe(batch))
        with self._cond:
            self._inflight += 1
        ack.future.add_done_callback(self._done)
        self._client.send(batch, ack)
        return ack.future

    def send_batch(self, topic: str, batch: Any) -> Future[Any]:
        """Send an Arrow batch; with a driver that produces from columns (confluent-kafka)
        and rows without headers or named partitions, no ``Message`` is built per row and
        the acknowledgement is one :class:`~omconnect.columnar.BatchMetadata`.

        Raises:
            MessageTooLargeError: A row is over the limit (nothing is sent).
            TransportError: The producer is closed, or the topic cannot be created.

        """
        names = batch.schema.names
        if not self._client.sends_columns or batch.num_rows == 0 or any(
                name in names and batch.column(name).null_count != batch.num_rows
                for name in ("headers", "partition")):
            return super().send_batch(topic, batch)
        if self._closed:
            raise TransportError("kafka transport: the producer is closed")
        from omconnect.columnar.sizes import check_row_sizes

        check_row_sizes(topic, batch, self._limit.limit, key="kafka.max.request.size")
        self._topics.ensure({topic})
        rows = batch.num_rows
        keys = batch.column("key").to_pylist() if "key" in names else [None] * rows
        values = batch.column("value").to_pylist()
        stamps = batch.column("timestamp").to_pylist() if "timestamp" in names else None
        client = self._client
        limit = self._limit

        def describe(index: int, error: Any) -> Exception:
            context = ErrorContext(len(keys[index] or b"") + len(values[index] or b""),
                                      limit.limit, "kafka.max.request.size")
            return translate(error, "sending to the broker", where=context, topic=topic)

        def convert(indexes: Sequence[Any], reports: list[Any]) -> list[RecordMetadata]:
            return client.acknowledgements(
                [Message(topic, keys[i], values[i]) for i in indexes], reports)

        ack = ColumnAck(rows, lambda reports: client.whole_acknowledgement(topic, reports),
                        convert, describe)
        with self._cond:
            self._inflight += 1
        ack.future.add_done_callback(self._done)
        client.send_columns(topic, keys, values, stamps, ack)
        return ack.future

    def _describe(self, batch: Sequence[Message]) -> Callable[[int, Any], Exception]:
        limit = self._limit

        def describe(index: int, error: Any) -> Exception:
            message = batch[index]
            return translate(error, "sending to the broker", where=limit.context(message),
                             topic=message.topic, partition=message.partition)

        return describe

    def _check_partitions(self, batch: Sequence[Message]) -> None:
        for index, message in enumerate(batch):
            partition = message.partition
            if partition is None:
                continue
            count = self._partition_counts.get(message.topic)
            if count is None or partition >= count:
                with translated_errors("reading topic metadata", topic=message.topic):
                    count = self._client.partition_count(message.topic) or 0
                self._partition_counts[message.topic] = count
            if not 0 <= partition < count:
                raise TransportError(
                    f"partition {partition} does not exist: topic {message.topic!r} has "
                    f"{count} partition(s); nothing of the batch was sent (message {index} "
                    "named it)", topic=message.topic, partition=partition)

    def flush(self, timeout: float | None = None) -> None:
        """Block until every batch sent so far is acknowledged or failed.

        Raises:
            TransportTimeoutError: Not done within ``timeout`` seconds.

        """
        deadline = None if timeout is None else time.monotonic() + timeout
        with translated_errors("flushing"):
            complete = self._client.flush(3600.0 if timeout is None else timeout)
        with self._cond:
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            if not complete or not self._cond.wait_for(lambda: self._inflight == 0, remaining):
                raise TransportTimeoutError(
                    f"kafka transport: {self._inflight} batch(es) not acknowledged within "
                    f"{timeout} s")

    def close(self, timeout: float | None = None) -> None:
        """Flush, then release the client; sending afterwards raises. Idempotent.

        Raises:
            TransportTimeoutError: The flush did not finish within ``timeout`` (the
                client is released all the same; unacknowledged batches fail).

        """
        if self._closed:
            return
        self._closed = True
        try:
            self.flush(timeout)
        finally:
            with translated_errors("closing the producer"):
                self._client.close(5.0 if timeout is None else timeout)

    def _done(self, _future: Future[list[RecordMetadata]]) -> None:
        with self._cond:
            self._inflight -= 1
            if self._inflight == 0:
                self._cond.notify_all()
