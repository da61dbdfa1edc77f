"""The embedded log's chunks written from, and read into, Arrow columns.

A chunk (see :mod:`~omconnect.transport.embedded.codec`) is already columnar: lengths,
then every key, then every value. So a batch's ``binary`` columns go into chunks as
their length arrays and one slice of their data buffers, and a chunk comes back as
Arrow arrays built over its bytes, with no Python object per record either way. Headers,
which chunks keep per record, are encoded and decoded per record.
"""

from __future__ import annotations

from omconnect.plugins import require

require("pyarrow", plugin="the columnar path", extra="columnar")
require("numpy", plugin="the columnar path", extra="columnar")

import numpy as np  # noqa: E402
import pyarrow as pa  # noqa: E402

from omconnect.columnar.buffers import data_of, offsets_of  # noqa: E402
from omconnect.columnar.columns import (  # noqa: E402
    WIRE_HEADERS_TYPE,
    consumed_schema,
    wire_headers,
)
from omconnect.errors import TransportError  # noqa: E402
from omconnect.transport.embedded.codec import (  # noqa: E402
    _HAS_HEADERS,
    _PREFIX,
    _VERSION,
    CHUNK_BYTES,
    CHUNK_RECORDS,
    decode_headers,
    encode_headers,
)

__all__ = ["decode_chunk_columns", "encode_column_chunks"]


def _lengths(column: pa.Array | None, rows: int) -> np.ndarray:
    """Each item's length, -1 for null (``int32``), from the offsets buffer."""
    if column is None or pa.types.is_null(column.type):
        return np.full(rows, -1, dtype=np.int32)
    data = _data(column)
    if data is None:
        return np.zeros(0, dtype=np.int32)
    lengths: np.ndarray = np.diff(data[1]).astype(np.int32, copy=False)
    if column.null_count:
        valid = column.is_valid().to_numpy(zero_copy_only=False)
        lengths = np.where(valid, lengths, -1).astype(np.int32)
    return lengths


def _data(column: pa.Array | None) -> tuple[memoryview, np.ndarray] | None:
    """A binary column's data buffer and its ``rows + 1`` offsets into it."""
    if column is None or pa.types.is_null(column.type) or len(column) == 0:
        return None
    return data_of(column), offsets_of(column)


def _slice(data: tuple[memoryview, np.ndarray] | None, start: int, stop: int) -> memoryview:
    if data is None:
        return memoryview(b"")
    buffer, offsets = data
    return buffer[int(offsets[start]):int(offsets[stop])]


def encode_column_chunks(
    keys: pa.Array | None, values: pa.Array, timestamps: np.ndarray,
    headers: pa.Array | None = None,
) -> list[tuple[int, bytes]]:
    """The rows of one partition (``binary`` keys, values, ``int64`` timestamps, wire
    headers) packed into chunks, cut as :func:`~omconnect.transport.embedded.codec.
    encode_chunks` cuts them.

    Returns:
        (record count, stored form) of each chunk, in order.

    """
    rows = len(values)
    key_lengths = _lengths(keys, rows)
    value_lengths = _lengths(values, rows)
    header_blobs: list[bytes | None] | None = None
    header_lengths = None
    if headers is not None and headers.null_count != len(headers):
        header_blobs = [encode_headers(h) for h in wire_headers(headers, rows)]
        header_lengths = np.array([-1 if b is None else len(b) for b in header_blobs],
                                  dtype=np.int32)
    sizes = np.maximum(key_lengths, 0).astype(np.int64) + np.maximum(value_lengths, 0)
    ends = np.concatenate(([0], np.cumsum(sizes)))
    key_data = _data(keys)
    value_data = _data(values)
    chunks = []
    start = 0
    while start < rows:
        fit = int(np.searchsorted(ends, ends[start] + CHUNK_BYTES, side="right")) - 1
        stop = max(start + 1, min(fit, start + CHUNK_RECORDS, rows))
        parts: list[bytes | memoryview] = [
            _PREFIX.pack(_VERSION, _HAS_HEADERS if header_blobs else 0, stop - start),
            key_lengths[start:stop].tobytes(),
            value_lengths[start:stop].tobytes(),
            timestamps[start:stop].astype(np.int64, copy=False).tobytes(),
        ]
        if header_lengths is not None:
            parts.append(header_lengths[start:stop].tobytes())
        parts.append(_slice(key_data, start, stop))
        parts.append(_slice(value_data, start, stop))
        if header_blobs is not None:
            parts.append(b"".join(filter(None, header_blobs[start:stop])))
        chunks.append((stop - start, b"".join(parts)))
        start = stop
    return chunks


