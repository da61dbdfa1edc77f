"""The producer: batches published on an I/O thread, acknowledged by publisher confirms.

``send`` runs on the caller's thread: it checks sizes, places each message in a partition
(Kafka's murmur2 of the key, :mod:`omconnect.transport.kit.partitioning`), builds the AMQP
properties, and hands the batch to the producer's I/O thread (``send_batch`` does the
same from an Arrow batch's columns, with no ``Message`` per row and one
:class:`~omconnect.columnar.BatchMetadata` as the acknowledgement: pika still takes one
body and one properties object per message), which publishes it on a
channel in confirm mode. The broker confirms persistent messages once they are written
to disk (``basic.ack``, usually ``multiple=True`` for a run of them); the batch's future
completes when every message of it is confirmed. A negative confirm, or a lost
connection before the confirm, fails the batch with a :class:`~omconnect.errors.SendError`
whose outcomes are retriable errors: the messages may or may not be stored, so a retry
gives at-least-once delivery.

Every message is published ``mandatory``, so a message no queue takes is returned
(``basic.return``, matched to its delivery tag through ``message_id``) before the broker
confirms it; the batch then fails with a :class:`~omconnect.errors.SendError` whose
outcome for that message is a retriable error (the others are acknowledged), so the
runtime sends only it again and never commits its source offset. Without it the broker
confirms and drops such a message. It happens when:

* a classic topic has no queue for a partition: no group has subscribed to the topic yet
  (and ``rabbitmq.declare.groups`` names none), so nobody would ever read the message;
* a stream queue is still recovering after a broker restart while clients can already
  connect (measured on RabbitMQ 3.10: the first 9-15 of 50 messages published right
  after ``start_app``).

While the connection is down (the I/O thread reconnects with backoff), batches wait; one
still unpublished after ``rabbitmq.connection.timeout.ms`` fails with a
:class:`~omconnect.errors.TransportTimeoutError`, so a send never hangs.
"""

from __future__ import annotations

import collections
import threading
import time
from collections.abc import Sequence
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

from omconnect.errors import (
    ConnectError,
    RetriableTransportError,
    SendError,
    TransportError,
    TransportTimeoutError,
)
from omconnect.records import RecordMetadata
from omconnect.transport.kit.checks import check_message_sizes, failed_batch
from omconnect.transport.kit.partitioning import Partitioner, UnknownPartitionError
from omconnect.transport.messages import Message
from omconnect.transport.spi import Producer
from omconnect_rabbitmq.admin import TopicInfo, Topology
from omconnect_rabbitmq.client import (
    ChannelOps,
    ConnectionSettings,
    IoConnection,
    chain,
    pika_module,
)
from omconnect_rabbitmq.codec import amqp_headers, amqp_table
from omconnect_rabbitmq.errors import translate
from omconnect_rabbitmq.topology import routing_key, topic_exchange

if TYPE_CHECKING:
    from omconnect.columnar.metadata import BatchMetadata

__all__ = ["RabbitMQProducer"]


class _Batch:
    """A batch on its way: what to publish, its future, and which of its messages the
    broker returned.
    """

    __slots__ = ("acks", "created", "first", "future", "last", "publishes", "returned")

    def __init__(self, publishes: list[tuple[str, str, bytes, Any]],
                 acks: list[RecordMetadata] | BatchMetadata) -> None:
        self.publishes = publishes
        self.acks = acks
        """The acknowledgement: a list (``send``) or a batch's (``send_batch``)."""
        self.future: Future[Any] = Future()
        self.created = time.monotonic()
        self.first = 0
        self.last = 0
        self.returned: dict[int, BaseException] = {}

    def confirmed(self) -> None:
        """Every message is confirmed: done, unless some were returned (those fail,
        retriably; the others are acknowledged and are not sent again).
        """
        if self.future.done():
            return
        if not self.returned:
            self.future.set_result(self.acks)
            return
        acks = self.acks if isinstance(self.acks, list) else self.acks.records()
        outcomes: list[Any] = [self.returned.get(i, ack) for i, ack in enumerate(acks)]
        first = next(iter(self.returned.values()))
        self.future.set_exception(SendError(
            f"{len(self.returned)} of {len(acks)} message(s) not stored: {first}",
            outcomes))

    def fail(self, error: BaseException) -> None:
        if self.future.done():
            return
        retriable = error if isinstance(error, ConnectError) else RetriableTransportError(
            str(error))
        self.future.set_exception(SendError(
            f"batch of {len(self.publishes)} message(s) not acknowledged: {retriable}",
            [retriable] * len(self.publishes)))


