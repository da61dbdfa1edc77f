"""The key/value store (source offsets, connector configs and statuses) on a JetStream
key/value bucket.

A namespace is the bucket ``<prefix>-kv-<namespace>`` (its stream ``KV_<bucket>`` keeps
the last message of each key, on file storage); a key is written as the bucket's key
:func:`~omconnect_nats.naming.encode_token` makes of it, so any key omconnect takes fits
the bucket's charset and reads back exactly.

* **put / put_many** publish one message per key (a ``None`` value: a delete marker,
  ``KV-Operation: DEL``, as the NATS key/value API writes it) and return once the server
  acknowledged every one (stored: it survives a restart of the server and of the
  process). The writes of one call are not atomic: a failure can leave some stored.
* **get / scan** answer from a view of the bucket kept in memory
  (:class:`~omconnect.transport.kit.log_kv_store.LogKeyValueStore`): a pull reader
  (:class:`~omconnect_nats.pulling.PullReader`) streams the bucket's messages into it,
  and each call first reads up to the stream's last sequence, which it asks the server
  for, so it sees every write acknowledged before it was called, by any process.
* **Last write wins** in stream order: the server orders the writes of every process.
"""

from __future__ import annotations

import asyncio
import threading
import time

from omconnect.errors import TransportTimeoutError
from omconnect.transport.kit.log_kv_store import LogKeyValueStore
from omconnect_nats.client import NatsClient, nats_module
from omconnect_nats.errors import ErrorContext, translate, translated_errors
from omconnect_nats.naming import decode_token, encode_token
from omconnect_nats.pulling import PullReader
from omconnect_nats.topics import Topology

__all__ = ["NatsKeyValueStore"]

_DELETE = {"KV-Operation": "DEL"}


class NatsKeyValueStore(LogKeyValueStore):
    """A durable map on a JetStream key/value bucket; see the module docstring.
    Thread-safe.

    Args:
        client: The transport's client.
        topology: The transport's buckets.
        namespace: The store's name.
        where: For error messages.

    """

    def __init__(self, client: NatsClient, topology: Topology, namespace: str,
                 where: ErrorContext) -> None:
        super().__init__()
        self._client = client
        self._topology = topology
        self._where = where
        self.bucket = topology.names.kv_bucket(namespace)
        self._subject_prefix = f"$KV.{self.bucket}."
        self._arrived = threading.Event()
        self._reader = PullReader(f"KV_{self.bucket}", self._subject_prefix + ">",
                                  batch=1000, expires=5.0, inactive_threshold=300.0,
                                  wake=self._arrived.set)
        self._applied = 0
        self._api = nats_module().js.api
        with translated_errors(f"opening the key/value store {namespace!r}", where):
            client.call(self._open(1), action=f"opening the key/value store {namespace!r}")
        self._catch_up()

    async def _open(self, start_seq: int) -> None:
        js = await self._client.jetstream()
        await self._topology.ensure_bucket_stream(js, self.bucket)
        await self._reader.open(js, start_seq, self._api)

    # -- the log side of LogKeyValueStore ---------------------------------------------

    def _append(self, items: dict[str, bytes | None]) -> None:
        """Publish one message per key; return once the server stored every one.

        Raises:
            TransportError: A write was not acknowledged (some may have been stored).

        """
        async def publish() -> None:
            js = await self._client.jetstream()
            await asyncio.gather(*(
                js.publish(self._subject_prefix + encode_token(key), value or b"",
                           headers=_DELETE if value is None else None)
                for key, value in items.items()))

        action = f"writing to the key/value store {self.bucket!r}"
        with translated_errors(action, self._where):
            self._client.call(publish(), action=action)

    def _catch_up(self) -> None:
        """Apply every write stored before this call, by any process."""
        self._check_open()
        action = f"reading the key/value store {self.bucket!r}"
        with self._lock, translated_errors(action, self._where):
            last = self._client.call(self._last_seq(), action=action)
            deadline = time.monotonic() + self._where.timeout_s
            while self._applied < last:
                self._arrived.clear()
                for seq, data, headers, _, subject in self._reader.take(10_000):
                    deleted = bool(headers and headers.get("KV-Operation"))
                    self._apply(decode_token(subject[len(self._subject_prefix):]),
                                None if deleted else data)
                    self._applied = seq
                if self._applied >= last:
                    break
                if self._reader.wants_more():
                    self._client.soon(self._reader.refill)
                if not self._reader.healthy:
                    self._client.call(self._open(self._applied + 1), action=action)
                if time.monotonic() > deadline:
                    raise TransportTimeoutError(
                        f"nats: {action}: the bucket's messages did not arrive within "
                        f"{self._where.timeout_s:g} s")
                self._arrived.wait(0.2)

    async def _last_seq(self) -> int:
        js = await self._client.jetstream()
        try:
            info = await js.stream_info(f"KV_{self.bucket}")
        except Exception as exc:
            raise translate(exc, f"reading the key/value store {self.bucket!r}",
                            self._where) from exc
        return int(info.state.last_seq)

    def _release(self) -> None:
        """Delete the bucket's reader."""
        async def close() -> None:
            js = self._client.js
            if js is not None:
                await self._reader.close(js)

        if not self._client.on_loop():
            try:
                self._client.call(close(), timeout=self._where.timeout_s,
                                  action="closing the key/value store")
            except Exception:  # it expires on the server anyway
                return

    def _description(self) -> str:
        return f"key/value store on bucket {self.bucket!r}"
