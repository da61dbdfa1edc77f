"""The driver interface: what a Kafka client library must offer the transport.

The transport's own classes (:mod:`~omconnect_kafka.producer`,
:mod:`~omconnect_kafka.consumer`, :mod:`~omconnect_kafka.admin`,
:mod:`~omconnect_kafka.kv_store`) hold the SPI logic once: argument checks, size limits,
topic creation, batch acknowledgement, wakeup, error translation. A driver only talks
to its client library, through three small client classes:

* :class:`ProducerClient` — hand a batch to the client, report each record to a
  :class:`BatchAck`; flush; close.
* :class:`ConsumerClient` — subscribe/assign, poll, commit, committed, seek, offset
  ranges, pause/resume, close.
* :class:`AdminClient` — create, list and delete topics.

Driver methods raise the client library's own exceptions; the callers translate them
(:mod:`omconnect_kafka.errors`). A driver module imports its client library lazily
(inside :class:`Driver` construction), so every module imports without the extra.
"""

from __future__ import annotations

import abc
import itertools
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from typing import Any, ClassVar

import attrs

from omconnect.errors import SendError, TransportError
from omconnect.records import RecordMetadata, TopicPartition
from omconnect.transport.messages import Message, TopicSpec
from omconnect.transport.spi import RebalanceListener, StartFrom

__all__ = [
    "AdminClient",
    "BatchAck",
    "ClientSettings",
    "ColumnAck",
    "ConsumerClient",
    "Driver",
    "ProducerClient",
]


@attrs.frozen(kw_only=True)
class ClientSettings:
    """The transport's settings every client of a driver is built from.

    Attributes:
        bootstrap_servers: ``host:port[,host:port...]``.
        client_id: The client id the broker sees (suffixed per client).
        request_timeout_ms: How long one request may take.
        connect_timeout_ms: How long reaching the cluster (bootstrap, metadata, a
            blocking admin call) may take before a :class:`TransportTimeoutError`.
        delivery_timeout_ms: How long a sent message may wait for its acknowledgement
            (retries included) before it fails.
        max_request_size: The producer's request size limit, in bytes.
        security: TLS/SASL settings in librdkafka/Java spelling (``security.protocol``,
            ``ssl.ca.location``, ``sasl.mechanism``, ``sasl.username``, ...), only
            those set; secrets as plain strings.
        producer: Native producer options (``kafka.producer.*``), passed through.
        consumer: Native consumer options (``kafka.consumer.*``), passed through.
        admin: Native admin options (``kafka.admin.*``), passed through.

    """

    bootstrap_servers: str
    client_id: str
    request_timeout_ms: int
    connect_timeout_ms: int
    delivery_timeout_ms: int
    max_request_size: int
    security: Mapping[str, Any] = attrs.field(factory=dict)
    producer: Mapping[str, Any] = attrs.field(factory=dict)
    consumer: Mapping[str, Any] = attrs.field(factory=dict)
    admin: Mapping[str, Any] = attrs.field(factory=dict)