def _binary(data: bytes, lengths: np.ndarray, position: int) -> tuple[pa.Array, int]:
    """A binary array over ``data`` from ``position``; and where its data ends."""
    sizes = np.maximum(lengths, 0)
    offsets = np.zeros(len(lengths) + 1, dtype=np.int32)
    np.cumsum(sizes, out=offsets[1:])
    end = position + int(offsets[-1])
    validity = None
    nulls = int(np.count_nonzero(lengths < 0))
    if nulls:
        validity = pa.py_buffer(np.packbits(lengths >= 0, bitorder="little"))
    array = pa.Array.from_buffers(pa.binary(), len(lengths),
                                  [validity, pa.py_buffer(offsets),
                                   pa.py_buffer(memoryview(data)[position:end])],
                                  null_count=nulls)
    return array, end


def decode_chunk_columns(
    data: bytes, *, topic: str, partition: int, base_offset: int, first: int = 0,
    limit: int | None = None,
) -> pa.RecordBatch:
    """Records ``first`` to ``first + limit`` of a chunk, as a consumed batch.

    Raises:
        TransportError: The chunk is not in a known format (a damaged database).

    """
    try:
        version, flags, count = _PREFIX.unpack_from(data, 0)
        if version != _VERSION:
            raise TransportError(f"embedded transport: stored records have unknown format "
                                 f"version {version}", topic=topic, partition=partition)
        stop = count if limit is None else min(count, first + limit)
        position = _PREFIX.size
        key_lengths = np.frombuffer(data, np.int32, count, position)
        value_lengths = np.frombuffer(data, np.int32, count, position + 4 * count)
        timestamps = np.frombuffer(data, np.int64, count, position + 8 * count)
        position += 16 * count
        header_lengths = None
        if flags & _HAS_HEADERS:
            header_lengths = np.frombuffer(data, np.int32, count, position)
            position += 4 * count
        keys, position = _binary(data, key_lengths, position)
        values, position = _binary(data, value_lengths, position)
        rows = max(0, stop - first)
        if header_lengths is None:
            headers = pa.nulls(rows, WIRE_HEADERS_TYPE)
        else:
            blobs: list[bytes | None] = []
            for length in header_lengths[:stop].tolist():
                if length < 0:
                    blobs.append(None)
                else:
                    blobs.append(data[position:position + length])
                    position += length
            headers = pa.array([list(decode_headers(b)) or None for b in blobs[first:stop]],
                               WIRE_HEADERS_TYPE)
    except (ValueError, IndexError, pa.ArrowInvalid) as exc:
        raise TransportError(f"embedded transport: stored records are damaged: {exc}",
                             topic=topic, partition=partition, offset=base_offset) from exc
    return pa.RecordBatch.from_arrays([
        pa.repeat(pa.scalar(topic, pa.string()), rows),
        pa.array(np.full(rows, partition, dtype=np.int32)),
        pa.array(np.arange(base_offset + first, base_offset + first + rows, dtype=np.int64)),
        pa.array(timestamps[first:stop]),
        keys.slice(first, rows),
        values.slice(first, rows),
        headers,
    ], schema=consumed_schema())
