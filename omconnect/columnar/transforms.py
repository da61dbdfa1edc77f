"""Transforms on Arrow batches: the chain's columnar form and the column operations the
built-in transforms and predicates use.

:class:`ColumnarChain` runs a connector's transform chain on a batch when every stage
has a column form (:meth:`~omconnect.transforms.base.Transformation.apply_columns`, and
:meth:`~omconnect.transforms.base.Predicate.test_columns` for its predicate). A stage
with a predicate is applied to the whole batch and its result kept only where the
predicate holds (the other rows keep their columns), exactly as the per-record chain
applies it to some records and not others. Rows a stage drops (``Filter``) are removed
before the next stage. When a stage has no column form, the chain answers ``None`` and
the runtime takes the per-record path for the batch.

The batch's columns: ``topic``, ``key``, ``value``, ``headers`` (wire form), ``timestamp``
and, on the sink side, ``partition`` and ``offset``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from omconnect.columnar.columns import HEADERS, TOPIC, WIRE_HEADERS_TYPE
from omconnect.transforms.chain import TransformChain

__all__ = ["ColumnarChain", "append_header", "drop_headers", "has_header", "map_topics",
           "topic_mask"]

_ITEM = WIRE_HEADERS_TYPE.value_type
HeaderSerializer = Callable[[str, str, Any, Any], bytes | None]


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


def _merge(mask: pa.Array, changed: pa.RecordBatch, original: pa.RecordBatch
           ) -> pa.RecordBatch:
    """``changed`` where ``mask`` holds, ``original`` elsewhere, column by column."""
    columns = []
    for field in changed.schema:
        new = changed.column(field.name)
        if field.name in original.schema.names:
            old = original.column(field.name)
            if old.type != new.type:
                old = old.cast(new.type)
            new = pc.if_else(mask, new, old)
        columns.append(new)
    return pa.RecordBatch.from_arrays(columns, names=changed.schema.names)


class ColumnarChain:
    """A task's transform chain applied to Arrow batches (see the module docs).

    Args:
        chain: The task's chain.
        serialize_header: A header value's wire bytes (the task's header converter).

    """

    def __init__(self, chain: TransformChain, serialize_header: HeaderSerializer) -> None:
        self._stages = [(stage.transform, stage.predicate, stage.negate)
                        for stage in chain.stages]
        self._serialize_header = serialize_header
        self.empty = not self._stages

    def apply(self, batch: pa.RecordBatch) -> pa.RecordBatch | None:
        """The transformed batch, without the rows a stage dropped; ``None`` when a stage
        has no column form for it.
        """
        for transform, predicate, negate in self._stages:
            if not batch.num_rows:
                return batch
            mask = None
            if predicate is not None:
                mask = predicate.test_columns(batch)
                if mask is None:
                    return None
                if negate:
                    mask = pc.invert(mask)
                if not pc.any(mask).as_py():
                    continue
                if pc.all(mask).as_py():
                    mask = None
            out = transform.apply_columns(batch, self._serialize_header)
            if out is None:
                return None
            changed, keep = out
            if mask is not None:
                changed = _merge(mask, changed, batch)
                if keep is not None:
                    keep = pc.or_(pc.invert(mask), keep)
            batch = changed if keep is None else changed.filter(keep)
        return batch
