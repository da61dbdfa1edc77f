"""Columnar tasks: a source that returns Arrow batches, a sink that takes them.

Subclass :class:`BatchSourceTask` and implement :meth:`~BatchSourceTask.poll_batch`, or
:class:`BatchSinkTask` and implement :meth:`~BatchSinkTask.put_batch`; ``poll``/``put``
are derived, so the runtime runs the task on the per-record path too (when a transform
or converter needs records). The runtime also recognises ``poll_batch``/``put_batch`` on
any :class:`~omconnect.connector.SourceTask`/:class:`~omconnect.connector.SinkTask` that
defines them beside ``poll``/``put``. Needs pyarrow (the ``columnar`` extra).
"""

from __future__ import annotations

import abc
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from omconnect.connector.task import SinkTask, SourceTask

if TYPE_CHECKING:
    import pyarrow as pa

    from omconnect.columnar.source_batch import SourceBatch
    from omconnect.records import SinkRecord, SourceRecord

__all__ = ["BatchSinkTask", "BatchSourceTask", "batches_of", "columnar_available",
           "polls_batches", "puts_batches"]


def columnar_available() -> bool:
    """Whether the columnar path's libraries (pyarrow, numpy: the ``columnar`` extra) are
    installed. Without them a task that also implements ``poll``/``put`` (the built-in
    file and null sinks do) runs record by record.
    """
    try:
        import omconnect.columnar  # noqa: F401
    except ImportError:
        return False
    return True


def polls_batches(task: SourceTask) -> bool:
    """Whether ``task`` returns Arrow batches (defines ``poll_batch``)."""
    return callable(getattr(type(task), "poll_batch", None))


def puts_batches(task: SinkTask) -> bool:
    """Whether ``task`` takes Arrow batches (defines ``put_batch``)."""
    return callable(getattr(type(task), "put_batch", None))


def batches_of(polled: Any) -> list[SourceBatch | SourceRecord]:
    """What ``poll_batch`` returned, as a list (``None`` → ``[]``): batches, and records
    for rows the task could not give as columns (an
    :class:`~omconnect.records.ErrantSourceRecord`, an object of a format with no column
    reader), in the order returned.

    Raises:
        IllegalStateError: It returned something else than ``SourceBatch`` and
            ``SourceRecord`` objects.

    """
    from omconnect.columnar.source_batch import SourceBatch
    from omconnect.errors import IllegalStateError
    from omconnect.records import SourceRecord

    if polled is None:
        return []
    items = [polled] if isinstance(polled, SourceBatch) else list(polled)
    for item in items:
        if not isinstance(item, SourceBatch | SourceRecord):
            raise IllegalStateError(
                f"poll_batch() returned a {type(item).__name__}; it must return a "
                "SourceBatch, a list of SourceBatch and SourceRecord objects, or None")
    return items


class BatchSourceTask(SourceTask):
    """A source task that reads Arrow batches; :meth:`poll` is derived from
    :meth:`poll_batch`.
    """

    @abc.abstractmethod
    def poll_batch(self) -> SourceBatch | Sequence[SourceBatch | SourceRecord] | None:
        """New rows as one :class:`~omconnect.columnar.SourceBatch` (or several, e.g. one
        per source partition), or ``None`` when there is nothing yet. A list may hold
        :class:`~omconnect.records.SourceRecord` objects between the batches, for rows
        that cannot be columns (an :class:`~omconnect.records.ErrantSourceRecord` for
        the dead-letter queue, a record of a kind the task reads per record): the runtime
        sends them on the per-record path, in the same order, and commits offsets in
        that order too.

        The rules of :meth:`~omconnect.connector.SourceTask.poll` hold: return within
        about a second, raise :class:`~omconnect.errors.RetriableError` for a transient
        failure. Each batch's ``source_offset`` is committed once all its rows (and
        everything before them from its source partition) are acknowledged.
        """

    def poll(self) -> Sequence[SourceRecord] | None:
        """:meth:`poll_batch`'s rows as records, in order (for the per-record path)."""
        from omconnect.columnar.records import records_of

        return records_of(batches_of(self.poll_batch())) or None


class BatchSinkTask(SinkTask):
    """A sink task that writes Arrow batches; :meth:`put` is derived from
    :meth:`put_batch`.
    """

    @abc.abstractmethod
    def put_batch(self, batch: pa.RecordBatch) -> None:
        """Write (or buffer) the rows of ``batch``: the columns ``topic``, ``partition``,
        ``offset``, ``timestamp``, ``key``, ``value`` and ``headers`` (see
        :mod:`omconnect.columnar.columns`). ``key`` and ``value`` are as the converters
        give them: ``binary`` with ``bytearray``, ``string`` with ``string``, Arrow's
        reading of the decoded values otherwise (e.g. ``struct`` for JSON objects).
        Headers come in wire form. The rules of :meth:`~omconnect.connector.SinkTask.put`
        hold: raise :class:`~omconnect.errors.RetriableError` to be given the same batch
        again.
        """

    def report_row(self, batch: pa.RecordBatch, row: int, error: BaseException) -> Any:
        """Report row ``row`` of ``batch`` as errant (Kafka Connect's errant-record
        reporter, for a batch): it is handled per ``errors.tolerance`` (logged, written to
        the dead-letter topic with its original bytes) while the task goes on with the
        other rows; its offset is committed with theirs once the report completed.

        Returns:
            The reporter's future, or ``None`` when the runtime gives no reporter.

        """
        from omconnect.columnar.columns import wire_headers
        from omconnect.data.headers import Headers
        from omconnect.records import SinkRecord

        reporter = self.context.errant_record_reporter
        if reporter is None:
            return None
        one = batch.slice(row, 1).to_pylist()[0]
        headers = wire_headers(batch.column("headers").slice(row, 1), 1)[0] \
            if "headers" in batch.schema.names else ()
        record = SinkRecord(topic=one["topic"], partition=one["partition"],
                            offset=one["offset"], key=one.get("key"), value=one.get("value"),
                            timestamp=one.get("timestamp"), headers=Headers(headers))
        return reporter.report(record, error)

    def put(self, records: Sequence[SinkRecord]) -> None:
        """``records`` as one batch to :meth:`put_batch` (for the per-record path)."""
        from omconnect.columnar.records import sink_records_to_batch

        if records:
            self.put_batch(sink_records_to_batch(records))
