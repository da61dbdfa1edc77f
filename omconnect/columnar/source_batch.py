"""What a columnar source task returns from ``poll_batch``: rows, and how far they reach."""

from __future__ import annotations

from collections.abc import Mapping

import attrs
import pyarrow as pa

from omconnect.columnar.columns import HEADERS, KEY, PARTITION, TIMESTAMP, VALUE
from omconnect.data.schema import Schema
from omconnect.errors import DataError
from omconnect.records import JsonScalar

__all__ = ["SourceBatch"]

_KNOWN = frozenset((KEY, VALUE, HEADERS, TIMESTAMP, PARTITION))


@attrs.frozen(slots=True, kw_only=True)
class SourceBatch:
    """Rows read from one source partition, all for one topic.

    ``records`` has a ``value`` column and may have ``key``, ``headers`` (wire form,
    :data:`~omconnect.columnar.columns.WIRE_HEADERS_TYPE`), ``timestamp`` (``int64`` ms or
    an Arrow timestamp) and ``partition`` (``int32``); other columns are an error. Keys
    and values are either bytes/strings, which ByteArray/String converters send without a
    per-record step, or any Arrow type, which the runtime turns into Python values (with
    ``key_schema``/``value_schema``) for the configured converter.

    Offsets: ``source_offset`` is where the source stands once **every** row of the batch
    is delivered; the runtime commits it only after the transport acknowledged all of
    them (and every earlier batch or record of ``source_partition``). A batch is
    all-or-nothing for offsets: after a crash it is read again from the previous offset.

    Attributes:
        topic: Where the rows go.
        records: The rows.
        source_partition: Where in the source the rows come from.
        source_offset: How far the source got once the rows are delivered.
        key_schema: The keys' Connect schema when they are converted per record.
        value_schema: The values' Connect schema when they are converted per record.

    """

    topic: str
    records: pa.RecordBatch = attrs.field()
    source_partition: Mapping[str, JsonScalar] = attrs.field(factory=dict)
    source_offset: Mapping[str, JsonScalar] = attrs.field(factory=dict)
    key_schema: Schema | None = None
    value_schema: Schema | None = None

    @records.validator
    def _check(self, _attribute: object, records: pa.RecordBatch) -> None:
        if isinstance(records, pa.Table):
            raise DataError("SourceBatch.records must be a pyarrow.RecordBatch, not a Table "
                            "(use table.combine_chunks().to_batches()[0] or one batch per "
                            "chunk)", topic=self.topic)
        if not isinstance(records, pa.RecordBatch):
            raise DataError(f"SourceBatch.records must be a pyarrow.RecordBatch, not "
                            f"{type(records).__name__}", topic=self.topic)
        names = records.schema.names
        unknown = sorted(set(names) - _KNOWN)
        if unknown or VALUE not in names:
            raise DataError(
                f"a source batch has columns {names}: it needs a 'value' column and may "
                f"have {sorted(_KNOWN - {VALUE})}" + (f"; remove {unknown}" if unknown else ""),
                topic=self.topic)

    @property
    def num_rows(self) -> int:
        """How many rows."""
        return int(self.records.num_rows)

    def __len__(self) -> int:
        return self.num_rows
