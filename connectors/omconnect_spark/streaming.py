"""The stream reader: micro-batches of offset ranges, exactly-once on replayable transports.

Spark calls, on its driver, in one long-lived Python process per query:
``initialOffset`` (a new query), then per trigger ``latestOffset(start, limit)``,
``partitions(start, end)`` and, once the batch's output is committed, ``commit(end)``. It
writes each batch's ``start``/``end`` to the checkpoint before running it, and a restarted
query re-runs an uncommitted batch with the same ``start``/``end``. Executors call
``read(partition)`` on a pickled copy of the reader.

Replayable transport (embedded, Kafka, Pulsar, RabbitMQ streams): the offsets are
positions per partition (:mod:`omconnect_spark.offsets`); ``read`` reads exactly its range
(:mod:`omconnect_spark.reading`). So a batch re-run after a crash reads the same records,
and with an idempotent sink (Spark's file sink, Delta, ...) the output holds each record
once. Nothing is committed to the transport: Spark's checkpoint is the only position.

Non-replayable transport: at-least-once through a consumer group, see
:mod:`omconnect_spark.group_reading`. The mode is chosen from the transport's
``capabilities.replayable`` when the query first asks for an offset.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

from omconnect_spark._pyspark import (
    DataSourceStreamReader,
    ReadAllAvailable,
    ReadMaxRows,
    SupportsTriggerAvailableNow,
)
from omconnect_spark.group_reading import GroupReader
from omconnect_spark.offset_specs import OffsetSpec
from omconnect_spark.offsets import (
    PartitionCatalog,
    PartitionOffsets,
    limit_offsets,
    offsets_from_json,
    offsets_to_json,
    plan_ranges,
    report_data_loss,
)
from omconnect_spark.options import ReadOptions
from omconnect_spark.reading import OffsetRangePartition, read_partition

__all__ = ["OmconnectStreamReader"]


class OmconnectStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """Spark's stream reader for the ``omconnect`` source.

    Holds no client until Spark first asks for an offset (readers are pickled to the
    executors); the driver's clients live until :meth:`stop`.

    Args:
        options: The parsed read options.
        schema: The query's schema (a StructType).

    """

    def __init__(self, options: ReadOptions, schema: Any) -> None:
        self._options = options
        self._schema = schema
        self._catalog: PartitionCatalog | None = None
        self._group: GroupReader | None = None
        self._target: PartitionOffsets | None = None
        self._available_now = False
        self._latest: PartitionOffsets | None = None
        self._last_trigger = time.monotonic()  # for minOffsetsPerTrigger/maxTriggerDelay

    def __getstate__(self) -> dict[str, Any]:
        # Executors get the options and schema only, never the driver's clients.
        return {"_options": self._options, "_schema": self._schema}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["_options"], state["_schema"])  # type: ignore[misc]

    # -- mode ---------------------------------------------------------------------------

    def _replay(self) -> bool:
        """Open the driver's clients on first use; True when the transport can replay."""
        if self._catalog is None:
            self._catalog = PartitionCatalog(self._options.transport, self._options.selection,
                                             self._options.retry_timeout_ms,
                                             self._options.read_timeout_ms)
            if not self._catalog.transport.capabilities.replayable:
                self._group = GroupReader(self._options)
                self._group.open(self._catalog.transport)
        return self._group is None

    # -- Spark's calls --------------------------------------------------------------------

    def initialOffset(self) -> dict[str, Any]:
        """Where a new query starts: ``startingOffsets`` (default latest) resolved now."""
        if not self._replay():
            assert self._group is not None
            return self._group.initial_offset()
        assert self._catalog is not None
        spec = self._options.starting or OffsetSpec(kind="latest")
        return offsets_to_json(self._catalog.resolve(spec, option="startingOffsets"))

    def getDefaultReadLimit(self) -> Any:
        """``ReadMaxRows(maxRecordsPerTrigger)`` when set, else everything available."""
        if self._options.max_records_per_trigger:
            return ReadMaxRows(self._options.max_records_per_trigger)
        return ReadAllAvailable()

    def prepareForTriggerAvailableNow(self) -> None:
        """Fix the end of a ``Trigger.AvailableNow`` run: the partitions' ends now."""
        self._available_now = True
        if self._replay():
            assert self._catalog is not None
            self._target = self._catalog.latest()

    def latestOffset(self, start: dict[str, Any], limit: Any) -> dict[str, Any]:
        """The end of the next batch: every partition's end (or the AvailableNow target),
        cut down to the read limit; ``start`` itself when there is nothing new.
        """
        if not self._replay():
            assert self._group is not None
            return self._group.latest_offset(start, limit, self._available_now)
        assert self._catalog is not None
        begin = offsets_from_json(start)
        latest = self._target if self._target is not None else self._catalog.latest()
        self._latest = latest
        end = dict(begin)
        for tp, offset in latest.items():
            if tp in begin and offset < begin[tp]:
                report_data_loss(
                    f"{tp}: the partition's end moved back from offset {begin[tp]} to "
                    f"{offset} (topic deleted and created again?); records may be missed",
                    fail=self._options.fail_on_data_loss, topic=tp.topic,
                    partition=tp.partition)
            end[tp] = offset
        if isinstance(limit, ReadMaxRows):
            end = limit_offsets(begin, end, int(limit.max_rows))
        if self._delayed(begin, end):
            return offsets_to_json(begin)
        if end != begin:
            self._last_trigger = time.monotonic()
        return offsets_to_json(end)

    def _delayed(self, begin: PartitionOffsets, end: PartitionOffsets) -> bool:
        """Whether ``minOffsetsPerTrigger`` holds this micro-batch back: fewer new records
        than it asks and less than ``maxTriggerDelay`` since the last micro-batch (never
        under ``Trigger.AvailableNow``).
        """
        wanted = self._options.min_records_per_trigger
        if wanted is None or self._available_now:
            return False
        new = sum(max(0, offset - begin.get(tp, 0)) for tp, offset in end.items())
        waited_ms = (time.monotonic() - self._last_trigger) * 1000
        return 0 < new < wanted and waited_ms < self._options.max_trigger_delay_ms

    def reportLatestOffset(self) -> dict[str, Any] | None:
        """The partitions' ends seen by the last ``latestOffset`` (query progress)."""
        return offsets_to_json(self._latest) if self._latest is not None else None

    def partitions(self, start: dict[str, Any], end: dict[str, Any]) -> list[Any]:
        """One input partition per partition's range (split by ``maxRecordsPerPartition``)."""
        if not self._replay():
            assert self._group is not None
            return self._group.partitions(start, end)
        ranges = plan_ranges(offsets_from_json(start), offsets_from_json(end),
                             max_per_range=self._options.max_records_per_partition,
                             min_ranges=self._options.min_partitions)
        return [OffsetRangePartition(item) for item in ranges]

    def read(self, partition: Any) -> Iterator[Any]:
        """The records of ``partition`` as Arrow record batches (on an executor)."""
        return read_partition(self._options, self._schema, partition)

    def commit(self, end: dict[str, Any]) -> None:
        """Spark committed the output up to ``end``: commit to the group in group mode;
        nothing to do on a replayable transport (the checkpoint holds the position).
        """
        if self._group is not None:
            self._group.commit(end)

    def stop(self) -> None:
        """Close the driver's clients."""
        group, self._group = self._group, None
        try:
            if group is not None:
                group.close()
        finally:
            catalog, self._catalog = self._catalog, None
            if catalog is not None:
                catalog.close()
