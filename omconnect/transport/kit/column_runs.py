"""Splitting an Arrow batch to send into one run per partition, per column:
:func:`column_runs`, and its acknowledgement once stored: :func:`column_metadata`.

The columnar twin of what :class:`~omconnect.transport.kit.log_writer.LogWriter` does
for messages: each row goes to the partition it names, else its key's partition (the
same murmur2 choice as :class:`~omconnect.transport.kit.partitioning.Partitioner`), and
key-less rows of one batch share a sticky partition; rows keep their order within a
partition.
"""

from __future__ import annotations

from omconnect.plugins import require

require("pyarrow", plugin="the columnar path", extra="columnar")
require("numpy", plugin="the columnar path", extra="columnar")

from collections.abc import Sequence  # noqa: E402

import numpy as np  # noqa: E402
import pyarrow as pa  # noqa: E402

from omconnect.columnar.columns import HEADERS, KEY, PARTITION, TIMESTAMP, VALUE  # noqa: E402
from omconnect.columnar.metadata import BatchMetadata  # noqa: E402
from omconnect.columnar.records import millis  # noqa: E402
from omconnect.records import TopicPartition  # noqa: E402
from omconnect.transport.kit.log_store import LogRun  # noqa: E402
from omconnect.transport.kit.partitioning import Partitioner, UnknownPartitionError  # noqa: E402

__all__ = ["ColumnPlacement", "column_metadata", "column_runs", "placed_rows"]


class ColumnPlacement:
    """Where the rows of one batch go: each row's partition and timestamp, and the runs
    (with the row indexes of each, ``None`` when the run is the whole batch).
    """

    __slots__ = ("indexes", "partitions", "runs", "timestamps", "topic")

    def __init__(self, topic: str, partitions: np.ndarray, timestamps: np.ndarray,
                 runs: list[LogRun], indexes: list[np.ndarray | None]) -> None:
        self.topic = topic
        self.partitions = partitions
        self.timestamps = timestamps
        self.runs = runs
        self.indexes = indexes


def _binary(batch: pa.RecordBatch, name: str, rows: int) -> pa.Array:
    if name not in batch.schema.names:
        return pa.nulls(rows, pa.binary())
    column = batch.column(name)
    return column if pa.types.is_binary(column.type) else column.cast(pa.binary())


def column_runs(topic: str, batch: pa.RecordBatch, partition_count: int,
                partitioner: Partitioner, stamp: int) -> ColumnPlacement:
    """Place ``batch``'s rows on ``topic``'s ``partition_count`` partitions (see
    :func:`placed_rows`) and cut them into one run per partition.

    Raises:
        UnknownPartitionError: A row names a partition the topic does not have (its
            ``index`` is the row's).

    """
    partitions, timestamps, columns = placed_rows(topic, batch, partition_count,
                                                  partitioner, stamp)
    first = int(partitions[0])
    if (partitions == first).all():
        return ColumnPlacement(topic, partitions, timestamps,
                               [LogRun(TopicPartition(topic, first), columns=columns)], [None])
    order = np.argsort(partitions, kind="stable")  # keeps each partition's row order
    groups: Sequence[np.ndarray] = np.split(order, np.flatnonzero(np.diff(partitions[order])) + 1)
    runs = [LogRun(TopicPartition(topic, int(partitions[g[0]])), columns=columns.take(g))
            for g in groups]
    return ColumnPlacement(topic, partitions, timestamps, runs, list(groups))


def placed_rows(topic: str, batch: pa.RecordBatch, partition_count: int,
                partitioner: Partitioner, stamp: int
                ) -> tuple[np.ndarray, np.ndarray, pa.RecordBatch]:
    """Each row's partition (``int32``) and timestamp (``int64``; ``stamp`` where it had
    none), and the rows as they are stored, in the batch's order: ``key`` and ``value``
    binary, ``timestamp`` filled, ``headers`` when sent. For a client that takes rows one
    by one, without :func:`column_runs`' copy per partition.

    Raises:
        UnknownPartitionError: A row names a partition the topic does not have (its
            ``index`` is the row's).

    """
    n = batch.num_rows
    names = batch.schema.names
    keys = _binary(batch, KEY, n)
    values = _binary(batch, VALUE, n)
    if TIMESTAMP in names:
        timestamps = millis(batch.column(TIMESTAMP)).fill_null(stamp).to_numpy()
    else:
        timestamps = np.full(n, stamp, dtype=np.int64)
    named = batch.column(PARTITION) if PARTITION in names else None
    if named is not None and named.null_count == n:
        named = None
    if named is None and (keys.null_count == n or partition_count == 1):
        sticky = partitioner.next_sticky() % partition_count if partition_count > 1 else 0
        partitions = np.full(n, sticky, dtype=np.int32)
    else:
        partitions = np.array(partitioner.partitions(keys.to_pylist(), partition_count),
                              dtype=np.int32)
        if named is not None:
            given = named.cast(pa.int32()).to_numpy(zero_copy_only=False)
            mask = ~np.asarray(named.is_null().to_numpy(zero_copy_only=False))
            partitions = np.where(mask, np.nan_to_num(given).astype(np.int32), partitions)
            bad = np.flatnonzero(mask & ((partitions < 0) | (partitions >= partition_count)))
            if len(bad):
                index = int(bad[0])
                raise UnknownPartitionError(
                    f"partition {int(partitions[index])} does not exist: topic {topic!r} has "
                    f"{partition_count} partition(s), 0 to {partition_count - 1}",
                    index=index, topic=topic, partition=int(partitions[index]))
    arrays = [keys, values, pa.array(timestamps, pa.int64())]
    fields = [KEY, VALUE, TIMESTAMP]
    if HEADERS in names:
        arrays.append(batch.column(HEADERS))
        fields.append(HEADERS)
    return partitions, timestamps, pa.RecordBatch.from_arrays(arrays, names=fields)


def column_metadata(placement: ColumnPlacement, firsts: Sequence[int]) -> BatchMetadata:
    """The acknowledgement of a placed batch, given the first offset of each run."""
    n = len(placement.partitions)
    if placement.indexes == [None]:
        offsets = np.arange(firsts[0], firsts[0] + n, dtype=np.int64)
    else:
        offsets = np.empty(n, dtype=np.int64)
        for first, indexes in zip(firsts, placement.indexes, strict=True):
            assert indexes is not None
            offsets[indexes] = np.arange(first, first + len(indexes))
    return BatchMetadata(placement.topic, pa.array(placement.partitions), pa.array(offsets),
                         pa.array(placement.timestamps))
