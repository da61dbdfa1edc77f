"""The key/value store (source offsets, connector state) on a compacted Pulsar topic.

A namespace is the persistent topic ``omc-kv-<namespace>`` in ``pulsar.tenant`` /
``pulsar.namespace``. Each written key is one message whose partition key is the key and
whose payload is the value; deleting a key writes a null value (a tombstone). This is the
layout Pulsar's topic compaction and ``TableView`` understand, so the store's topic can be
compacted by the broker (set a compaction threshold on the namespace) and read by any
Pulsar client.

* **put / put_many** send one message per key and return once the broker acknowledged
  every one (stored, so it survives a restart of the broker and of the process).
* **get / scan** first read the topic to its end with a Reader (``read_compacted``, from
  the earliest message; ``has_message_available`` asks the broker for its last message
  id), so they see every write acknowledged before they were called, by any process. The
  map is kept in memory; each call reads only what is new.
* **Opening** writes one tombstone for the reserved key ``__omc.kv.opened`` (keys starting
  with ``__omc.`` are reserved), so the topic is never empty when a reader asks for the
  last message id.
* **Last write wins** in topic order: a key written by two processes holds the value of
  the write the broker stored last. A reader never goes backwards, so a message whose
  MessageId is not after the last one applied (a duplicate delivery) is ignored.

A topic that the broker created partitioned (auto-creation with partitions) still works:
a key always goes to the same partition, and there is one reader per partition.
"""

from __future__ import annotations

import re
from typing import Any

from omconnect.errors import SendError, TransportTimeoutError
from omconnect.transport.kit.log_kv_store import LogKeyValueStore
from omconnect.transport.messages import Message
from omconnect_pulsar.client import TopicNames, pulsar_module
from omconnect_pulsar.errors import ErrorContext, translated_errors
from omconnect_pulsar.producer import PulsarProducer

__all__ = ["PulsarKeyValueStore", "kv_topic"]

_OPENED = "__omc.kv.opened"
"""Opening a store writes a tombstone for this (reserved) key: it deletes nothing, and the
topic is never empty, so asking the broker for its last message id always has an answer
(some brokers, pulsar-lite among them, fail that request on an empty topic)."""
_UNSAFE = re.compile(r"[^A-Za-z0-9_.=-]")


def kv_topic(namespace: str) -> str:
    """The topic that holds the store ``namespace`` (unsafe characters become ``_``
    followed by their code point, so distinct namespaces stay distinct).
    """
    return "omc-kv-" + _UNSAFE.sub(lambda m: f"_{ord(m.group()):x}_", namespace)


class PulsarKeyValueStore(LogKeyValueStore):
    """A durable map on a Pulsar topic; see the module docstring. Thread-safe.

    Args:
        client: The transport's ``pulsar.Client``.
        names: Maps topic names to Pulsar's.
        namespace: The store's name.
        producer: Writes the store's messages (owned by the store; closed with it).
        reader_options: Keyword arguments of ``Client.create_reader``.
        where: For error messages.

    """

    def __init__(
        self,
        client: Any,
        names: TopicNames,
        namespace: str,
        *,
        producer: PulsarProducer,
        reader_options: dict[str, Any],
        where: ErrorContext,
    ) -> None:
        super().__init__()
        self._client = client
        self._names = names
        self.topic = kv_topic(namespace)
        self._producer = producer
        self._where = where
        self._last: dict[int, Any] = {}
        pulsar = pulsar_module()
        with translated_errors(f"opening the key/value store {namespace!r}", where,
                           topic=self.topic):
            # A producer first: creating it makes the broker create a missing topic. The
            # topic is never left empty (see _OPENED), then readers attach.
            producer.open_topic(self.topic)
            producer.send([Message(self.topic, key=_OPENED.encode(), value=None)]).result(
                timeout=where.timeout_s * 2 + 5)
            partitions = client.get_topic_partitions(names.full(self.topic))
            self._readers = [
                client.create_reader(name, pulsar.MessageId.earliest,
                                     is_read_compacted=True, **reader_options)
                for name in partitions
            ]
        self._refresh()

    # -- the log side of LogKeyValueStore ---------------------------------------------

    def _append(self, items: dict[str, bytes | None]) -> None:
        """Send one message per key; return once the broker stored every one (readers
        apply them on the next read).

        Raises:
            TransportError: A write was not acknowledged (some may have been stored).
            TransportTimeoutError: Not acknowledged within the send timeout.

        """
        messages = [Message(self.topic, key=key.encode(), value=value)
                    for key, value in items.items()]
        future = self._producer.send(messages)
        try:
            future.result(timeout=self._where.timeout_s * 2 + 5)
        except TimeoutError:
            raise TransportTimeoutError(
                f"pulsar: writing to the key/value store topic {self.topic!r} was not "
                "acknowledged in time", topic=self.topic) from None
        except SendError as exc:
            raise exc.__cause__ if isinstance(exc.__cause__, Exception) else exc from exc

    def _catch_up(self) -> None:
        """Read every message the readers have not applied yet (every write acknowledged
        before this call, by any process).
        """
        self._refresh()

    def _release(self) -> None:
        """Close the readers and the producer."""
        with self._lock:
            readers, self._readers = self._readers, []
        for reader in readers:
            try:
                reader.close()
            except Exception:
                continue
        self._producer.close(self._where.timeout_s)
        self._client = None  # a closed store keeps no client alive

    def _refresh(self) -> None:
        """Apply every message the readers have not applied yet."""
        self._check_open()
        with self._lock, translated_errors(f"reading the key/value store topic {self.topic!r}",
                                       self._where, topic=self.topic):
            timeout_ms = int(self._where.timeout_s * 1000)
            for index, reader in enumerate(self._readers):
                while reader.has_message_available():
                    self._apply_message(index, reader.read_next(timeout_ms))

    def _apply_message(self, index: int, raw: Any) -> None:
        message_id = raw.message_id()
        last = self._last.get(index)
        if last is not None and not message_id > last:
            return  # delivered twice; a reader never goes backwards
        self._last[index] = message_id
        properties = raw.properties()
        key = raw.partition_key()
        if properties.get("__omc.key") == "empty":
            key = ""
        self._apply(key, None if raw.has_null_value() else raw.data())

    def _description(self) -> str:
        return f"key/value store on {self.topic!r}"
