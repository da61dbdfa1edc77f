"""The columns of the columnar path: their names, Arrow types and meaning.

A batch **sent** (``Producer.send_batch``, and the wire form the runtime makes of a
:class:`~omconnect.columnar.SourceBatch`) has ``value`` and, optionally, ``key``,
``headers``, ``timestamp`` and ``partition``; its topic is an argument of the call. A
batch **consumed** (``Consumer.poll_batch``, and what ``SinkTask.put_batch`` receives)
has every column of :func:`consumed_schema`, in that order.

=============  ===========================================  ==================================
column         type                                         meaning
=============  ===========================================  ==================================
``topic``      ``string``                                   the topic (consumed batches only)
``partition``  ``int32``                                    the partition; null on send: by key
``offset``     ``int64``                                    position in the partition
``timestamp``  ``int64``                                    ms since the epoch; null: stamped
``key``        ``binary`` (sink: as the key converter)      the key; null for none
``value``      ``binary`` (sink: as the value converter)    the value; null is a tombstone
``headers``    ``list<struct<key: string, value: binary>>`` the headers as they travel
=============  ===========================================  ==================================
"""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa

__all__ = [
    "HEADERS",
    "KEY",
    "OFFSET",
    "PARTITION",
    "SENT_COLUMNS",
    "TIMESTAMP",
    "TOPIC",
    "VALUE",
    "WIRE_HEADERS_TYPE",
    "consumed_batch",
    "consumed_schema",
    "empty_consumed_batch",
    "wire_headers",
]

TOPIC = "topic"
PARTITION = "partition"
OFFSET = "offset"
TIMESTAMP = "timestamp"
KEY = "key"
VALUE = "value"
HEADERS = "headers"

SENT_COLUMNS = (KEY, VALUE, HEADERS, TIMESTAMP, PARTITION)
"""The columns a sent batch may have (``value`` is required)."""

WIRE_HEADERS_TYPE = pa.list_(pa.struct([pa.field("key", pa.string(), nullable=False),
                                        pa.field("value", pa.binary())]))
"""Headers as they travel: per row, ordered (key, value bytes) pairs; keys may repeat."""

_CONSUMED = pa.schema([
    pa.field(TOPIC, pa.string(), nullable=False),
    pa.field(PARTITION, pa.int32(), nullable=False),
    pa.field(OFFSET, pa.int64(), nullable=False),
    pa.field(TIMESTAMP, pa.int64()),
    pa.field(KEY, pa.binary()),
    pa.field(VALUE, pa.binary()),
    pa.field(HEADERS, WIRE_HEADERS_TYPE),
])


_EMPTY = pa.RecordBatch.from_arrays([pa.array([], f.type) for f in _CONSUMED],
                                    schema=_CONSUMED)


def consumed_schema() -> pa.Schema:
    """The schema of a batch a consumer returns: every column, key and value as bytes."""
    return _CONSUMED


def empty_consumed_batch() -> pa.RecordBatch:
    """A consumed batch with no rows (what ``poll_batch`` returns when nothing came)."""
    return _EMPTY


def consumed_batch(topics: Sequence[str], partitions: Sequence[int],
                   offsets: Sequence[int], timestamps: Sequence[int | None],
                   keys: Sequence[bytes | None], values: Sequence[bytes | None],
                   headers: Sequence[Sequence[tuple[str, bytes | None]] | None]
                   ) -> pa.RecordBatch:
    """A consumed batch (:func:`consumed_schema`) of its columns given item by item, one
    item per row; ``headers`` holds each row's (key, value) pairs (empty or ``None``
    where it has none). How a consumer that reads one client message at a time builds
    its batch.
    """
    has_headers = any(headers)
    return pa.RecordBatch.from_arrays([
        pa.array(topics, pa.string()),
        pa.array(partitions, pa.int32()),
        pa.array(offsets, pa.int64()),
        pa.array(timestamps, pa.int64()),
        pa.array(keys, pa.binary()),
        pa.array(values, pa.binary()),
        pa.array([list(h) if h else None for h in headers], WIRE_HEADERS_TYPE)
        if has_headers else pa.nulls(len(offsets), WIRE_HEADERS_TYPE),
    ], schema=_CONSUMED)


def wire_headers(column: pa.Array | pa.ChunkedArray | None, rows: int
                 ) -> list[tuple[tuple[str, bytes | None], ...]]:
    """Each row's headers (a ``headers`` column of :data:`WIRE_HEADERS_TYPE`) as a tuple
    of (key, value) pairs, the form a transport message carries (``()`` where null or
    empty); ``rows`` empty tuples when there is no column.
    """
    if column is None or column.null_count == len(column):
        return [()] * rows
    return [tuple((h["key"], h["value"]) for h in row) if row else ()
            for row in column.to_pylist()]
