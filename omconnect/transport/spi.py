"""The Transport SPI: what a driver implements so omconnect runs on its queue.

A driver implements five small contracts; batching, retries, conversion, metrics and error
routing live once, in the runtime.

* :class:`Producer` — ``send`` a batch, get one future for its acknowledgements
  (``send_batch`` takes the batch as Arrow columns).
* :class:`Consumer` — ``subscribe`` in a group (or ``assign``), ``poll`` a batch
  (``poll_batch``: as Arrow columns), ``commit`` positions.
* :class:`KeyValueStore` — durable ``get``/``put``/``put_many``/``scan`` (offsets live here).
* :class:`Admin` — create, list and delete topics.
* :class:`Transport` — the factory for the four above, with its :class:`Capabilities`.

Threads: a :class:`Producer` and a :class:`KeyValueStore` may be called from any thread.
A :class:`Consumer` is used by one thread at a time, except :meth:`Consumer.wakeup`, which
any thread may call to end a blocking ``poll`` early. Acknowledgement futures may complete
on a thread of the transport's own.

Errors: no driver exception escapes; each is translated into an
:class:`~omconnect.errors.TransportError` (fatal) or a
:class:`~omconnect.errors.RetriableTransportError`, chained to the original.
"""

from __future__ import annotations

import abc
from collections.abc import Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from omconnect.config.definition import ConfigDef
from omconnect.errors import IllegalStateError, UnsupportedOperationError
from omconnect.records import RecordMetadata, TopicPartition
from omconnect.transport.capabilities import Capabilities
from omconnect.transport.kit.checks import reject_unknown_options
from omconnect.transport.messages import Message, TopicSpec

if TYPE_CHECKING:
    import pyarrow as pa

    from omconnect.columnar.metadata import BatchMetadata

__all__ = [
    "Admin",
    "Consumer",
    "KeyValueStore",
    "Producer",
    "RebalanceListener",
    "SendFuture",
    "StartFrom",
    "Transport",
]

SendFuture = Future  # Future[list[RecordMetadata]]
"""Completes when every message of a batch is acknowledged (result: one
:class:`~omconnect.records.RecordMetadata` per message, in order) or when any failed
(exception: :class:`~omconnect.errors.SendError` whose ``outcomes`` say which)."""

StartFrom = Literal["earliest", "latest"]


class Closable:
    """What every object of the SPI shares once closed: ``_closed`` (set by ``close``) and
    :meth:`_check_open`, which the other calls make first.
    """

    _closed: bool = False

    def _check_open(self) -> None:
        """Raise :class:`~omconnect.errors.IllegalStateError` when this is closed."""
        if self._closed:
            raise IllegalStateError(f"the {self._description()} is closed")

    _noun: ClassVar[str] = "object"

    def _description(self) -> str:
        """What this is, for the error (e.g. ``consumer``)."""
        return self._noun


class Producer(Closable, abc.ABC):
    """Sends batches of messages. Safe to call from any thread."""

    _noun: ClassVar[str] = "producer"

    @abc.abstractmethod
    def send(self, messages: Sequence[Message]) -> Future[list[RecordMetadata]]:
        """Send a batch; return at once with a future for its acknowledgements.

        An acknowledgement means the message is stored as durably as the transport's
        ``persistent`` capability promises; only then may a source offset be committed.
        Messages with the same key and topic are stored in the order given.

        Raises:
            MessageTooLargeError: A message exceeds ``capabilities.max_message_bytes``
                (raised before anything of the batch is sent).
            TransportError: The producer is closed or the transport failed.

        """

    def send_batch(self, topic: str, batch: pa.RecordBatch) -> Future[BatchMetadata]:
        """Send the rows of an Arrow batch to ``topic``; return at once with one future.

        ``batch`` has a ``value`` column and may have ``key``, ``headers``, ``timestamp``
        and ``partition`` (see :mod:`omconnect.columnar.columns`). The rules of
        :meth:`send` hold row for row: order per key, acknowledgement only once stored,
        :class:`~omconnect.errors.MessageTooLargeError` before anything is sent. The
        future's result is a :class:`~omconnect.columnar.BatchMetadata` (a partition and
        offset per row); on failure, a :class:`~omconnect.errors.SendError` whose
        ``outcomes`` say which rows failed.

        This default goes through :meth:`send` one ``Message`` per row; transports whose
        storage takes columns override it (the embedded transport writes the columns'
        buffers into its chunks, with no object per row).
        """
        from omconnect.columnar.metadata import BatchMetadata
        from omconnect.transport.message_batches import batch_to_messages

        sent = self.send(batch_to_messages(topic, batch))
        result: Future[BatchMetadata] = Future()

        def done(future: Future[list[RecordMetadata]]) -> None:
            error = future.exception()
            if error is not None:
                result.set_exception(error)
            else:
                result.set_result(BatchMetadata.from_records(topic, future.result()))

        sent.add_done_callback(done)
        return result

    @abc.abstractmethod
    def flush(self, timeout: float | None = None) -> None:
        """Block until every message sent so far is acknowledged or failed.

        Raises:
            TransportTimeoutError: Not done within ``timeout`` seconds.

        """

    @abc.abstractmethod
    def close(self, timeout: float | None = None) -> None:
        """Flush, then release resources. Idempotent; sending afterwards is an error."""


