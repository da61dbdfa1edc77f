"""The batch reader: ``spark.read.format("omconnect")`` between two offsets.

``partitions()`` runs once on Spark's driver when the query is planned: it resolves
``startingOffsets`` (default earliest) and ``endingOffsets`` (default latest) against the
partitions' logs at that moment and returns one input partition per partition's range.
Each task then reads exactly its range (:mod:`omconnect_spark.reading`), so records that
arrive while the query runs are not read. Batch reads need a replayable transport.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from omconnect.errors import ConfigError
from omconnect_spark._pyspark import DataSourceReader
from omconnect_spark.offset_specs import OffsetSpec
from omconnect_spark.offsets import PartitionCatalog, plan_ranges
from omconnect_spark.options import ReadOptions
from omconnect_spark.reading import OffsetRangePartition, read_partition

__all__ = ["OmconnectBatchReader"]


class OmconnectBatchReader(DataSourceReader):
    """Spark's batch reader for the ``omconnect`` source.

    Args:
        options: The parsed read options.
        schema: The query's schema (a StructType).

    """

    def __init__(self, options: ReadOptions, schema: Any) -> None:
        self._options = options
        self._schema = schema

    def partitions(self) -> list[Any]:
        """One input partition per partition's range from the starting to the ending
        offsets, as they resolve now.

        Raises:
            ConfigError: The transport cannot replay, a topic or an offsets JSON names a
                partition that does not exist, or a starting offset lies beyond its ending
                offset.

        """
        options = self._options
        catalog = PartitionCatalog(options.transport, options.selection,
                                   options.retry_timeout_ms, options.read_timeout_ms)
        try:
            if not catalog.transport.capabilities.replayable:
                raise ConfigError(
                    f"transport {options.transport.name!r} cannot replay, so it has no offsets "
                    "to read between; read it with spark.readStream (at-least-once, in a "
                    "consumer group) or make its topics replayable", key="transport")
            start = catalog.resolve(options.starting or OffsetSpec(kind="earliest"),
                                    option="startingOffsets")
            end = catalog.resolve(options.ending, option="endingOffsets")
        finally:
            catalog.close()
        backwards = [f"{tp} ({start[tp]} > {end[tp]})" for tp in start if start[tp] > end[tp]]
        if backwards:
            raise ConfigError("startingOffsets lies beyond endingOffsets for "
                              f"{', '.join(backwards)}; fix one of them", key="startingOffsets")
        ranges = plan_ranges(start, end, max_per_range=options.max_records_per_partition,
                             min_ranges=options.min_partitions)
        return [OffsetRangePartition(item) for item in ranges]

    def read(self, partition: Any) -> Iterator[Any]:
        """The records of ``partition`` as Arrow record batches (on an executor)."""
        return read_partition(self._options, self._schema, partition)