class RabbitMQProducer(Producer):
    """Publishes batches with publisher confirms; safe to call from any thread.

    Args:
        settings: How to connect.
        topology: The transport's topology (topic partition counts, implicit creation).
        max_message_bytes: Largest message accepted (key + value + headers).
        partitioner: Places messages in partitions.

    Raises:
        TransportError: The broker cannot be reached or refuses the connection.

    """

    def __init__(
        self,
        settings: ConnectionSettings,
        topology: Topology,
        *,
        max_message_bytes: int,
        partitioner: Partitioner,
    ) -> None:
        self._topology = topology
        self._limit = max_message_bytes
        self._partitioner = partitioner
        self._pika = pika_module()
        self._infos: dict[str, TopicInfo] = {}
        self._closed = False
        self._lock = threading.Lock()
        self._outstanding: set[Future[Any]] = set()
        # loop-thread state
        self._channel: ChannelOps | None = None
        self._tag = 0
        self._confirmed = 0
        self._resolved: set[int] = set()
        self._inflight: collections.deque[_Batch] = collections.deque()
        self._backlog: collections.deque[_Batch] = collections.deque()
        self._timer: Any = None
        self._io = IoConnection(settings, name="producer", on_connected=self._setup,
                                on_lost=self._lost)
        self._io.start()

    # -- the caller's side -------------------------------------------------------------
    def send(self, messages: Sequence[Message]) -> Future[list[RecordMetadata]]:
        """Publish a batch; the future completes when the broker confirmed all of it.

        Raises:
            MessageTooLargeError: A message is over ``rabbitmq.max.message.bytes``
                (nothing of the batch is sent).
            TransportError: The producer is closed.

        """
        if self._closed:
            raise TransportError("the producer is closed")
        check_message_sizes(messages, self._limit)
        try:
            partitions = self._partitioner.place(messages, self._partition_count)
        except UnknownPartitionError as exc:
            future: Future[list[RecordMetadata]] = Future()
            future.set_exception(failed_batch(len(messages), exc.index, exc))
            return future
        stamp = time.time_ns() // 1_000_000
        properties = self._pika.BasicProperties
        publishes = []
        acks = []
        exchanges: dict[str, str] = {}
        for message, partition in zip(messages, partitions, strict=True):
            timestamp = message.timestamp if message.timestamp is not None else stamp
            exchange = exchanges.get(message.topic)
            if exchange is None:
                self._info(message.topic)  # the topic exists (created when missing)
                exchange = exchanges[message.topic] = topic_exchange(message.topic)
            publishes.append((exchange, routing_key(partition), message.value or b"",
                              properties(delivery_mode=2, timestamp=timestamp // 1000,
                                         headers=amqp_headers(message, timestamp))))
            acks.append(RecordMetadata(message.topic, partition, None, timestamp))
        batch = _Batch(publishes, acks)
        if not publishes:
            batch.future.set_result([])
            return batch.future
        return self._submit(batch)

    def send_batch(self, topic: str, batch: Any) -> Future[Any]:
        """Publish the rows of an Arrow batch (see
        :meth:`~omconnect.transport.Producer.send_batch`), placed and encoded as
        :meth:`send` places and encodes messages, from the columns: no ``Message`` per
        row. The future's result is a :class:`~omconnect.columnar.BatchMetadata` (no
        offsets: RabbitMQ assigns none at publish time).

        Raises:
            MessageTooLargeError: A row is over ``rabbitmq.max.message.bytes`` (nothing
                of the batch is sent).
            TransportError: The producer is closed.

        """
        import pyarrow as pa

        from omconnect.columnar.columns import wire_headers
        from omconnect.columnar.metadata import BatchMetadata
        from omconnect.columnar.sizes import check_row_sizes
        from omconnect.transport.kit.column_runs import placed_rows

        if self._closed:
            raise TransportError("the producer is closed")
        check_row_sizes(topic, batch, self._limit)
        rows = batch.num_rows
        if rows == 0:
            return super().send_batch(topic, batch)
        try:
            partitions, timestamps, placed = placed_rows(
                topic, batch, self._partition_count(topic), self._partitioner,
                time.time_ns() // 1_000_000)
        except UnknownPartitionError as exc:
            failed: Future[Any] = Future()
            failed.set_exception(failed_batch(rows, exc.index, exc))
            return failed
        keys = placed.column("key").to_pylist()
        values = placed.column("value").to_pylist()
        headers = wire_headers(placed.column("headers") if "headers" in placed.schema.names
                               else None, rows)
        exchange = topic_exchange(topic)
        keys_of = [routing_key(p) for p in range(int(partitions.max()) + 1)]
        properties = self._pika.BasicProperties
        publishes = [
            (exchange, keys_of[partition], value or b"",
             properties(delivery_mode=2, timestamp=stamp // 1000,
                        headers=amqp_table(key, value is None, pairs, stamp)))
            for partition, stamp, key, value, pairs in zip(
                partitions.tolist(), timestamps.tolist(), keys, values, headers,
                strict=True)]
        acks = BatchMetadata(topic, pa.array(partitions, pa.int32()),
                             pa.nulls(rows, pa.int64()), pa.array(timestamps, pa.int64()))
        return self._submit(_Batch(publishes, acks))

    def _submit(self, batch: _Batch) -> Future[Any]:
        """Hand ``batch`` to the I/O thread; its future completes once it is confirmed."""
        with self._lock:
            self._outstanding.add(batch.future)
        batch.future.add_done_callback(self._forget)
        self._io.post(lambda: self._enqueue(batch))
        return batch.future

    def _forget(self, future: Future[Any]) -> None:
        with self._lock:
            self._outstanding.discard(future)

    def _info(self, topic: str) -> TopicInfo:
        info = self._infos.get(topic)
        if info is None:
            info = self._infos[topic] = self._topology.ensure(topic)
        return info

    def _partition_count(self, topic: str) -> int:
        return self._info(topic).partitions

    def flush(self, timeout: float | None = None) -> None:
        """Block until every batch sent so far is confirmed or failed.

        Raises:
            TransportTimeoutError: Not done within ``timeout`` seconds.

        """
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._lock:
            pending = list(self._outstanding)
        for future in pending:
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            try:
                future.exception(timeout=remaining)
            except TimeoutError:
                raise TransportTimeoutError(
                    f"flush: {sum(not f.done() for f in pending)} batch(es) still "
                    f"unconfirmed after {timeout:g} s") from None

    def close(self, timeout: float | None = None) -> None:
        """Flush (waiting at most ``timeout``), then close the connection. Idempotent."""
        if self._closed:
            return
        self._closed = True
        try:
            self.flush(timeout if timeout is not None else self._io.settings.timeout * 3)
        finally:
            self._io.close()
            with self._lock:
                pending = list(self._outstanding)
            for future in pending:
                if not future.done():
                    future.set_exception(TransportError("the producer was closed before the "
                                                        "batch was acknowledged"))

    # -- the loop's side --------------------------------------------------------------
    def _setup(self, connection: Any) -> Future[Any]:
        del connection
        return chain(self._io.channel("publishing"), self._confirming)

    def _confirming(self, channel: ChannelOps) -> Future[Any]:
        future: Future[Any] = Future()

        def ready(_frame: Any) -> None:
            self._channel = channel
            self._tag = 0
            self._confirmed = 0
            self._resolved = set()
            channel.on_close(lambda reason: self._channel_closed(channel, reason))
            future.set_result(None)
            self._drain()

        channel.channel.add_on_return_callback(self._on_return)
        channel.channel.confirm_delivery(self._on_confirm, callback=ready)
        if self._timer is None:
            self._timer = self._io.call_later(0.5, self._expire)
        return future

    def _channel_closed(self, channel: ChannelOps, reason: BaseException) -> None:
        if self._channel is channel:
            self._channel = None
        self._fail_inflight(translate(reason, action="publishing", where=self._io.target))
        connection = self._io.connection
        if connection is not None and connection.is_open and not self._io.closed:
            self._io.post(lambda: chain(self._io.channel("publishing"), self._confirming))

    def _lost(self, error: ConnectError) -> None:
        self._channel = None
        self._fail_inflight(error)

    def _fail_inflight(self, error: BaseException) -> None:
        inflight, self._inflight = self._inflight, collections.deque()
        for batch in inflight:
            batch.fail(error)

    def _enqueue(self, batch: _Batch) -> None:
        self._backlog.append(batch)
        self._drain()

    def _drain(self) -> None:
        channel = self._channel
        while self._backlog and channel is not None and channel.closed is None:
            batch = self._backlog.popleft()
            publish = channel.channel.basic_publish
            tag = self._tag
            try:
                for exchange, key, body, properties in batch.publishes:
                    tag += 1
                    properties.message_id = str(tag)  # a return names it by its tag
                    publish(exchange, key, body, properties, True)
            except Exception as exc:
                batch.fail(translate(exc, action="publishing", where=self._io.target))
                continue
            batch.first = self._tag + 1
            self._tag += len(batch.publishes)
            batch.last = self._tag
            self._inflight.append(batch)

    def _expire(self) -> None:
        """Fail batches that waited for a connection longer than the timeout."""
        limit = time.monotonic() - self._io.settings.timeout
        while self._backlog and self._backlog[0].created < limit:
            self._backlog.popleft().fail(TransportTimeoutError(
                f"no connection to the broker ({self._io.target}) within "
                f"{self._io.settings.timeout:g} s; the batch was not sent"))
        if not self._io.closed:
            self._timer = self._io.call_later(0.5, self._expire)

    def _on_return(self, _channel: Any, method: Any, properties: Any, _body: bytes) -> None:
        """The broker could not route a message to any queue (it acknowledges it next,
        but has not stored it): fail its batch, retriably.
        """
        try:
            tag = int(properties.message_id)
        except (TypeError, ValueError):
            return  # not one of ours
        for batch in self._inflight:
            if batch.first <= tag <= batch.last:
                batch.returned[tag - batch.first] = RetriableTransportError(
                    f"no queue took a message to partition {method.routing_key} of "
                    f"{method.exchange!r} ({method.reply_code} {method.reply_text}): on a "
                    "classic topic no group has subscribed yet (rabbitmq.declare.groups "
                    "declares groups up front), or a stream queue is still recovering "
                    "after a broker restart; it was not stored")
                break

    def _on_confirm(self, frame: Any) -> None:
        method = frame.method
        tag = method.delivery_tag
        nacked = not method.NAME.endswith("Ack")
        if nacked:
            first = self._confirmed + 1 if method.multiple else tag
            for batch in list(self._inflight):
                if batch.first <= tag and batch.last >= first:
                    batch.fail(RetriableTransportError(
                        "the broker could not store the batch (negative confirm)"))
            self._resolved.update(range(first, tag + 1))
        elif method.multiple:
            self._confirmed = max(self._confirmed, tag)
        else:
            self._resolved.add(tag)
        while self._confirmed + 1 in self._resolved:
            self._confirmed += 1
            self._resolved.discard(self._confirmed)
        if method.multiple or nacked:
            self._resolved = {t for t in self._resolved if t > self._confirmed}
        while self._inflight and self._inflight[0].last <= self._confirmed:
            self._inflight.popleft().confirmed()
