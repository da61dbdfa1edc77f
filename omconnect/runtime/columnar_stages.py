"""The runtime's columnar stages: a source batch to the columns a producer sends, and a
polled batch to the columns ``put_batch`` receives, when the converters allow it.

Transforms run in their column form (:class:`~omconnect.transforms.columnar_chain.
ColumnarChain`). Each stage answers ``None`` when the batch cannot stay columnar (a
transform or predicate without a column form, a converter without one for the column's
type, an item that fails to convert); the runner then takes the per-record path for that
batch, which converts, transforms, tolerates and routes record by record exactly as for a
per-record task, and counts the batch's rows in the ``columnar_fallback`` metric.
"""

from __future__ import annotations

from omconnect.plugins import require

require("pyarrow", plugin="the columnar path", extra="columnar")
require("numpy", plugin="the columnar path", extra="columnar")

import logging  # noqa: E402

import numpy as np  # noqa: E402
import pyarrow as pa  # noqa: E402
import pyarrow.compute as pc  # noqa: E402

from omconnect.columnar.buffers import data_of, offsets_of  # noqa: E402
from omconnect.columnar.columns import (  # noqa: E402
    HEADERS,
    KEY,
    OFFSET,
    PARTITION,
    TIMESTAMP,
    TOPIC,
    VALUE,
    WIRE_HEADERS_TYPE,
)
from omconnect.columnar.records import millis  # noqa: E402
from omconnect.columnar.source_batch import SourceBatch  # noqa: E402
from omconnect.converters.base import Converter  # noqa: E402
from omconnect.converters.task_converters import Converters  # noqa: E402
from omconnect.transforms.chain import TransformChain  # noqa: E402
from omconnect.transforms.columnar_chain import ColumnarChain  # noqa: E402

__all__ = ["EncodedBatch", "SinkColumns", "SourceColumns", "last_offsets"]

_log = logging.getLogger(__name__)

_NO_COLUMNS = Converter.deserialize_column


class EncodedBatch:
    """What a source batch becomes on the columnar path: the wire columns to send, per
    topic (transforms may route rows to several), and how many rows were dropped.
    """

    __slots__ = ("dropped", "parts")

    def __init__(self, parts: list[tuple[str, pa.RecordBatch]], dropped: int) -> None:
        self.parts = parts
        self.dropped = dropped


class SourceColumns:
    """Makes the wire columns of a :class:`~omconnect.columnar.SourceBatch`.

    Args:
        converters: The task's converters.
        chain: The task's transform chain.

    """

    def __init__(self, converters: Converters, chain: TransformChain) -> None:
        self._converters = converters
        self._chain = ColumnarChain(chain, converters.header.from_connect_header)

    def encode(self, batch: SourceBatch) -> EncodedBatch | None:
        """The columns to send for ``batch``, or ``None`` for the per-record path."""
        records = batch.records
        topic = batch.topic
        try:
            if self._chain.empty:
                wire = self._wire(topic, records, batch)
                return None if wire is None else EncodedBatch([(topic, wire)], 0)
            rows = records.num_rows
            records = records.append_column(TOPIC, pa.repeat(pa.scalar(topic, pa.string()),
                                                             rows))
            transformed = self._chain.apply(records)
            if transformed is None:
                return None
            parts = []
            topics = transformed.column(TOPIC)
            names = pc.unique(topics).to_pylist()
            for name in names:
                part = transformed if len(names) == 1 else \
                    transformed.filter(pc.equal(topics, name))
                wire = self._wire(name, part.drop_columns([TOPIC]), batch)
                if wire is None:
                    return None
                parts.append((name, wire))
            return EncodedBatch(parts, rows - transformed.num_rows)
        except Exception as exc:  # a DataError or an Arrow cast: per record finds the row
            _log.debug("a batch for %r goes the per-record way: %s", topic, exc)
            return None

    def _wire(self, topic: str, records: pa.RecordBatch, batch: SourceBatch
              ) -> pa.RecordBatch | None:
        names = records.schema.names
        value = self._converters.value.serialize_column(topic, records.column(VALUE),
                                                        batch.value_schema)
        if value is None:
            return None
        arrays = [value]
        fields = [VALUE]
        if KEY in names:
            key = self._converters.key.serialize_column(topic, records.column(KEY),
                                                        batch.key_schema)
            if key is None:
                return None
            arrays.append(key)
            fields.append(KEY)
        if HEADERS in names:
            headers = records.column(HEADERS)
            if headers.null_count != len(headers):
                if headers.type != WIRE_HEADERS_TYPE:
                    return None
                arrays.append(headers)
                fields.append(HEADERS)
        if TIMESTAMP in names:
            arrays.append(millis(records.column(TIMESTAMP)))
            fields.append(TIMESTAMP)
        if PARTITION in names:
            arrays.append(records.column(PARTITION).cast(pa.int32()))
            fields.append(PARTITION)
        return pa.RecordBatch.from_arrays(arrays, names=fields)


