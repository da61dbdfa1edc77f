"""The column operations the built-in transforms and predicates use on Arrow batches:
routing topics, testing topics and headers, adding and dropping headers. The chain that
runs transforms on batches is :class:`~omconnect.transforms.columnar_chain.ColumnarChain`.

The batch's columns: ``topic``, ``key``, ``value``, ``headers`` (wire form), ``timestamp``
and, on the sink side, ``partition`` and ``offset``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from omconnect.columnar.columns import HEADERS, TOPIC, WIRE_HEADERS_TYPE

__all__ = ["append_header", "drop_headers", "has_header", "map_topics", "topic_mask"]

_ITEM = WIRE_HEADERS_TYPE.value_type


def _replace(batch: pa.RecordBatch, name: str, column: pa.Array) -> pa.RecordBatch:
    index = batch.schema.get_field_index(name)
    if index < 0:
        return batch.append_column(name, column)
    return batch.set_column(index, pa.field(name, column.type), column)


def map_topics(batch: pa.RecordBatch, route: Callable[[str], str]) -> pa.RecordBatch:
    """``batch`` with each row's topic replaced by ``route(topic)`` (called once per
    distinct topic).
    """
    topics = batch.column(TOPIC)
    distinct = pc.unique(topics)
    names = distinct.to_pylist()
    routed = [route(name) for name in names]
    if routed == names:
        return batch
    column = pa.array(routed, pa.string()).take(pc.index_in(topics, value_set=distinct))
    return _replace(batch, TOPIC, column)


def topic_mask(batch: pa.RecordBatch, matches: Callable[[str], bool]) -> pa.Array:
    """Whether each row's topic satisfies ``matches`` (called once per distinct topic)."""
    topics = batch.column(TOPIC)
    chosen = [name for name in pc.unique(topics).to_pylist() if matches(name)]
    return pc.is_in(topics, value_set=pa.array(chosen, pa.string()))


def _headers(batch: pa.RecordBatch) -> pa.Array:
    if HEADERS in batch.schema.names:
        column = batch.column(HEADERS)
        return column if column.type == WIRE_HEADERS_TYPE else column.cast(WIRE_HEADERS_TYPE)
    return pa.nulls(batch.num_rows, WIRE_HEADERS_TYPE)


def _lengths(headers: pa.Array) -> np.ndarray:
    lengths = pc.list_value_length(headers)
    if lengths.null_count:
        lengths = pc.coalesce(lengths, pa.scalar(0, lengths.type))
    result: np.ndarray = lengths.to_numpy(zero_copy_only=False).astype(np.int64)
    return result


def _list(offsets: np.ndarray, items: pa.Array) -> pa.Array:
    return pa.ListArray.from_arrays(pa.array(offsets.astype(np.int32)), items,
                                    type=WIRE_HEADERS_TYPE)


def append_header(batch: pa.RecordBatch, key: str,
                  value_for: Callable[[str], bytes | None]) -> pa.RecordBatch:
    """``batch`` with the header ``key`` appended to every row; its wire value per topic
    is ``value_for(topic)`` (called once per distinct topic).
    """
    rows = batch.num_rows
    headers = _headers(batch)
    lengths = _lengths(headers)
    old = pc.list_flatten(headers).cast(_ITEM)
    topics = batch.column(TOPIC)
    distinct = pc.unique(topics)
    values = pa.array([value_for(name) for name in distinct.to_pylist()], pa.binary())
    added = pa.StructArray.from_arrays(
        [pa.repeat(pa.scalar(key, pa.string()), rows),
         values.take(pc.index_in(topics, value_set=distinct))], fields=list(_ITEM))
    offsets = np.zeros(rows + 1, dtype=np.int64)
    np.cumsum(lengths + 1, out=offsets[1:])
    positions = np.empty(int(offsets[-1]), dtype=np.int64)
    is_added = np.zeros(len(positions), dtype=bool)
    is_added[offsets[:-1] + lengths] = True
    positions[~is_added] = np.arange(len(old))
    positions[is_added] = len(old) + np.arange(rows)
    items = pa.concat_arrays([old, added]).take(pa.array(positions))
    return _replace(batch, HEADERS, _list(offsets, items))


def drop_headers(batch: pa.RecordBatch, keys: Iterable[str]) -> pa.RecordBatch:
    """``batch`` without the headers whose key is in ``keys``."""
    if HEADERS not in batch.schema.names:
        return batch
    headers = _headers(batch)
    flat = pc.list_flatten(headers)
    if not len(flat):
        return batch
    parents = pc.list_parent_indices(headers).to_numpy(zero_copy_only=False)
    keep = pc.invert(pc.is_in(pc.struct_field(flat, [0]),
                              value_set=pa.array(sorted(keys), pa.string())))
    kept = keep.to_numpy(zero_copy_only=False)
    if kept.all():
        return batch
    counts = np.bincount(parents[kept], minlength=batch.num_rows)
    offsets = np.zeros(batch.num_rows + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    return _replace(batch, HEADERS, _list(offsets, flat.filter(keep).cast(_ITEM)))


def has_header(batch: pa.RecordBatch, key: str) -> pa.Array:
    """Whether each row has a header with ``key``."""
    mask = np.zeros(batch.num_rows, dtype=bool)
    if HEADERS in batch.schema.names:
        headers = batch.column(HEADERS)
        flat = pc.list_flatten(headers)
        if len(flat):
            parents = pc.list_parent_indices(headers).to_numpy(zero_copy_only=False)
            found = pc.equal(pc.struct_field(flat, [0]), key).to_numpy(zero_copy_only=False)
            mask[parents[found]] = True
    return pa.array(mask)
