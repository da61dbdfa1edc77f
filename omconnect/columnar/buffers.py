"""The buffers of a ``binary`` or ``string`` Arrow column, for code that lays bytes out
with numpy instead of one Python object per item.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

__all__ = ["data_of", "offsets_of"]


def offsets_of(column: pa.Array) -> np.ndarray:
    """The ``len(column) + 1`` offsets of a ``binary``/``string`` column into its data
    buffer (a slice's own, not rebased: item ``i`` is ``data[offsets[i]:offsets[i + 1]]``).
    """
    rows = len(column)
    if rows == 0:
        return np.zeros(1, dtype=np.int32)
    offsets: np.ndarray = np.frombuffer(column.buffers()[1], dtype=np.int32)[
        column.offset:column.offset + rows + 1]
    return offsets


def data_of(column: pa.Array) -> memoryview:
    """The data buffer of a ``binary``/``string`` column (empty when it has none)."""
    buffer = column.buffers()[2] if len(column) else None
    return memoryview(buffer) if buffer is not None else memoryview(b"")
