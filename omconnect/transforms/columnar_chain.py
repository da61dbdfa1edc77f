"""A connector's transform chain on Arrow batches: :class:`ColumnarChain`.

It runs the chain on a batch when every stage has a column form
(:meth:`~omconnect.transforms.base.Transformation.apply_columns`, and
:meth:`~omconnect.transforms.base.Predicate.test_columns` for its predicate). A stage
with a predicate is applied to the whole batch and its result kept only where the
predicate holds (the other rows keep their columns), exactly as the per-record chain
applies it to some records and not others. Rows a stage drops (``Filter``) are removed
before the next stage. When a stage has no column form, the chain answers ``None`` and
the runtime takes the per-record path for the batch.

The batch's columns: ``topic``, ``key``, ``value``, ``headers`` (wire form), ``timestamp``
and, on the sink side, ``partition`` and ``offset``. Needs pyarrow (the ``columnar``
extra).
"""

from __future__ import annotations

from omconnect.plugins import require

require("pyarrow", plugin="the columnar path", extra="columnar")

import pyarrow as pa  # noqa: E402
import pyarrow.compute as pc  # noqa: E402

from omconnect.columnar.records import HeaderSerializer  # noqa: E402
from omconnect.transforms.chain import TransformChain  # noqa: E402

__all__ = ["ColumnarChain"]


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
