"""Staging an Arrow batch in the embedded writer's transaction: partitions, offsets,
chunks and the batch's acknowledgement, all per column.
"""

from __future__ import annotations

from omconnect.plugins import require

require("pyarrow", plugin="the columnar path", extra="columnar")
require("numpy", plugin="the columnar path", extra="columnar")

from typing import TYPE_CHECKING  # noqa: E402

import numpy as np  # noqa: E402
import pyarrow as pa  # noqa: E402

from omconnect.columnar.columns import HEADERS, KEY, PARTITION, TIMESTAMP, VALUE  # noqa: E402
from omconnect.columnar.metadata import BatchMetadata  # noqa: E402
from omconnect.columnar.records import millis  # noqa: E402
from omconnect.errors import SendError  # noqa: E402
from omconnect.transport.embedded.columns import encode_column_chunks  # noqa: E402
from omconnect.transport.embedded.schema import OFFSET_BITS  # noqa: E402
from omconnect.transport.kit.checks import failed_batch  # noqa: E402
from omconnect.transport.kit.partitioning import UnknownPartitionError  # noqa: E402

if TYPE_CHECKING:
    from omconnect.transport.embedded.producer import LogWriter

__all__ = ["stage_columns"]


def _binary(batch: pa.RecordBatch, name: str) -> pa.Array | None:
    if name not in batch.schema.names:
        return None
    column = batch.column(name)
    if pa.types.is_binary(column.type):
        return column
    return column.cast(pa.binary())


def stage_columns(
    writer: LogWriter, topic: str, batch: pa.RecordBatch, stamp: int,
    next_offsets: dict[int, int], rows: list[tuple[int, int, bytes]],
) -> BatchMetadata | SendError:
    """Add ``batch``'s chunks to ``rows`` (the writer's transaction); its
    acknowledgement, or why none of it can be stored.
    """
    n = batch.num_rows
    names = batch.schema.names
    keys = _binary(batch, KEY)
    values = _binary(batch, VALUE)
    assert values is not None
    headers = batch.column(HEADERS) if HEADERS in names else None
    if TIMESTAMP in names:
        timestamps = millis(batch.column(TIMESTAMP)).fill_null(stamp).to_numpy()
    else:
        timestamps = np.full(n, stamp, dtype=np.int64)
    pids = writer.partition_ids(topic)
    count = len(pids)
    named = batch.column(PARTITION) if PARTITION in names else None
    if named is not None and named.null_count == n:
        named = None
    if named is None and (keys is None or keys.null_count == n or count == 1):
        partitions = np.full(n, writer.partitioner.next_sticky() % count if count > 1 else 0,
                             dtype=np.int32)
    else:
        chosen = writer.partitioner.partitions(
            keys.to_pylist() if keys is not None else [None] * n, count)
        partitions = np.array(chosen, dtype=np.int32)
        if named is not None:
            given = named.cast(pa.int32()).to_numpy(zero_copy_only=False)
            mask = ~np.asarray(named.is_null().to_numpy(zero_copy_only=False))
            partitions = np.where(mask, np.nan_to_num(given).astype(np.int32), partitions)
            bad = np.flatnonzero(mask & ((partitions < 0) | (partitions >= count)))
            if len(bad):
                index = int(bad[0])
                error = UnknownPartitionError(
                    f"partition {int(partitions[index])} does not exist: topic {topic!r} has "
                    f"{count} partition(s), 0 to {count - 1}", index=index, topic=topic,
                    partition=int(partitions[index]))
                return failed_batch(n, index, error)
    offsets = np.empty(n, dtype=np.int64)
    first = int(partitions[0])
    groups: list[tuple[int, np.ndarray | None]]
    if (partitions == first).all():
        groups = [(first, None)]
    else:
        order = np.argsort(partitions, kind="stable")
        ordered = partitions[order]
        cuts = np.flatnonzero(np.diff(ordered)) + 1
        groups = [(int(partitions[g[0]]), g) for g in np.split(order, cuts)]
    for partition, indexes in groups:
        pid = pids[partition]
        start = writer.next_offset(pid, next_offsets)
        if indexes is None:
            part_keys, part_values, part_headers, part_times = keys, values, headers, timestamps
            offsets[:] = np.arange(start, start + n)
            size = n
        else:
            take = pa.array(indexes)
            part_keys = keys.take(take) if keys is not None else None
            part_values = values.take(take)
            part_headers = headers.take(take) if headers is not None else None
            part_times = timestamps[indexes]
            size = len(indexes)
            offsets[indexes] = np.arange(start, start + size)
        last = start - 1
        for chunk_count, data in encode_column_chunks(part_keys, part_values, part_times,
                                                      part_headers):
            last += chunk_count
            rows.append(((pid << OFFSET_BITS) | last, chunk_count, data))
        next_offsets[pid] = start + size
    return BatchMetadata(topic, pa.array(partitions), pa.array(offsets), pa.array(timestamps))
