"""Tasks: the units of work that move data, one thread each."""

from __future__ import annotations

import abc
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from omconnect.errors import IllegalStateError

if TYPE_CHECKING:
    from omconnect.connector.context import SinkTaskContext, SourceTaskContext
    from omconnect.records import RecordMetadata, SinkRecord, SourceRecord, TopicPartition

__all__ = ["SinkTask", "SourceTask", "Task"]


class Task(abc.ABC):
    """A task. The runtime runs each on a thread of its own."""

    @abc.abstractmethod
    def version(self) -> str:
        """The task's version string (usually the connector's)."""

    @abc.abstractmethod
    def start(self, config: Mapping[str, Any]) -> None:
        """Start with the task config the connector produced."""

    @abc.abstractmethod
    def stop(self) -> None:
        """Stop and release what :meth:`start` acquired. When and from which thread differs:
        see :meth:`SourceTask.stop` and :meth:`SinkTask.stop`. It may come even when
        :meth:`start` did not run or failed, so guard against missing resources.
        """


class SourceTask(Task):
    """Reads records from an external system.

    The runtime calls :meth:`initialize`, :meth:`start`, then :meth:`poll` in a loop on
    the task thread; :meth:`stop` comes from another thread. After the transport
    acknowledged a record (and every earlier record of its source partition), the
    runtime calls :meth:`commit_record`; after committing offsets, :meth:`commit`.
    """

    _context: SourceTaskContext | None = None  # also set for subclasses that skip __init__

    def __init__(self) -> None:
        self._context = None

    def initialize(self, context: SourceTaskContext) -> None:
        """Receive the context (its offset reader tells where to resume)."""
        self._context = context

    @property
    def context(self) -> SourceTaskContext:
        """The runtime's context, from :meth:`initialize` on.

        Raises:
            IllegalStateError: Read before :meth:`initialize`.

        """
        if self._context is None:
            raise IllegalStateError(
                "the source task has no context before initialize(); the runtime calls "
                "initialize() before start()"
            )
        return self._context

    @context.setter
    def context(self, context: SourceTaskContext) -> None:
        self._context = context

    @abc.abstractmethod
    def poll(self) -> Sequence[SourceRecord] | None:
        """A batch of new records, or ``None``/``[]`` when there is nothing yet.

        May block, but should return within about a second so that pause and stop are
        honoured; raise :class:`~omconnect.errors.RetriableError` for a transient failure.
        """

    @abc.abstractmethod
    def stop(self) -> None:
        """Stop: make a :meth:`poll` that blocks return promptly, and release resources.

        Called from **another thread** than :meth:`poll`, possibly while it blocks (an
        ``Event`` the poll waits on, or closing its socket, does it). :meth:`commit_record`
        and :meth:`commit` may still be called afterwards, for records sent before.
        """

    def commit(self) -> None:
        """Offsets up to what was acknowledged have been committed (for sources that
        acknowledge upstream in bulk).
        """

    def commit_record(self, record: SourceRecord, metadata: RecordMetadata | None) -> None:
        """``record`` was acknowledged by the transport (``metadata`` says where), or was
        filtered out by a transform / dropped by error tolerance (``metadata`` ``None``).
        """


class SinkTask(Task):
    """Writes records to an external system.

    On the task thread the runtime calls :meth:`initialize`, :meth:`start`,
    :meth:`open` for assigned partitions, then :meth:`put` with batches; periodically
    :meth:`pre_commit` (which by default calls :meth:`flush`) and commits the offsets it
    returns; :meth:`close` when partitions are revoked; :meth:`stop` last.
    """

    _context: SinkTaskContext | None = None  # also set for subclasses that skip __init__

    def __init__(self) -> None:
        self._context = None

    def initialize(self, context: SinkTaskContext) -> None:
        """Receive the context (pause/resume, offset reset, errant-record reporter)."""
        self._context = context

    @property
    def context(self) -> SinkTaskContext:
        """The runtime's context, from :meth:`initialize` on.

        Raises:
            IllegalStateError: Read before :meth:`initialize`.

        """
        if self._context is None:
            raise IllegalStateError(
                "the sink task has no context before initialize(); the runtime calls "
                "initialize() before start()"
            )
        return self._context

    @context.setter
    def context(self, context: SinkTaskContext) -> None:
        self._context = context

    def open(self, partitions: frozenset[TopicPartition]) -> None:
        """These partitions were assigned to the task; open writers for them."""

    def close(self, partitions: frozenset[TopicPartition]) -> None:
        """These partitions were revoked; write out and close their writers."""

    @abc.abstractmethod
    def put(self, records: Sequence[SinkRecord]) -> None:
        """Write (or buffer) a batch. Raise :class:`~omconnect.errors.RetriableError` to be
        called again with the same batch after a backoff (nothing is re-consumed).
        """

    def flush(self, offsets: Mapping[TopicPartition, int]) -> None:
        """Make everything handed to :meth:`put` durable. ``offsets`` are the next offsets
        after what was put, per partition.
        """

    @abc.abstractmethod
    def stop(self) -> None:
        """Release resources. Called **last**, on the task thread, after the final
        :meth:`pre_commit` (so :meth:`flush`) and :meth:`close` (as in Kafka Connect):
        nothing is called after it.

        A :meth:`put` that blocks is not interrupted: it should return within the worker's
        ``task.shutdown.graceful.timeout.ms``, or the runtime abandons the task, committing
        only what :meth:`pre_commit` last said was safe.
        """

    def pre_commit(self, offsets: Mapping[TopicPartition, int]) -> Mapping[TopicPartition, int]:
        """The offsets safe to commit, given everything put up to ``offsets``.

        The default flushes and returns ``offsets``. A sink that writes asynchronously
        returns less: never an offset beyond data that is durable.
        """
        self.flush(offsets)
        return offsets
