"""The size of each row of a sent batch, as transports count it against their limit:
key + value + header keys and values (``Message.size``, row by row).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from omconnect.columnar.buffers import offsets_of
from omconnect.columnar.columns import HEADERS, KEY, VALUE
from omconnect.errors import MessageTooLargeError

__all__ = ["check_row_sizes", "row_sizes"]


def _lengths(batch: pa.RecordBatch, name: str) -> np.ndarray | int:
    """Each item's byte length (0 for null), from the offsets buffer."""
    if name not in batch.schema.names:
        return 0
    column = batch.column(name)
    if pa.types.is_null(column.type) or len(column) == 0:
        return 0
    if not (pa.types.is_binary(column.type) or pa.types.is_string(column.type)):
        column = column.cast(pa.binary())
    lengths: np.ndarray = np.diff(offsets_of(column)).astype(np.int64)
    return lengths


def row_sizes(batch: pa.RecordBatch) -> np.ndarray:
    """Bytes of key, value and headers of each row."""
    sizes = np.zeros(batch.num_rows, dtype=np.int64) + _lengths(batch, VALUE) + \
        _lengths(batch, KEY)
    if HEADERS in batch.schema.names and batch.column(HEADERS).null_count != batch.num_rows:
        headers = batch.column(HEADERS)
        flat = pc.list_flatten(headers)
        lengths = pc.binary_length(pc.struct_field(flat, [0]).cast(pa.binary())).fill_null(0)
        lengths = pc.add(lengths, pc.binary_length(pc.struct_field(flat, [1])).fill_null(0))
        parents = pc.list_parent_indices(headers).to_numpy()
        sizes = sizes + np.bincount(parents, weights=lengths.to_numpy(),
                                    minlength=batch.num_rows).astype(np.int64)
    return sizes


def check_row_sizes(topic: str, batch: pa.RecordBatch, limit: int, **context: object) -> None:
    """Raise if a row of ``batch`` is over ``limit`` bytes (nothing of it is sent).

    Raises:
        MessageTooLargeError: Naming the first such row's index, its size and the limit.

    """
    sizes = row_sizes(batch)
    over = np.flatnonzero(sizes > limit)
    if len(over):
        index = int(over[0])
        raise MessageTooLargeError(int(sizes[index]), limit, topic=topic, index=index,
                                   **context)
