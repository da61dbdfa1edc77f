"""The producer: JetStream publishes, one publish acknowledgement (PubAck) per message.

``send`` checks sizes, then hands the batch to the client's loop and returns its future
at once. On the loop, the batches of one producer are published in the order they were
sent (an :class:`asyncio.Lock`, which queues its waiters in order): each message goes to
its partition's subject (the one it names, else the one its key picks,
:mod:`omconnect.transport.kit.partitioning`) with a reply subject of the connection's
:class:`~omconnect_nats.pulling.Mailbox`, all of them written without waiting (one
connection keeps their order, so a key's messages are stored in the order sent). The
server answers each with a PubAck naming the stream sequence it was stored at: the
message's offset is that sequence minus one. The batch's future resolves when every
message is acknowledged, with a :class:`~omconnect.records.RecordMetadata` per message
(a :class:`~omconnect.columnar.BatchMetadata` for ``send_batch``), or fails with a
:class:`~omconnect.errors.SendError` whose outcomes say which messages were stored and
which failed: a JetStream error, no stream on the subject (the topic was deleted: the
next send creates it again), no answer within ``nats.send.timeout.ms``, or the connection
lost with the acknowledgement outstanding (a retriable error: the message may or may not
be stored, so a resend may duplicate it).

A topic is created on its first message, with ``nats.default.partitions`` partitions.
``send`` blocks while ``nats.max.pending.messages`` messages of the producer wait for
their acknowledgements (back-pressure, at most ``nats.send.timeout.ms``).
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from itertools import repeat
from typing import Any

from omconnect.errors import (
    ConnectError,
    MessageTooLargeError,
    RetriableTransportError,
    SendError,
    TransportError,
    TransportTimeoutError,
)
from omconnect.records import RecordMetadata, build_record_metadata
from omconnect.transport.kit.checks import check_message_sizes
from omconnect.transport.kit.clock import now_ms
from omconnect.transport.kit.partitioning import Partitioner, UnknownPartitionError
from omconnect.transport.messages import Message, TopicSpec, WireHeaders
from omconnect.transport.spi import Producer
from omconnect_nats.client import NatsClient
from omconnect_nats.codec import message_headers
from omconnect_nats.errors import ErrorContext, translate
from omconnect_nats.pulling import Mailbox
from omconnect_nats.topics import Topology

__all__ = ["NatsProducer", "PartitionCounts"]

_HEADER_LINE = 12  # "NATS/1.0\r\n" and the closing "\r\n"


class PartitionCounts:
    """The transport's cache of topic partition counts, creating topics on first use
    (on the loop).

    Args:
        topology: The transport's topics.
        default_partitions: ``nats.default.partitions``.

    """

    def __init__(self, topology: Topology, default_partitions: int) -> None:
        self._topology = topology
        self._default = default_partitions
        self._counts: dict[str, int] = {}
        self._unsure: set[str] = set()

    async def of(self, js: Any, topic: str) -> int:
        """The partition count of ``topic``, created if missing."""
        count = self._counts.get(topic)
        if count is not None:
            return count
        found = await self._topology.partitions(js, topic)
        if found is None:
            found = await self._topology.create(js, TopicSpec(topic, self._default))
        elif topic in self._unsure:  # its streams may be gone: make sure they exist
            await self._topology.ensure_streams(js, topic, found)
        self._unsure.discard(topic)
        self._counts[topic] = found
        return found

    def forget(self, topic: str) -> None:
        """Look ``topic`` up again next time, and make sure its streams exist then."""
        self._counts.pop(topic, None)
        self._unsure.add(topic)


class _Acks:
    """The acknowledgements of one batch: each row's (partition, offset) or error, and
    the future they resolve.
    """

    __slots__ = ("errors", "finish", "future", "offsets", "partitions", "remaining",
                 "timer", "timestamps", "token", "topics")

    def __init__(self, topics: Sequence[str], timestamps: list[int],
                 finish: Callable[[_Acks], Any]) -> None:
        count = len(timestamps)
        self.topics = topics
        self.timestamps = timestamps
        self.partitions: list[int] = [0] * count
        self.offsets: list[Any] = [None] * count
        self.errors: dict[int, ConnectError] = {}
        self.remaining = count
        self.finish = finish
        self.future: Future[Any] = Future()
        self.timer: asyncio.TimerHandle | None = None
        self.token: str | None = None

    def acknowledge(self, index: int, offset: int) -> None:
        if self.offsets[index] is None and index not in self.errors:
            self.offsets[index] = offset
            self.remaining -= 1

    def fail(self, index: int, error: ConnectError) -> None:
        if self.offsets[index] is None and index not in self.errors:
            self.errors[index] = error
            self.remaining -= 1

    def fail_rest(self, error: ConnectError, start: int = 0) -> None:
        for index in range(start, len(self.offsets)):
            self.fail(index, error)

    @property
    def settled(self) -> bool:
        return self.remaining <= 0

    def records(self) -> list[RecordMetadata]:
        return list(map(build_record_metadata, self.topics, self.partitions, self.offsets,
                        self.timestamps))

    def outcomes(self) -> list[Any]:
        records = self.records()
        return [self.errors.get(index, record) for index, record in enumerate(records)]


def _message_result(acks: _Acks) -> list[RecordMetadata]:
    return acks.records()


def _columns_result(acks: _Acks) -> Any:
    import pyarrow as pa

    from omconnect.columnar.metadata import BatchMetadata

    return BatchMetadata(acks.topics[0] if acks.topics else "",
                         pa.array(acks.partitions, pa.int32()),
                         pa.array(acks.offsets, pa.int64()),
                         pa.array(acks.timestamps, pa.int64()))


class NatsProducer(Producer):
    """Publishes batches to JetStream through the transport's connection; any thread may
    call it. See the module docstring.

    Args:
        client: The transport's client.
        topology: The transport's topics.
        mailbox: The connection's reply subscription.
        counts: The transport's partition counts.
        partitioner: Places messages without a partition.
        max_message_bytes: ``nats.max.message.bytes``.
        max_pending: ``nats.max.pending.messages``.
        send_timeout: ``nats.send.timeout.ms`` in seconds.
        where: For error messages.

    """

    def __init__(self, client: NatsClient, topology: Topology, mailbox: Mailbox,
                 counts: PartitionCounts, partitioner: Partitioner, *,
                 max_message_bytes: int, max_pending: int, send_timeout: float,
                 where: ErrorContext) -> None:
        self._client = client
        self._names = topology.names
        self._mailbox = mailbox
        self._counts = counts
        self._partitioner = partitioner
        self._limit = max_message_bytes
        self._max_pending = max_pending
        self._send_timeout = send_timeout
        self._where = where
        self._order: asyncio.Lock | None = None
        self._cond = threading.Condition()
        self._inflight = 0
        self._pending: set[_Acks] = set()
        self._closed = False

    # -- the Producer SPI ------------------------------------------------------------

    def send(self, messages: Sequence[Message]) -> Future[list[RecordMetadata]]:
        """Publish a batch; the future resolves once every message is acknowledged.

        Raises:
            MessageTooLargeError: A message is over ``nats.max.message.bytes`` (none sent).
            TransportError: The producer is closed.
            TransportTimeoutError: ``nats.max.pending.messages`` stayed in flight for the
                send timeout.

        """
        self._check_sendable()
        check_message_sizes(messages, self._limit)
        batch = tuple(messages)
        stamp = now_ms()
        acks = _Acks([m.topic for m in batch],
                     [stamp if m.timestamp is None else m.timestamp for m in batch],
                     _message_result)
        if not batch:
            acks.future.set_result([])
            return acks.future
        rows = _Rows(batch, [m.key for m in batch], [m.value for m in batch],
                     [m.headers for m in batch], [m.partition for m in batch])
        return self._start(rows, acks)

    def send_batch(self, topic: str, batch: Any) -> Future[Any]:
        """Publish the rows of an Arrow batch straight from its columns (no ``Message``
        per row); the future's result is a :class:`~omconnect.columnar.BatchMetadata`.

        Raises:
            MessageTooLargeError: A row is over ``nats.max.message.bytes`` (none sent).
            TransportError: The producer is closed.

        """
        from omconnect.columnar.columns import wire_headers
        from omconnect.columnar.sizes import check_row_sizes

        self._check_sendable()
        count = batch.num_rows
        if count == 0:
            return super().send_batch(topic, batch)
        check_row_sizes(topic, batch, self._limit, key="nats.max.message.bytes")
        names = batch.schema.names

        def column(name: str) -> list[Any]:
            if name not in names:
                return [None] * count
            return batch.column(name).to_pylist()  # type: ignore[no-any-return]

        stamp = now_ms()
        stamps = [stamp if t is None else t for t in column("timestamp")]
        headers = wire_headers(batch.column("headers") if "headers" in names else None,
                               count)
        acks = _Acks(list(repeat(topic, count)), stamps, _columns_result)
        rows = _Rows(None, _as_bytes(column("key")), _as_bytes(column("value")), headers,
                     column("partition"), topic=topic)
        return self._start(rows, acks)

    def flush(self, timeout: float | None = None) -> None:
        """Wait until every batch sent so far is acknowledged or failed.

        Raises:
            TransportTimeoutError: Not done within ``timeout`` seconds.

        """
        if self._client.on_loop():
            return  # an acknowledgement callback: waiting here would wait for itself
        with self._cond:
            if not self._cond.wait_for(lambda: self._inflight == 0, timeout):
                raise TransportTimeoutError(
                    f"nats: flush: {self._inflight} message(s) still unacknowledged after "
                    f"{timeout:g} s")

    def close(self, timeout: float | None = None) -> None:
        """Wait for what was sent (up to ``timeout`` seconds), then refuse further
        sends. Idempotent.
        """
        if self._closed:
            return
        try:
            self.flush(timeout)
        finally:
            self._closed = True

    # -- on the caller's thread ----------------------------------------------------------

    def _check_sendable(self) -> None:
        if self._closed:
            raise TransportError("nats: send on a closed producer")

    def _start(self, rows: _Rows, acks: _Acks) -> Future[Any]:
        count = len(acks.timestamps)
        with self._cond:
            if (self._inflight and not self._client.on_loop()
                    and self._inflight + count > self._max_pending):
                room = self._cond.wait_for(
                    lambda: not self._inflight
                    or self._inflight + count <= self._max_pending, self._send_timeout)
                if not room:
                    raise TransportTimeoutError(
                        f"nats: send waited {self._send_timeout:g} s for room: "
                        f"{self._inflight} messages await their acknowledgements "
                        "(nats.max.pending.messages)")
            self._inflight += count
        acks.future.add_done_callback(lambda _: self._settled(count))
        try:
            self._client.submit(self._publish(rows, acks))
        except BaseException as exc:
            error = exc if isinstance(exc, ConnectError) else TransportError(
                f"nats: cannot send: {exc}")
            acks.fail_rest(error)
            self._finish(acks)
        return acks.future

    def _settled(self, count: int) -> None:
        with self._cond:
            self._inflight -= count
            self._cond.notify_all()

    # -- on the loop -------------------------------------------------------------------

    async def _publish(self, rows: _Rows, acks: _Acks) -> None:
        if self._order is None:
            self._order = asyncio.Lock()
        self._pending.add(acks)
        acks.timer = asyncio.get_running_loop().call_later(self._send_timeout, self._expire,
                                                           acks)
        async with self._order:
            if acks.future.done():  # expired while it waited: nothing of it is sent
                return
            try:
                await self._publish_rows(rows, acks)
            except Exception as exc:  # a bug or a failure before the first publish
                acks.fail_rest(translate(exc, "sending", self._where))
            if acks.settled:
                self._finish(acks)

    async def _publish_rows(self, rows: _Rows, acks: _Acks) -> None:
        client = self._client
        nc = await client.connection()
        js = client.js
        await self._mailbox.open(nc)
        if acks.future.done():
            return
        topics = sorted(set(acks.topics))
        counts: dict[str, int] = {}
        for topic in topics:
            try:
                counts[topic] = await self._counts.of(js, topic)
            except Exception as exc:
                error = translate(exc, f"creating topic {topic!r}", self._where, topic=topic)
                for index, name in enumerate(acks.topics):
                    if name == topic:
                        acks.fail(index, error)
        partitions = self._place(rows, acks, counts)
        max_payload = int(nc.max_payload)
        encoded: list[tuple[int, str, bytes, dict[str, str]]] = []
        names = self._names
        for index, partition in enumerate(partitions):
            if partition is None:
                continue
            topic = acks.topics[index]
            acks.partitions[index] = partition
            value = rows.values[index]
            headers = message_headers(rows.keys[index], value, rows.headers[index] or (),
                                      acks.timestamps[index])
            payload = value or b""
            size = len(payload) + _HEADER_LINE + sum(len(k) + len(v) + 4
                                                     for k, v in headers.items())
            if size > max_payload:  # the server's own limit: nothing of the batch is sent
                raise MessageTooLargeError(size, max_payload, topic=topic, index=index,
                                           key="nats.max.message.bytes")
            encoded.append((index, names.subject(topic, partition), payload, headers))
        if acks.settled or acks.future.done():
            return
        token, reply = self._mailbox.register(lambda msg: self._on_ack(acks, msg))
        acks.token = token
        publish = nc.publish
        for position, (index, subject, payload, headers) in enumerate(encoded):
            if acks.future.done():  # failed meanwhile (timed out, connection lost): stop
                break
            try:
                await publish(subject, payload, reply=f"{reply}.{index}", headers=headers)
            except Exception as exc:
                error = translate(exc, f"sending to topic {acks.topics[index]!r}",
                                  self._where, topic=acks.topics[index])
                for rest, _, _, _ in encoded[position:]:
                    acks.fail(rest, error)
                break

    def _place(self, rows: _Rows, acks: _Acks, counts: dict[str, int]) -> list[int | None]:
        """Each row's partition (``None`` where it failed already)."""
        placed: list[int | None] = []
        keys = rows.keys
        sticky: dict[str, int] = {}
        for index, topic in enumerate(acks.topics):
            count = counts.get(topic)
            if count is None or index in acks.errors:
                placed.append(None)
                continue
            partition = rows.partitions[index]
            if partition is not None:
                if not 0 <= partition < count:
                    acks.fail(index, UnknownPartitionError(
                        f"partition {partition} does not exist: topic {topic!r} has {count} "
                        f"partition(s), 0 to {count - 1}", index=index, topic=topic,
                        partition=partition))
                    placed.append(None)
                    continue
                placed.append(partition)
            elif keys[index] is not None:
                placed.append(self._partitioner.key_hash(keys[index]) % count)  # type: ignore[arg-type]
            else:
                if topic not in sticky:
                    sticky[topic] = self._partitioner.next_sticky() % count
                placed.append(sticky[topic])
        return placed

    def _on_ack(self, acks: _Acks, msg: Any) -> None:
        tail = msg.subject.rpartition(".")[2]
        index = int(tail)
        headers = msg.headers
        topic = acks.topics[index]
        if headers and headers.get("Status") == "503":
            self._counts.forget(topic)
            acks.fail(index, RetriableTransportError(
                f"nats: sending to topic {topic!r}: no stream took the message (the topic "
                "was deleted, or JetStream is off); it will be created again on the next "
                "send", topic=topic))
        else:
            data = msg.data
            at = data.find(b'"seq":')
            if at > 0 and b'"error"' not in data:  # the usual answer, read without json
                end = at + 6
                while end < len(data) and 48 <= data[end] <= 57:
                    end += 1
                acks.acknowledge(index, int(data[at + 6:end]) - 1)
                if acks.settled:
                    self._finish(acks)
                return
            try:
                reply = json.loads(data)
                error = reply.get("error")
                if error is None:
                    acks.acknowledge(index, int(reply["seq"]) - 1)
                else:
                    acks.fail(index, translate(_api_error(error), f"sending to topic "
                                                                  f"{topic!r}", self._where,
                                               topic=topic))
            except (ValueError, KeyError, TypeError) as exc:
                acks.fail(index, TransportError(f"nats: sending to topic {topic!r}: an "
                                                f"unreadable acknowledgement: {exc}",
                                                topic=topic))
        if acks.settled:
            self._finish(acks)

    def _expire(self, acks: _Acks) -> None:
        if acks.settled:
            return
        acks.fail_rest(TransportTimeoutError(
            f"nats: {acks.remaining} message(s) not acknowledged within "
            f"{self._send_timeout:g} s (nats.send.timeout.ms); they may or may not be "
            "stored"))
        self._finish(acks)

    def connection_lost(self) -> None:
        """Fail every acknowledgement outstanding: it will not come (on the loop)."""
        for acks in list(self._pending):
            acks.fail_rest(RetriableTransportError(
                "nats: the connection was lost before the server acknowledged the message "
                "(it may or may not be stored)"))
            self._finish(acks)

    def _finish(self, acks: _Acks) -> None:
        if acks.future.done():
            return
        self._pending.discard(acks)
        if acks.token is not None:
            self._mailbox.unregister(acks.token)
        if acks.timer is not None:
            acks.timer.cancel()
        if not acks.errors:
            acks.future.set_result(acks.finish(acks))
            return
        outcomes = acks.outcomes()
        first = next(o for o in outcomes if isinstance(o, BaseException))
        error = SendError(f"{len(acks.errors)} of {len(outcomes)} messages were not "
                          f"acknowledged; first: {first}", outcomes)
        error.__cause__ = first
        acks.future.set_exception(error)


class _Rows:
    """A batch's fields, row by row (from messages, or from Arrow columns)."""

    __slots__ = ("headers", "keys", "messages", "partitions", "topic", "values")

    def __init__(self, messages: Sequence[Message] | None, keys: list[bytes | None],
                 values: list[bytes | None], headers: Sequence[WireHeaders | None],
                 partitions: list[int | None], *, topic: str | None = None) -> None:
        self.messages = messages
        self.keys = keys
        self.values = values
        self.headers = headers
        self.partitions = partitions
        self.topic = topic


def _as_bytes(values: list[Any]) -> list[bytes | None]:
    """Binary columns read as ``bytes``; string columns (a sender's choice) as UTF-8."""
    return [v.encode() if isinstance(v, str) else v for v in values]


class _ApiError(Exception):
    """A JetStream error answer, as the translation reads it."""

    def __init__(self, code: int | None, err_code: int | None, description: str) -> None:
        super().__init__(f"JetStream error {code} ({err_code}): {description}")
        self.code = code
        self.err_code = err_code
        self.description = description


def _api_error(error: dict[str, Any]) -> _ApiError:
    return _ApiError(error.get("code"), error.get("err_code"),
                     str(error.get("description", "")))