class SinkColumns:
    """Makes the batch ``put_batch`` receives from a polled batch.

    Args:
        converters: The task's converters.
        chain: The task's transform chain.

    """

    def __init__(self, converters: Converters, chain: TransformChain) -> None:
        self._converters = converters
        self._chain = ColumnarChain(chain, converters.header.from_connect_header)
        key = converters.key
        value = converters.value
        self.enabled = type(key).deserialize_column is not _NO_COLUMNS and \
            type(value).deserialize_column is not _NO_COLUMNS

    def decode(self, polled: pa.RecordBatch) -> pa.RecordBatch | None:
        """``polled`` with keys and values as the converters read them and the transforms
        applied (rows they dropped removed), or ``None`` for the per-record path.
        """
        if not self.enabled:
            return None
        topic = polled.column(TOPIC)[0].as_py() if polled.num_rows else ""
        try:
            key = self._converters.key.deserialize_column(topic, polled.column(KEY))
            value = self._converters.value.deserialize_column(topic, polled.column(VALUE))
            if key is None or value is None:
                return None
            schema = polled.schema
            decoded = pa.RecordBatch.from_arrays(
                [polled.column(TOPIC), polled.column(PARTITION), polled.column(OFFSET),
                 polled.column(TIMESTAMP), key, value, polled.column(HEADERS)],
                schema=pa.schema([schema.field(TOPIC), schema.field(PARTITION),
                                  schema.field(OFFSET), schema.field(TIMESTAMP),
                                  pa.field(KEY, key.type), pa.field(VALUE, value.type),
                                  schema.field(HEADERS)]))
            return decoded if self._chain.empty else self._chain.apply(decoded)
        except Exception as exc:  # per record: the failing rows are tolerated one by one
            _log.debug("a polled batch goes the per-record way: %s", exc)
            return None


def last_offsets(polled: pa.RecordBatch) -> dict[tuple[str, int], int]:
    """The highest offset of each (topic, partition) in ``polled``."""
    topics = polled.column(TOPIC)
    partitions = polled.column(PARTITION).to_numpy(zero_copy_only=False)
    offsets = polled.column(OFFSET).to_numpy(zero_copy_only=False)
    first_topic = topics[0].as_py()
    # The usual batch is one partition's run: decided with numpy and one bytes compare.
    if (partitions == partitions[0]).all() and _all_equal(topics, first_topic):
        return {(first_topic, int(partitions[0])): int(offsets.max())}
    table = pa.table({TOPIC: topics, PARTITION: polled.column(PARTITION),
                      OFFSET: polled.column(OFFSET)})
    grouped = table.group_by([TOPIC, PARTITION]).aggregate([(OFFSET, "max")])
    return {(t, p): o for t, p, o in zip(grouped.column(TOPIC).to_pylist(),
                                           grouped.column(PARTITION).to_pylist(),
                                           grouped.column(f"{OFFSET}_max").to_pylist(),
                                           strict=True)}


def _all_equal(strings: pa.Array, value: str) -> bool:
    """Whether every item of a ``string`` column (no nulls) is ``value``."""
    if strings.null_count or not pa.types.is_string(strings.type):
        return bool(pc.all(pc.equal(strings, value)).as_py())
    rows = len(strings)
    expected = value.encode()
    ends = offsets_of(strings)
    start, end = int(ends[0]), int(ends[-1])
    if end - start != rows * len(expected):
        return False
    if not (np.diff(ends) == len(expected)).all():
        return False
    return bytes(data_of(strings)[start:end]) == expected * rows