class RebalanceListener:
    """Called from within :meth:`Consumer.poll`, on the consumer's thread, as the group's
    partition assignment changes. Override what you need.
    """

    def on_partitions_revoked(self, partitions: frozenset[TopicPartition]) -> None:
        """These partitions are taken away; commit what is done for them now."""

    def on_partitions_assigned(self, partitions: frozenset[TopicPartition]) -> None:
        """These partitions are now this consumer's."""


class Consumer(Closable, abc.ABC):
    """Reads batches of messages, alone (``assign``) or in a group (``subscribe``).

    Used by one thread at a time (except :meth:`wakeup`). Positions are per partition:
    committing ``n`` for a partition means every message before offset ``n`` is done and
    is not delivered to the group again.
    """

    _noun: ClassVar[str] = "consumer"

    @abc.abstractmethod
    def subscribe(
        self, topics: Sequence[str], listener: RebalanceListener | None = None
    ) -> None:
        """Join the consumer's group for ``topics``; the group shares their partitions."""

    @abc.abstractmethod
    def poll(self, max_records: int, timeout: float) -> list[Message]:
        """Up to ``max_records`` messages, waiting at most ``timeout`` seconds for the first.

        Returns an empty list when nothing arrived in time. Messages of one partition come
        in offset order.
        """

    def poll_batch(self, max_records: int, timeout: float) -> pa.RecordBatch:
        """:meth:`poll`, as one Arrow batch of the columns of
        :func:`~omconnect.columnar.columns.consumed_schema` (no rows when nothing came).

        The rules of :meth:`poll` hold: each partition's rows in offset order, positions
        moved past what is returned. This default builds the batch from :meth:`poll`'s
        messages; transports that store columns override it.
        """
        from omconnect.transport.message_batches import messages_to_batch

        return messages_to_batch(self.poll(max_records, timeout))

    @abc.abstractmethod
    def commit(self, offsets: Mapping[TopicPartition, int]) -> None:
        """Durably record, for the group, the next offset to read on each partition.

        Raises:
            TransportError: The commit failed; nothing may be assumed committed.

        """

    @abc.abstractmethod
    def close(self) -> None:
        """Leave the group and release resources, without committing. Idempotent."""

    def assignment(self) -> frozenset[TopicPartition]:
        """The partitions this consumer currently reads."""
        raise UnsupportedOperationError(f"{type(self).__name__} does not report assignments")

    def committed(self, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, int | None]:
        """The group's committed offsets for ``partitions`` (``None`` where none)."""
        raise UnsupportedOperationError(f"{type(self).__name__} cannot read committed offsets")

    def assign(self, partitions: Iterable[TopicPartition]) -> None:
        """Read exactly ``partitions``, outside any group (needs ``replayable``)."""
        raise UnsupportedOperationError(f"{type(self).__name__} cannot assign partitions")

    def seek(self, partition: TopicPartition, offset: int) -> None:
        """Read ``partition`` from ``offset`` on the next poll (needs ``replayable``)."""
        raise UnsupportedOperationError(f"{type(self).__name__} cannot seek")

    def offset_range(self, partition: TopicPartition) -> tuple[int, int]:
        """(first offset kept, offset the next message will get) of ``partition``
        (needs ``replayable``).
        """
        raise UnsupportedOperationError(f"{type(self).__name__} cannot report offset ranges")

    def pause(self, partitions: Iterable[TopicPartition]) -> None:
        """Stop returning messages of ``partitions`` until resumed; nothing is lost."""
        raise UnsupportedOperationError(f"{type(self).__name__} cannot pause partitions")

    def resume(self, partitions: Iterable[TopicPartition]) -> None:
        """Return messages of ``partitions`` again."""
        raise UnsupportedOperationError(f"{type(self).__name__} cannot resume partitions")

    def wakeup(self) -> None:
        """End a blocking :meth:`poll` early (it returns what it has). Any thread."""