class BatchAck:
    """Gathers the acknowledgements of one batch into one future.

    The driver reports every message of the batch exactly once — :meth:`report` (the
    hot path: it stores the client's own delivery report as it is) or :meth:`failed`,
    from any thread (usually the client's network thread) — or :meth:`abandon` from the
    message on that it could not hand over. When the last report arrives, :attr:`future`
    completes: with one :class:`~omconnect.records.RecordMetadata` per message, in order
    (built from the stored reports in one pass by ``convert``), or with a
    :class:`~omconnect.errors.SendError` whose ``outcomes`` say which failed. Counting
    uses no lock (``itertools.count`` is atomic), so a report costs a store and an
    increment.

    Args:
        messages: The batch.
        convert: Turns the batch and the client's reports (one per message, in order)
            into acknowledgements.
        describe: Turns a client error for message ``index`` into the omconnect error
            to report.

    """

    __slots__ = ("_convert", "_counter", "_describe", "_errors", "_messages", "_reports",
                 "_size", "future")

    def __init__(
        self,
        messages: Sequence[Message],
        convert: Callable[[Sequence[Message], list[Any]], list[RecordMetadata]],
        describe: Callable[[int, Any], Exception],
    ) -> None:
        self._messages = messages
        self._convert = convert
        self._describe = describe
        self._size = len(messages)
        self._reports: list[Any] = [None] * self._size
        self._errors: dict[int, Any] = {}
        self._counter = itertools.count(1)
        self.future: Future[list[RecordMetadata]] = Future()
        self.future.set_running_or_notify_cancel()

    def report(self, index: int, error: Any, native: Any = None) -> None:
        """The client's report for message ``index``: ``error`` (``None`` when stored)
        and its own record of where it stored the message.
        """
        if error is None:
            self._reports[index] = native
        else:
            self._errors[index] = error
        if next(self._counter) == self._size:
            self._finish()

    def failed(self, index: int, error: Any) -> None:
        """Message ``index`` was not stored (``error`` as the client reported it)."""
        self._errors[index] = error
        if next(self._counter) == self._size:
            self._finish()

    def abandon(self, index: int, error: BaseException) -> None:
        """The client refused message ``index`` at once; it and every later message of
        the batch were not handed over (earlier ones still report as they complete).
        """
        self._errors[index] = error
        skipped = TransportError(f"not sent: message {index} of the batch failed first")
        for later in range(index + 1, self._size):
            self._errors[later] = skipped
        for _ in range(self._size - index):
            if next(self._counter) == self._size:
                self._finish()

    def _finish(self) -> None:
        try:
            if not self._errors:
                self.future.set_result(self._convert(self._messages, self._reports))
                return
            outcomes: list[Any] = [None] * self._size
            stored = [i for i in range(self._size) if i not in self._errors]
            if stored:
                converted = self._convert([self._messages[i] for i in stored],
                                          [self._reports[i] for i in stored])
                for i, metadata in zip(stored, converted, strict=True):
                    outcomes[i] = metadata
            first: Exception | None = None
            for index in sorted(self._errors):
                error = self._errors[index]
                described = error if isinstance(error, TransportError) and not isinstance(
                    error, SendError) else self._describe(index, error)
                outcomes[index] = described
                if first is None:
                    first = described
            failure = SendError(f"{len(self._errors)} of {self._size} messages of the batch "
                                f"were not stored; first: {first}", outcomes)
            failure.__cause__ = first
            self.future.set_exception(failure)
        except BaseException as exc:  # never leave the future pending
            if not self.future.done():
                self.future.set_exception(exc)


class ColumnAck(BatchAck):
    """A :class:`BatchAck` for a batch sent as columns (``send_batch``): when every row
    is stored its future's result is one :class:`~omconnect.columnar.BatchMetadata`
    built by ``whole`` from the reports, with no object per row; when some failed, the
    :class:`~omconnect.errors.SendError` says which, as for a batch of messages.

    Args:
        size: Rows in the batch.
        whole: The batch's acknowledgement from every row's report.
        convert: Per-row acknowledgements of the rows stored (for a partial failure).
        describe: As for :class:`BatchAck`.

    """

    __slots__ = ("_whole",)

    def __init__(self, size: int, whole: Callable[[list[Any]], Any],
                 convert: Callable[[Sequence[Any], list[Any]], list[RecordMetadata]],
                 describe: Callable[[int, Any], Exception]) -> None:
        super().__init__(range(size), convert, describe)  # type: ignore[arg-type]
        self._whole = whole

    def _finish(self) -> None:
        if self._errors:
            super()._finish()
            return
        try:
            self.future.set_result(self._whole(self._reports))
        except BaseException as exc:  # never leave the future pending
            if not self.future.done():
                self.future.set_exception(exc)


class ProducerClient(abc.ABC):
    """One producer of the client library. Any thread may call :meth:`send`."""

    sends_columns: ClassVar[bool] = False
    """Whether :meth:`send_columns` is implemented (else columns go as messages)."""

    def send_columns(self, topic: str, keys: list[bytes | None], values: list[bytes | None],
                     timestamps: list[int | None] | None, ack: ColumnAck) -> None:
        """Hand rows to the client in order, each reported to ``ack`` as :meth:`send`
        reports messages, without building a ``Message`` per row. Only called when
        :attr:`sends_columns` is true.
        """
        raise NotImplementedError

    def whole_acknowledgement(self, topic: str, reports: list[Any]) -> Any:
        """The :class:`~omconnect.columnar.BatchMetadata` of a batch from every row's
        delivery report (only with :attr:`sends_columns`).
        """
        raise NotImplementedError

    @abc.abstractmethod
    def send(self, messages: Sequence[Message], ack: BatchAck) -> None:
        """Hand ``messages`` to the client in order, each reported to ``ack``.

        Report each message with ``ack.report(index, error, native)`` (``native``: the
        client's own delivery report, later given to :meth:`acknowledgements`) or
        ``ack.failed``. If the client refuses message ``i`` at once, call
        ``ack.abandon(i, exc)`` and return; never raise after handing over any message.
        """

    @abc.abstractmethod
    def acknowledgements(self, messages: Sequence[Message], reports: list[Any]
                         ) -> list[RecordMetadata]:
        """The acknowledgements of ``messages`` from the client's delivery reports (as
        given to :meth:`BatchAck.report`), in one pass.
        """

    @abc.abstractmethod
    def partition_count(self, topic: str) -> int | None:
        """Partitions of ``topic`` as the client's metadata knows them (``None`` when
        the topic does not exist).
        """

    @abc.abstractmethod
    def flush(self, timeout: float) -> bool:
        """Send what the client buffers and wait for its acknowledgements; whether
        everything completed within ``timeout`` seconds.
        """

    @abc.abstractmethod
    def close(self, timeout: float) -> None:
        """Release the client (after :meth:`flush`)."""


