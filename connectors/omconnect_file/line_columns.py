r"""Lines as an Arrow column, for the file source's columnar poll: :func:`line_batch`.

A block of complete lines (each ending in ``\n``) is split by Arrow's kernels, so a poll
of thousands of lines builds no Python object per line. Lines read as they do on the
per-record path: a ``\r`` before the newline is dropped, and bytes that are not UTF-8
become U+FFFD.
"""

from __future__ import annotations

from collections.abc import Mapping

from omconnect.plugins import require

require("pyarrow", plugin="the file source's columnar poll", extra="columnar")

import numpy as np  # noqa: E402
import pyarrow as pa  # noqa: E402
import pyarrow.compute as pc  # noqa: E402

from omconnect.columnar.source_batch import SourceBatch  # noqa: E402
from omconnect.data import STRING_SCHEMA  # noqa: E402
from omconnect.records import JsonScalar  # noqa: E402

__all__ = ["line_batch", "line_column"]


def line_column(block: bytes) -> pa.Array:
    r"""The lines of ``block`` (complete lines, each ending in ``\n``) as a string column."""
    pieces = pc.split_pattern(pa.array([block], pa.binary()), pattern=b"\n").flatten()
    lines = pieces.slice(0, len(pieces) - 1)  # the empty piece after the last newline
    if b"\r" in block:
        lines = pc.replace_substring_regex(lines, pattern="\r$", replacement="")
    try:
        return lines.cast(pa.string())  # checks the UTF-8
    except pa.ArrowInvalid:  # some line is not UTF-8: decode as the per-record path does
        return pa.array([line.decode("utf-8", "replace") for line in lines.to_pylist()],
                        pa.string())


def line_batch(topic: str, block: bytes, timestamp: int,
               source_partition: Mapping[str, JsonScalar],
               source_offset: Mapping[str, JsonScalar]) -> SourceBatch:
    """The lines of ``block`` as a batch of string values stamped ``timestamp``, reaching
    ``source_offset`` once delivered.
    """
    values = line_column(block)
    stamps = pa.array(np.full(len(values), timestamp, dtype=np.int64))
    return SourceBatch(topic=topic,
                       records=pa.RecordBatch.from_arrays([values, stamps],
                                                          names=["value", "timestamp"]),
                       source_partition=source_partition, source_offset=source_offset,
                       value_schema=STRING_SCHEMA)
