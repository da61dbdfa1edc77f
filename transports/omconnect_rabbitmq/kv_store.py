"""The key/value store (source offsets, the topic catalog, stream positions) on a stream.

A namespace is one durable stream queue ``omc.kv.<namespace>``: an append-only log of
records, each holding the items of one ``put_many`` (a ``None`` value deletes its key).
The store keeps the map in memory and tails the stream:

* **open**: declare the stream, consume it from its first record, publish an empty marker
  record and apply records until the marker comes back. Every write confirmed before the
  open, by any process, is then in the map (the stream orders all writes).
* **put_many**: publish one record with a publisher confirm; return once the broker
  confirmed it (it is on disk and survives a broker restart) *and* the tail has applied it,
  so the writer's next ``get`` sees it, together with everything written before it.
* **get / scan**: read the map. Writes by other processes appear as the tail delivers them
  (milliseconds); :meth:`StreamKeyValueStore.refresh` waits until all writes confirmed
  before it are applied.

Last write wins in stream order, so two processes writing one key agree on its value.
:meth:`StreamKeyValueStore.put_if_absent` is the exception that makes a compare-and-set:
its record is marked, and every reader applies a marked item only when its key holds
nothing at that point of the stream; the writer reads its own record back and learns
the value that won. Two processes creating one topic at once thereby agree on one layout.
Limits: the stream is never compacted (each write adds a record, each open reads them all;
fine for offsets, written once per flush interval) and a value must fit in one message.
"""

from __future__ import annotations

import struct
import uuid
from collections.abc import Mapping
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any

from omconnect.errors import RetriableTransportError, TransportTimeoutError
from omconnect.transport.kit.log_kv_store import LogKeyValueStore
from omconnect_rabbitmq.client import (
    ChannelOps,
    ConnectionSettings,
    IoConnection,
    chain,
    pika_module,
)
from omconnect_rabbitmq.topology import STREAM_ARGUMENTS, kv_queue

__all__ = ["StreamKeyValueStore", "decode_items", "encode_items"]

_TOKEN = "omc-kv-token"
_IF_ABSENT = "omc-kv-if-absent"
_COUNT = struct.Struct(">I")
_SIZE = struct.Struct(">i")
_PREFETCH = 2000


def encode_items(items: Mapping[str, bytes | None]) -> bytes:
    """One record's body: the items, each as (key, value or deletion)."""
    parts = [_COUNT.pack(len(items))]
    for key, value in items.items():
        encoded = key.encode()
        parts.append(_COUNT.pack(len(encoded)))
        parts.append(encoded)
        if value is None:
            parts.append(_SIZE.pack(-1))
        else:
            parts.append(_SIZE.pack(len(value)))
            parts.append(bytes(value))
    return b"".join(parts)


def decode_items(body: bytes) -> list[tuple[str, bytes | None]]:
    """The items of a record body (see :func:`encode_items`)."""
    (count,) = _COUNT.unpack_from(body, 0)
    position = _COUNT.size
    items: list[tuple[str, bytes | None]] = []
    for _ in range(count):
        (length,) = _COUNT.unpack_from(body, position)
        position += _COUNT.size
        key = body[position:position + length].decode()
        position += length
        (size,) = _SIZE.unpack_from(body, position)
        position += _SIZE.size
        if size < 0:
            items.append((key, None))
        else:
            items.append((key, body[position:position + size]))
            position += size
    return items


