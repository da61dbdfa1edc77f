"""Between Arrow batches and per-record objects, where a batch meets a per-record stage.

The runtime uses these where the columnar path cannot go on: a transform that works on
records, a converter with no column form, a per-record sink fed by a columnar source (or
the reverse). Each row becomes one record (and back); nothing is lost or reordered.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import repeat
from typing import Any

import pyarrow as pa

from omconnect.columnar.arrow_types import arrow_type_of, arrow_value
from omconnect.columnar.columns import (
    HEADERS,
    KEY,
    OFFSET,
    PARTITION,
    TIMESTAMP,
    TOPIC,
    VALUE,
    WIRE_HEADERS_TYPE,
    wire_headers,
)
from omconnect.columnar.source_batch import SourceBatch
from omconnect.columnar.typed_values import column_fits, value_builder
from omconnect.data.headers import Headers
from omconnect.data.schema import Schema, Type
from omconnect.data.struct import Struct
from omconnect.errors import DataError
from omconnect.records import SinkRecord, SourceRecord, build_source_record

__all__ = ["connect_value", "millis", "records_of", "sink_records_to_batch",
           "source_batch_to_records"]

HeaderSerializer = Callable[[str, str, Schema | None, Any], bytes | None]
"""``(topic, header key, schema, value) -> bytes``: a header converter's serialiser."""


def connect_value(schema: Schema | None, value: Any) -> Any:
    """``value`` as Arrow's ``to_pylist`` gives it, in the form ``schema`` expects
    (dicts become :class:`~omconnect.data.struct.Struct`, map entries a dict).
    """
    if schema is None or value is None:
        return value
    kind = schema.type
    if kind is Type.STRUCT and isinstance(value, dict):
        return Struct(schema, {field.name: connect_value(field.schema, value.get(field.name))
                               for field in schema.fields})
    if kind is Type.ARRAY and isinstance(value, list):
        return [connect_value(schema.value_schema, item) for item in value]
    if kind is Type.MAP:
        pairs = value.items() if isinstance(value, dict) else value
        return {connect_value(schema.key_schema, k): connect_value(schema.value_schema, v)
                for k, v in pairs}
    return value


def millis(column: pa.Array) -> pa.Array:
    """A timestamp column as ``int64`` milliseconds since the epoch."""
    if pa.types.is_timestamp(column.type):
        column = column.cast(pa.timestamp("ms", tz=column.type.tz)).cast(pa.int64())
    elif not pa.types.is_int64(column.type):
        column = column.cast(pa.int64())
    return column


def _values(column: pa.Array | None, schema: Schema | None, rows: int) -> list[Any]:
    if column is None:
        return [None] * rows
    values = column.to_pylist()
    if schema is not None and not schema.type.is_primitive:
        if column_fits(column, schema):  # the column's types vouch for every value
            build = value_builder(schema)
            return values if build is None else list(map(build, values))
        values = [connect_value(schema, v) for v in values]
    return values  # type: ignore[no-any-return]


def source_batch_to_records(batch: SourceBatch) -> list[SourceRecord]:
    """One :class:`~omconnect.records.SourceRecord` per row of ``batch``, each with the
    batch's source partition and offset (the offset is committed only once every row of
    the batch is delivered, as for the batch itself).
    """
    table = batch.records
    rows = table.num_rows
    names = table.schema.names

    def column(name: str) -> pa.Array | None:
        return table.column(name) if name in names else None

    timestamps: Sequence[int | None] = millis(column(TIMESTAMP)).to_pylist() \
        if TIMESTAMP in names else [None] * rows
    partition_column = column(PARTITION)
    partitions = partition_column.to_pylist() if partition_column is not None else [None] * rows
    headers = [Headers(h) if h else Headers.EMPTY
               for h in wire_headers(column(HEADERS), rows)]
    return list(map(build_source_record, repeat(batch.topic, rows), partitions,
                    repeat(batch.key_schema, rows),
                    _values(column(KEY), batch.key_schema, rows),
                    repeat(batch.value_schema, rows),
                    _values(column(VALUE), batch.value_schema, rows), timestamps, headers,
                    repeat(batch.source_partition, rows), repeat(batch.source_offset, rows)))


