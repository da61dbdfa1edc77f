"""The topics of a transport on JetStream: :class:`Topology`.

A topic is its entry in the catalog bucket (``<prefix>-topics``: its partition count and
config, as JSON) and one stream per partition (``<prefix>_<topic>_<p>`` on the subject
``<prefix>.<topic>.<p>``). Creating a topic is create-if-absent across processes: the
entry is written with the key/value store's *create* (which fails when the key exists),
so of two creators asking for different partition counts one wins and the other adopts
its count; then each creator makes sure every partition's stream exists (adding a stream
that exists is a no-op). A reader of the catalog that finds an entry whose streams are
not there yet (its creator died in between) creates them.

A stream keeps its messages in files (``nats.storage=file``, the default) under the
limits of the topic's config: ``retention.ms`` (the stream's ``max_age``) and
``retention.bytes`` (``max_bytes``); other config keys are kept in the catalog only.

The buckets of the transport (catalog, groups, positions, key/value stores) are
JetStream key/value buckets (``KV_<bucket>`` streams, one message per key kept), readable
with any NATS tool.

Every method here is a coroutine run on the client's loop.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping
from typing import Any

from omconnect.transport.messages import TopicSpec
from omconnect_nats.naming import Names, decode_token, encode_token

__all__ = ["STREAM_EXISTS", "STREAM_NOT_FOUND", "Topology", "is_error"]

STREAM_NOT_FOUND = 10059
STREAM_EXISTS = 10058
_KEY_EXISTS = 10071
_CONSUMER_NOT_FOUND = 10014


def is_error(exc: BaseException, *codes: int) -> bool:
    """Whether ``exc`` is a JetStream API error with one of these error codes."""
    return getattr(exc, "err_code", None) in codes


class Topology:
    """Topics, streams and buckets of one transport.

    Args:
        names: The transport's names.
        storage: ``file`` or ``memory``.
        replicas: Stream replicas.
        nats_api: ``nats.js.api``.

    """

    def __init__(self, names: Names, *, storage: str, replicas: int, nats_api: Any) -> None:
        self.names = names
        self._storage = storage
        self._replicas = replicas
        self._api = nats_api
        self._buckets: dict[str, Any] = {}

    def _storage_type(self) -> Any:
        api = self._api
        return api.StorageType.FILE if self._storage == "file" else api.StorageType.MEMORY

    # -- buckets ---------------------------------------------------------------------

    async def bucket(self, js: Any, name: str) -> Any:
        """The key/value bucket ``name`` (a ``nats.js.kv.KeyValue``), created if missing."""
        found = self._buckets.get(name)
        if found is not None:
            return found
        await self.ensure_bucket_stream(js, name)
        kv = await js.key_value(name)
        self._buckets[name] = kv
        return kv

    async def ensure_bucket_stream(self, js: Any, name: str) -> str:
        """Create the stream of bucket ``name`` unless it exists; return its name."""
        api = self._api
        stream = f"KV_{name}"
        config = api.StreamConfig(
            name=stream, subjects=[f"$KV.{name}.>"], allow_rollup_hdrs=True,
            deny_delete=True, discard=api.DiscardPolicy.NEW, max_msgs_per_subject=1,
            max_msgs=-1, max_consumers=-1, max_msg_size=-1, duplicate_window=120.0,
            storage=self._storage_type(), num_replicas=self._replicas, allow_direct=True)
        try:
            await js.add_stream(config)
        except Exception as exc:
            if not is_error(exc, STREAM_EXISTS):
                raise
        return stream

    # -- the catalog -----------------------------------------------------------------

    async def _catalog(self, js: Any) -> Any:
        return await self.bucket(js, self.names.topics_bucket)

    async def partitions(self, js: Any, topic: str) -> int | None:
        """The partition count of ``topic``, or ``None`` when it does not exist."""
        entry = await self._entry(js, topic)
        return None if entry is None else int(entry["partitions"])

    async def _entry(self, js: Any, topic: str) -> dict[str, Any] | None:
        catalog = await self._catalog(js)
        try:
            found = await catalog.get(encode_token(topic))
        except Exception as exc:
            if type(exc).__name__ in ("KeyNotFoundError", "KeyDeletedError"):
                return None
            raise
        if not found.value:
            return None
        entry: dict[str, Any] = json.loads(found.value)
        return entry

    async def create(self, js: Any, spec: TopicSpec) -> int:
        """Create ``spec``'s topic unless it exists; return its partition count (the
        existing one when another creator won).
        """
        catalog = await self._catalog(js)
        entry: dict[str, Any] = {"partitions": spec.partitions, "config": dict(spec.config)}
        try:
            await catalog.create(encode_token(spec.name), json.dumps(entry).encode())
        except Exception as exc:
            if not (type(exc).__name__ == "KeyWrongLastSequenceError"
                    or is_error(exc, _KEY_EXISTS)):
                raise
            existing = await self._entry(js, spec.name)
            if existing is None:  # deleted meanwhile: try again
                return await self.create(js, spec)
            entry = existing
        await self.ensure_streams(js, spec.name, int(entry["partitions"]),
                                  entry.get("config") or {})
        return int(entry["partitions"])

    async def ensure_streams(self, js: Any, topic: str, partitions: int,
                             config: Mapping[str, str] | None = None) -> None:
        """Create every partition's stream of ``topic`` that does not exist."""
        if config is None:
            entry = await self._entry(js, topic)
            config = (entry or {}).get("config") or {}
        for partition in range(partitions):
            try:
                await js.add_stream(self._stream_config(topic, partition, config))
            except Exception as exc:
                if not is_error(exc, STREAM_EXISTS):
                    raise

    def _stream_config(self, topic: str, partition: int, config: Mapping[str, str]) -> Any:
        api = self._api
        max_age = config.get("retention.ms")
        max_bytes = config.get("retention.bytes")
        age = int(max_age) / 1000 if max_age and int(max_age) > 0 else None
        return api.StreamConfig(
            name=self.names.stream(topic, partition),
            subjects=[self.names.subject(topic, partition)],
            retention=api.RetentionPolicy.LIMITS, discard=api.DiscardPolicy.OLD,
            max_age=age,
            max_bytes=int(max_bytes) if max_bytes and int(max_bytes) > 0 else None,
            max_msgs=-1, max_consumers=-1, max_msg_size=-1,
            duplicate_window=min(120.0, age) if age else 120.0,
            storage=self._storage_type(), num_replicas=self._replicas, allow_direct=True)

    async def specs(self, js: Any, nc: Any) -> dict[str, TopicSpec]:
        """Every topic of the catalog."""
        topics: dict[str, TopicSpec] = {}
        for key, value in (await read_bucket(js, nc, self.names.topics_bucket,
                                             self)).items():
            if value is None:
                continue
            entry = json.loads(value)
            name = decode_token(key)
            topics[name] = TopicSpec(name, int(entry["partitions"]),
                                     dict(entry.get("config") or {}))
        return topics

    async def delete(self, js: Any, topic: str) -> None:
        """Delete ``topic``: its catalog entry, its streams and every committed position
        on it. An unknown topic is ignored.
        """
        entry = await self._entry(js, topic)
        if entry is None:
            return
        catalog = await self._catalog(js)
        await catalog.purge(encode_token(topic))
        for partition in range(int(entry["partitions"])):
            try:
                await js.delete_stream(self.names.stream(topic, partition))
            except Exception as exc:
                if not is_error(exc, STREAM_NOT_FOUND):
                    raise
        positions = await self.ensure_bucket_stream(js, self.names.positions_bucket)
        await js.purge_stream(
            positions,
            subject=f"$KV.{self.names.positions_bucket}.{self.names.topic_positions(topic)}")

    async def stream_range(self, js: Any, topic: str, partition: int
                           ) -> tuple[int, int] | None:
        """(first offset kept, next offset) of a partition, or ``None`` when its stream
        does not exist. Offsets are stream sequences minus one.
        """
        try:
            info = await js.stream_info(self.names.stream(topic, partition))
        except Exception as exc:
            if is_error(exc, STREAM_NOT_FOUND):
                return None
            raise
        state = info.state
        return max(int(state.first_seq) - 1, 0), int(state.last_seq)


