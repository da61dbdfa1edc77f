r"""The file sink's lines of an Arrow value column: each value and a ``\n``.

A ``string`` or ``binary`` column is laid out with numpy from its data and offsets
buffers (nulls written as ``null``, as :func:`~omconnect_file.line_text.line_of` writes them);
other types go value by value through ``line_of``.
"""

from __future__ import annotations

from omconnect.plugins import require

require("pyarrow", plugin="the file sink's columnar path", extra="columnar")
require("numpy", plugin="the file sink's columnar path", extra="columnar")

import numpy as np  # noqa: E402
import pyarrow as pa  # noqa: E402

from omconnect.columnar.buffers import data_of, offsets_of  # noqa: E402
from omconnect_file.line_text import line_of  # noqa: E402

__all__ = ["lines_of_column"]

_NULL = np.frombuffer(b"null", dtype=np.uint8)


def lines_of_column(column: pa.Array) -> bytes | memoryview:
    """The bytes the file sink appends for ``column``'s values, one line each."""
    kind = column.type
    if not (pa.types.is_string(kind) or pa.types.is_binary(kind)):
        return b"".join([line_of(value) + b"\n" for value in column.to_pylist()])
    rows = len(column)
    if rows == 0:
        return b""
    offsets = offsets_of(column)
    data = np.frombuffer(data_of(column), dtype=np.uint8)
    lengths = np.diff(offsets).astype(np.int64)
    nulls = None
    if column.null_count:
        nulls = ~column.is_valid().to_numpy(zero_copy_only=False)
        lengths = np.where(nulls, len(_NULL), lengths)
    ends = np.cumsum(lengths + 1)  # each line's end, after its newline
    starts = ends - lengths - 1
    out = np.empty(int(ends[-1]), dtype=np.uint8)
    out[ends - 1] = ord("\n")
    source = np.arange(int(offsets[0]), int(offsets[-1]), dtype=np.int64)
    rows_of_byte = np.repeat(np.arange(rows), np.diff(offsets))
    within = source - offsets[:-1][rows_of_byte]
    out[starts[rows_of_byte] + within] = data[source]
    if nulls is not None:
        for start in starts[nulls]:
            out[start:start + len(_NULL)] = _NULL
    return out.data
