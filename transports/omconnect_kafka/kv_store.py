"""The Kafka transport's key/value store: a compacted topic read to its end at open.

As Kafka Connect keeps source offsets (``KafkaBasedLog``), each namespace is one topic,
``<kafka.kv.topic.prefix><namespace>`` (default ``omconnect-kv-<namespace>``), with one
partition and ``cleanup.policy=compact``: every write is a record keyed by the UTF-8 key,
a delete is a tombstone, and compaction keeps the last record of each key, so the topic
is the store's durable state and the last write wins.

Opening a store reads the topic from its beginning into memory, up to a *sentinel*: a
record the store writes itself at open (key ``0xFF``, which no UTF-8 key can be) whose
acknowledged offset marks "everything written before I opened". Reading up to one's own
record needs no end offset from the broker (``ListOffsets``, which some brokers get
wrong: see docs/transports/kafka.md) and cannot stop early.

``get`` and ``scan`` answer from memory; ``put``/``put_many`` return once the broker
acknowledged the records (``acks=all``). The in-memory view applies records in offset
order, so concurrent writers in one process agree with the log about which write was
last. Writes other processes make after this store opened are seen when it is opened
again.
"""

from __future__ import annotations

import hashlib
import re
import time
import uuid
from collections.abc import Callable

from omconnect.errors import SendError, TransportError, TransportTimeoutError
from omconnect.records import RecordMetadata, TopicPartition
from omconnect.transport.kit.log_kv_store import LogKeyValueStore
from omconnect.transport.messages import Message
from omconnect_kafka.admin import TopicCreator
from omconnect_kafka.client.base import BatchAck, ProducerClient
from omconnect_kafka.consumer import KafkaConsumer
from omconnect_kafka.errors import translate

__all__ = ["SENTINEL_KEY", "KafkaKeyValueStore", "kv_topic"]

SENTINEL_KEY = b"\xff"
"""Key of the store's own end markers (never valid UTF-8, so never a user key)."""

KV_TOPIC_CONFIG = {"cleanup.policy": "compact"}

_LEGAL = re.compile(r"[^a-zA-Z0-9._-]")


def kv_topic(prefix: str, namespace: str) -> str:
    """The topic holding ``namespace``: ``prefix + namespace`` when that is a legal topic
    name, else a legal form of it with a hash of the namespace (so two namespaces never
    share a topic).
    """
    name = prefix + namespace
    if not _LEGAL.search(name) and len(name) <= 249 and name not in (".", ".."):
        return name
    digest = hashlib.sha1(namespace.encode("utf-8")).hexdigest()[:10]
    return f"{_LEGAL.sub('_', name)[:230]}-{digest}"


class KafkaKeyValueStore(LogKeyValueStore):
    """The store of one namespace, loaded at construction. Thread-safe.

    Args:
        topic: The store's compacted topic.
        producer: Writes records (the transport's shared producer client).
        reader: Opens the consumer that reads the topic at open (closed after).
        topics: Creates the topic when missing.
        timeout: Seconds a write may wait for its acknowledgement, and the longest the
            load may go without progress.

    Raises:
        TransportTimeoutError: The topic could not be read to its end in time.
        TransportError: The topic could not be created or read.

    """

    def __init__(
        self,
        *,
        topic: str,
        producer: ProducerClient,
        reader: Callable[[], KafkaConsumer],
        topics: TopicCreator,
        timeout: float,
    ) -> None:
        super().__init__()
        self.topic = topic
        self._producer = producer
        self._timeout = timeout
        self._offsets: dict[str, int] = {}
        topics.ensure({topic}, config=KV_TOPIC_CONFIG, partitions=1)
        self._load(reader)

    # -- reading the log ------------------------------------------------------------

    def _load(self, reader: Callable[[], KafkaConsumer]) -> None:
        marker = self._write([Message(self.topic, key=SENTINEL_KEY,
                                      value=uuid.uuid4().hex.encode(), partition=0)])[0]
        end = marker.offset
        if end is None:
            raise TransportError("kafka transport: the broker did not report the offset of "
                                 "the key/value store's marker", topic=self.topic)
        consumer = reader()
        try:
            consumer.assign([TopicPartition(self.topic, 0)])
            seen = -1
            last_progress = time.monotonic()
            while seen < end:
                batch = consumer.poll(5000, 0.5)
                if batch:
                    last_progress = time.monotonic()
                    self._apply_records(batch)
                    seen = max(seen, batch[-1].offset or 0)
                elif time.monotonic() - last_progress > self._timeout:
                    raise TransportTimeoutError(
                        f"kafka transport: reading key/value topic {self.topic!r} stalled at "
                        f"offset {seen + 1} of {end + 1} for {self._timeout:g} s",
                        topic=self.topic)
        finally:
            consumer.close()

    def _apply_records(self, messages: list[Message]) -> None:
        with self._lock:
            for message in messages:
                key = message.key
                if key is None or key == SENTINEL_KEY or message.offset is None:
                    continue
                try:
                    name = key.decode("utf-8")
                except UnicodeDecodeError:
                    continue  # not written by a key/value store
                self._set(name, message.value, message.offset)

    def _set(self, key: str, value: bytes | None, offset: int) -> None:
        """Apply one record if it is newer than what the view holds (lock held)."""
        if offset < self._offsets.get(key, -1):
            return
        self._offsets[key] = offset
        self._apply(key, value)

    def _write(self, messages: list[Message]) -> list[RecordMetadata]:
        ack = BatchAck(messages, self._producer.acknowledgements, lambda index, error: translate(
            error, "writing the key/value store", topic=self.topic))
        self._producer.send(messages, ack)
        try:
            return ack.future.result(timeout=self._timeout)
        except SendError as exc:
            first = next((o for o in exc.outcomes if isinstance(o, BaseException)), exc)
            raise TransportError(f"kafka transport: writing key/value topic {self.topic!r} "
                                 f"failed: {first}", topic=self.topic) from exc
        except TimeoutError:
            raise TransportTimeoutError(
                f"kafka transport: writing key/value topic {self.topic!r} not acknowledged "
                f"within {self._timeout:g} s", topic=self.topic) from None

    # -- the log side of LogKeyValueStore ---------------------------------------------

    def _append(self, items: dict[str, bytes | None]) -> None:
        """Write the items as records of the topic and apply them in offset order once the
        broker acknowledged all of them.
        """
        messages = [Message(self.topic, key=key.encode("utf-8"), value=value, partition=0)
                    for key, value in items.items()]
        acks = self._write(messages)
        with self._lock:
            for (key, value), ack in zip(items.items(), acks, strict=True):
                offset = ack.offset if ack.offset is not None else \
                    self._offsets.get(key, -1) + 1
                self._set(key, value, offset)

    def _release(self) -> None:
        """Forget the offsets (the shared producer stays open)."""
        with self._lock:
            self._offsets.clear()