async def read_bucket(js: Any, nc: Any, bucket: str, topology: Topology
                      ) -> dict[str, bytes | None]:
    """Every key of ``bucket`` with its value (``None``: deleted), read with one
    ephemeral consumer (the last message of each key).
    """
    import asyncio

    api = topology._api
    stream = await topology.ensure_bucket_stream(js, bucket)
    info = await js.stream_info(stream)
    found: dict[str, bytes | None] = {}
    if not info.state.messages:
        return found
    prefix = f"$KV.{bucket}."
    done = asyncio.get_running_loop().create_future()
    inbox = nc.new_inbox()

    async def on_message(msg: Any) -> None:
        if msg.reply:
            headers = msg.headers or {}
            operation = headers.get("KV-Operation")
            found[msg.subject[len(prefix):]] = None if operation else msg.data
            if msg.metadata.num_pending == 0 and not done.done():
                done.set_result(None)
        elif not done.done():
            done.set_result(None)

    subscription = await nc.subscribe(inbox, cb=on_message)
    config = api.ConsumerConfig(
        deliver_policy=api.DeliverPolicy.LAST_PER_SUBJECT, ack_policy=api.AckPolicy.NONE,
        deliver_subject=inbox, filter_subject=f"$KV.{bucket}.>", mem_storage=True,
        num_replicas=1, inactive_threshold=30.0)
    consumer = await js._jsm.add_consumer(stream, config)
    try:
        await asyncio.wait_for(done, timeout=js._timeout)
    finally:
        await subscription.unsubscribe()
        with contextlib.suppress(Exception):  # it expires anyway
            await js._jsm.delete_consumer(stream, consumer.name)
    return found