class ConsumerClient(abc.ABC):
    """One consumer of the client library; one thread at a time."""

    polls_columns: ClassVar[bool] = False
    """Whether :meth:`poll_columns` is implemented (else batches are built of messages)."""

    def poll_columns(self, max_records: int, timeout: float) -> Any:
        """:meth:`poll` as a consumed Arrow batch, without a ``Message`` per record, or
        ``None`` when nothing came (only with :attr:`polls_columns`).
        """
        raise NotImplementedError

    @abc.abstractmethod
    def subscribe(self, topics: Sequence[str], listener: RebalanceListener) -> None:
        """Join the group for ``topics``; call ``listener`` as partitions move."""

    @abc.abstractmethod
    def assign(self, partitions: Sequence[TopicPartition]) -> None:
        """Read exactly ``partitions`` (from the committed position, else ``start``)."""

    @abc.abstractmethod
    def poll(self, max_records: int, timeout: float) -> list[Message]:
        """Up to ``max_records`` messages, waiting at most ``timeout`` seconds."""

    @abc.abstractmethod
    def commit(self, offsets: Mapping[TopicPartition, int]) -> None:
        """Commit ``offsets`` for the group, synchronously."""

    @abc.abstractmethod
    def committed(self, partitions: Sequence[TopicPartition]
                  ) -> dict[TopicPartition, int | None]:
        """The group's committed offsets."""

    @abc.abstractmethod
    def assignment(self) -> frozenset[TopicPartition]:
        """The partitions read now."""

    @abc.abstractmethod
    def seek(self, partition: TopicPartition, offset: int) -> None:
        """Read ``partition`` from ``offset`` next."""

    @abc.abstractmethod
    def offset_range(self, partition: TopicPartition) -> tuple[int, int]:
        """(earliest offset, end offset) as the broker's ListOffsets reports them."""

    @abc.abstractmethod
    def pause(self, partitions: Sequence[TopicPartition]) -> None:
        """Stop fetching ``partitions``."""

    @abc.abstractmethod
    def resume(self, partitions: Sequence[TopicPartition]) -> None:
        """Fetch ``partitions`` again."""

    @abc.abstractmethod
    def close(self) -> None:
        """Leave the group without committing; release the client."""


class AdminClient(abc.ABC):
    """One admin client of the client library."""

    @abc.abstractmethod
    def create_topics(self, topics: Sequence[TopicSpec]) -> None:
        """Create ``topics``; ignore those that exist."""

    @abc.abstractmethod
    def list_topics(self) -> dict[str, TopicSpec]:
        """Every topic (internal ones excluded), by name."""

    @abc.abstractmethod
    def delete_topics(self, names: Sequence[str]) -> None:
        """Delete ``names``; ignore those that do not exist."""

    @abc.abstractmethod
    def close(self) -> None:
        """Release the client."""


class Driver(abc.ABC):
    """Builds the clients of one client library from :class:`ClientSettings`.

    Constructing a driver imports its library (raising
    :class:`~omconnect.errors.MissingExtraError` naming the extra when it is missing)
    and checks the native pass-through options, so a typo fails when the transport is
    opened, naming the option.

    Args:
        settings: The transport's client settings.

    """

    name: ClassVar[str]
    extra: ClassVar[str]

    def __init__(self, settings: ClientSettings) -> None:
        self.settings = settings

    @abc.abstractmethod
    def producer(self, options: Mapping[str, Any]) -> ProducerClient:
        """A producer; ``options`` (native) override the settings' producer options."""

    @abc.abstractmethod
    def consumer(self, group: str | None, start: StartFrom,
                 options: Mapping[str, Any]) -> ConsumerClient:
        """A consumer in ``group`` (``None``: assign only), starting at ``start`` where
        the group has no committed position.
        """

    @abc.abstractmethod
    def admin(self) -> AdminClient:
        """An admin client."""