class StreamKeyValueStore(LogKeyValueStore):
    """A namespace of the key/value store; see the module docstring. Thread-safe.

    Args:
        settings: How to connect.
        namespace: The namespace (one stream queue).

    Raises:
        TransportError: The broker cannot be reached or refuses the stream.

    """

    def __init__(self, settings: ConnectionSettings, namespace: str) -> None:
        if not isinstance(namespace, str) or not namespace:
            raise ValueError(f"a key/value store needs a non-empty namespace, got {namespace!r}")
        super().__init__()
        self.namespace = namespace
        self._queue = kv_queue(namespace)
        self._waiting: dict[str, Future[None]] = {}
        self._unconfirmed: dict[int, Future[None]] = {}
        self._published = 0
        self._next_offset: int | None = None
        self._publisher: ChannelOps | None = None
        self._pika = pika_module()
        self._io = IoConnection(settings, name=f"key/value store {namespace!r}",
                                on_connected=self._setup, on_lost=self._lost)
        self._io.start()
        try:
            self.refresh()
        except BaseException:
            self._io.close()
            raise

    # -- the loop side ----------------------------------------------------------------
    def _setup(self, connection: Any) -> Future[Any]:
        del connection
        io = self._io

        def declared(channel: ChannelOps) -> Future[Any]:
            return chain(channel.do("queue_declare", self._queue, durable=True,
                                    arguments=STREAM_ARGUMENTS),
                         lambda _: self._confirming(channel))

        publisher = chain(io.channel(f"writing store {self.namespace!r}"), declared)
        return chain(publisher, lambda _: chain(io.channel(f"reading store {self.namespace!r}"),
                                                self._tail))

    def _confirming(self, channel: ChannelOps) -> Future[Any]:
        self._published = 0
        self._publisher = channel
        future: Future[Any] = Future()
        try:
            channel.channel.confirm_delivery(self._confirmed,
                                             callback=lambda _f: future.set_result(None))
        except Exception as exc:
            future.set_exception(exc)
        return future

    def _tail(self, channel: ChannelOps) -> Future[Any]:
        start: Any = "first" if self._next_offset is None else self._next_offset

        def consume(_: Any) -> Future[Any]:
            return channel.do("basic_consume", self._queue, self._on_record,
                              arguments={"x-stream-offset": start})

        return chain(channel.do("basic_qos", prefetch_count=_PREFETCH), consume)

    def _on_record(self, channel: Any, method: Any, properties: Any, body: bytes) -> None:
        headers = properties.headers or {}
        offset = headers.get("x-stream-offset")
        if isinstance(offset, int):
            if self._next_offset is not None and offset < self._next_offset:
                channel.basic_ack(method.delivery_tag)  # before the resume point: seen
                return
            self._next_offset = offset + 1
        items = decode_items(body) if body else []
        if_absent = bool(headers.get(_IF_ABSENT))
        with self._lock:
            for key, value in items:
                if value is None or not if_absent or key not in self._values:
                    self._apply(key, value)
            token = headers.get(_TOKEN)
            if isinstance(token, bytes):
                token = token.decode()
            waiter = self._waiting.pop(token, None) if isinstance(token, str) else None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)
        channel.basic_ack(method.delivery_tag)

    def _confirmed(self, frame: Any) -> None:
        method = frame.method
        tag = method.delivery_tag
        done = [t for t in self._unconfirmed if t <= tag] if method.multiple else [tag]
        acked = method.NAME.endswith("Ack")
        for t in done:
            future = self._unconfirmed.pop(t, None)
            if future is None or future.done():
                continue
            if acked:
                future.set_result(None)
            else:
                future.set_exception(RetriableTransportError(
                    f"the broker did not store a write to key/value store {self.namespace!r} "
                    "(negative acknowledgement)"))

    def _lost(self, error: Exception) -> None:
        self._publisher = None
        pending, self._unconfirmed = self._unconfirmed, {}
        for future in pending.values():
            if not future.done():
                future.set_exception(error)

    def _publish(self, body: bytes, token: str, if_absent: bool = False) -> Future[None]:
        future: Future[None] = Future()
        channel = self._publisher
        if channel is None or channel.closed is not None:
            future.set_exception(RetriableTransportError(
                f"key/value store {self.namespace!r} is reconnecting to the broker"))
            return future
        headers: dict[str, Any] = {_TOKEN: token}
        if if_absent:
            headers[_IF_ABSENT] = 1
        properties = self._pika.BasicProperties(delivery_mode=2, headers=headers)
        try:
            channel.channel.basic_publish("", self._queue, body, properties)
        except Exception as exc:
            future.set_exception(exc)
            return future
        self._published += 1
        self._unconfirmed[self._published] = future
        return future

    # -- the store --------------------------------------------------------------------
    def _write(self, body: bytes, what: str, *, if_absent: bool = False) -> None:
        self._check_open()
        token = uuid.uuid4().hex
        applied: Future[None] = Future()
        with self._lock:
            self._waiting[token] = applied
        try:
            self._io.call(lambda: self._publish(body, token, if_absent), action=what)
            applied.result(timeout=self._io.settings.timeout)
        except FutureTimeout:
            raise TransportTimeoutError(
                f"{what}: the write was stored but not read back from the stream within "
                f"{self._io.settings.timeout:g} s") from None
        finally:
            with self._lock:
                self._waiting.pop(token, None)

    def refresh(self) -> None:
        """Wait until every write confirmed before this call (by any process) is applied.

        Raises:
            TransportError: The broker cannot be reached.

        """
        self._write(encode_items({}), f"reading key/value store {self.namespace!r}")

    def _append(self, items: dict[str, bytes | None]) -> None:
        """Store every item in one record; return once stored and applied (read back)."""
        self._write(encode_items(items), f"writing key/value store {self.namespace!r}")

    def put_if_absent(self, key: str, value: bytes) -> bytes:
        """Store ``value`` under ``key`` unless the key holds a value already; return the
        value the key holds afterwards (``value`` when this write won). Atomic across
        processes: every reader applies the stream's writes in one order.

        Raises:
            TransportError: The write failed (nothing may be assumed stored).

        """
        self._write(encode_items({key: bytes(value)}),
                    f"writing key/value store {self.namespace!r}", if_absent=True)
        with self._lock:
            won = self._values.get(key)
        assert won is not None  # our own record was applied before _write returned
        return won

    def _release(self) -> None:
        """Close the connection; the data stays in the stream."""
        self._io.close()

    def _description(self) -> str:
        return f"key/value store {self.namespace!r}"