def records_of(items: Sequence[SourceBatch | SourceRecord]) -> list[SourceRecord]:
    """What ``poll_batch`` returns (batches, and records between them) as records, in
    order: each batch's rows by :func:`source_batch_to_records`, each record as it is.
    """
    records: list[SourceRecord] = []
    for item in items:
        if isinstance(item, SourceRecord):
            records.append(item)
        else:
            records += source_batch_to_records(item)
    return records


def _python(value: Any) -> Any:
    return value.to_dict() if isinstance(value, Struct) else value


def _shared_schema(schemas: Sequence[Schema | None], values: Sequence[Any]
                   ) -> Schema | None:
    """The one schema of every non-null value, or ``None`` (none, or several)."""
    shared: Schema | None = None
    for schema, value in zip(schemas, values, strict=True):
        if value is None:
            continue
        if schema is None:
            return None
        if shared is None:
            shared = schema
        elif schema is not shared and schema != shared:
            return None
    return shared


def _column(values: list[Any], what: str, schemas: Sequence[Schema | None] | None = None
            ) -> pa.Array:
    """``values`` as one column: of their schema's Arrow type when every non-null value
    has the same schema and it has one (:func:`~omconnect.columnar.arrow_types.arrow_type_of`),
    else as Arrow infers it from the values.
    """
    schema = None if schemas is None else _shared_schema(schemas, values)
    arrow_type = None if schema is None else arrow_type_of(schema)
    if arrow_type is not None:
        assert schema is not None
        try:
            return pa.array([arrow_value(v, schema) for v in values], arrow_type)
        except (pa.ArrowException, TypeError, ValueError):
            pass  # values Arrow cannot take as that type: inferred, as without a schema
    try:
        return pa.array([_python(v) for v in values])
    except (pa.ArrowException, TypeError, ValueError) as exc:
        raise DataError(
            f"the records' {what}s cannot form one Arrow column ({exc}); a sink whose "
            f"{what}s differ in type from record to record implements put() (or configure a "
            "converter that gives one type)") from exc


def sink_records_to_batch(
    records: Sequence[SinkRecord], header_serializer: HeaderSerializer | None = None
) -> pa.RecordBatch:
    """The batch ``put_batch`` receives for ``records``: every consumed column, keys and
    values of their schema's Arrow type where every non-null one has the same schema
    (:mod:`~omconnect.columnar.arrow_types`), else as Arrow infers them from the
    converted values (bytes → ``binary``, str → ``string``, structs → ``struct``),
    headers in wire form (serialised by ``header_serializer``; bytes and str values as
    they are without one).
    """
    n = len(records)
    headers: list[Any] = [None] * n
    for i, record in enumerate(records):
        if record.headers:
            headers[i] = [{"key": h.key, "value": _header_bytes(record.topic, h.key, h.schema,
                                                                 h.value, header_serializer)}
                          for h in record.headers]
    return pa.RecordBatch.from_arrays([
        pa.array([r.topic for r in records], pa.string()),
        pa.array([r.partition for r in records], pa.int32()),
        pa.array([r.offset for r in records], pa.int64()),
        pa.array([r.timestamp for r in records], pa.int64()),
        _column([r.key for r in records], "key", [r.key_schema for r in records]),
        _column([r.value for r in records], "value", [r.value_schema for r in records]),
        pa.array(headers, WIRE_HEADERS_TYPE),
    ], names=[TOPIC, PARTITION, OFFSET, TIMESTAMP, KEY, VALUE, HEADERS])


def _header_bytes(topic: str, key: str, schema: Schema | None, value: Any,
                  serializer: HeaderSerializer | None) -> bytes | None:
    if serializer is not None:
        return serializer(topic, key, schema, value)
    if value is None or isinstance(value, bytes):
        return value
    return str(value).encode()