class KeyValueStore(Closable, abc.ABC):
    """A durable map from ``str`` keys to ``bytes`` values; the last write wins.

    Safe to call from several threads. A write that returned has survived a restart of
    the process (and of the broker, when the transport is ``persistent``).
    """

    _noun: ClassVar[str] = "key/value store"

    @abc.abstractmethod
    def get(self, key: str) -> bytes | None:
        """The value stored under ``key``, or ``None``."""

    @abc.abstractmethod
    def put_many(self, items: Mapping[str, bytes | None]) -> None:
        """Store several values at once; a ``None`` value deletes the key."""

    @abc.abstractmethod
    def scan(self, prefix: str = "") -> Iterator[tuple[str, bytes]]:
        """Every (key, value) whose key starts with ``prefix``, in key order."""

    @abc.abstractmethod
    def close(self) -> None:
        """Release resources. Idempotent."""

    def put(self, key: str, value: bytes | None) -> None:
        """Store one value; ``None`` deletes the key."""
        self.put_many({key: value})


class Admin(Closable, abc.ABC):
    """Creates, lists and deletes topics."""

    _noun: ClassVar[str] = "admin"

    @abc.abstractmethod
    def create_topics(self, topics: Sequence[TopicSpec]) -> None:
        """Create topics; a topic that already exists is left as it is."""

    @abc.abstractmethod
    def list_topics(self) -> dict[str, TopicSpec]:
        """Every topic, by name."""

    @abc.abstractmethod
    def delete_topics(self, names: Sequence[str]) -> None:
        """Delete topics and their messages; unknown names are ignored."""

    def close(self) -> None:
        """Release resources. Idempotent."""


class Transport(Closable, abc.ABC):
    """A message queue omconnect can run on: the factory for its producers, consumers,
    key/value stores and admin.

    Subclasses set :attr:`name` and :attr:`config_def` and take their options (without
    the ``<name>.`` prefix the worker config uses) in ``__init__``, calling this
    ``__init__`` first: it rejects an option :attr:`config_def` does not declare (unless
    it starts with one of :attr:`native_option_prefixes`) and a bad value, naming the key
    as the user wrote it, and leaves the parsed options in :attr:`config`.
    """

    def _description(self) -> str:
        return f"{getattr(self, 'name', type(self).__name__)} transport"

    name: ClassVar[str]
    config_def: ClassVar[ConfigDef] = ConfigDef()
    client_loggers: ClassVar[tuple[str, ...]] = ()
    """Python loggers of the native client library (e.g. ``("pika",)``): ``omconnect
    standalone`` shows them at WARNING and above unless it runs at DEBUG, so a worker's
    log is about the worker."""
    native_option_prefixes: ClassVar[tuple[str, ...]] = ()
    """Prefixes of options handed to the native client unchecked (e.g. Kafka's
    ``producer.``); any other option :attr:`config_def` does not declare is an error."""
    native_option_hint: ClassVar[str | None] = None
    """What the error for an unknown option suggests when no declared option is close
    (default: the list of declared options)."""

    def __init__(self, config: Mapping[str, Any] | None = None) -> None:
        name = getattr(self, "name", "")
        prefix = f"{name}." if name else ""
        reject_unknown_options(self.config_def, config or {}, prefix=prefix,
                               pass_through=self.native_option_prefixes,
                               otherwise=self.native_option_hint)
        self.config: dict[str, Any] = self.config_def.parse(
            config or {}, what=f"transport '{name or type(self).__name__}'", prefix=prefix)

    @property
    @abc.abstractmethod
    def capabilities(self) -> Capabilities:
        """What this transport offers."""

    @abc.abstractmethod
    def producer(self, options: Mapping[str, Any] | None = None) -> Producer:
        """A new producer. ``options`` are the native client's own settings, passed through."""

    @abc.abstractmethod
    def consumer(
        self,
        group: str | None = None,
        *,
        start: StartFrom = "earliest",
        options: Mapping[str, Any] | None = None,
    ) -> Consumer:
        """A new consumer in ``group`` (``None`` for a lone consumer that will ``assign``).

        Args:
            group: The consumer group.
            start: Where a group with no committed position starts.
            options: The native client's own settings, passed through.

        """

    @abc.abstractmethod
    def kv_store(self, namespace: str) -> KeyValueStore:
        """The durable key/value store called ``namespace`` (created if missing)."""

    @abc.abstractmethod
    def admin(self) -> Admin:
        """An admin client."""

    def close(self) -> None:
        """Release shared resources. Idempotent."""

    def __enter__(self) -> Transport:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
