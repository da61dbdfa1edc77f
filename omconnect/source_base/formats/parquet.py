"""Parquet files, streamed in Arrow record batches with pyarrow (the ``parquet`` extra).

Rows become STRUCT records; a column is optional when its Arrow field is nullable.

=====================================  ===========================================
Arrow                                  Connect
=====================================  ===========================================
bool                                   BOOLEAN
int8, int16, int32, int64              INT8, INT16, INT32, INT64
uint8, uint16, uint32                  INT16, INT32, INT64 (the next wider type)
uint64                                 INT64 (a value above 2**63-1 is an error item)
float16, float32, float64              FLOAT32, FLOAT32, FLOAT64
string, large_string, string_view      STRING
binary, large_binary, fixed_size_...   BYTES
date32, date64                         Date
time32, time64                         Time (nanoseconds truncated to microseconds)
timestamp (any unit, any zone)         Timestamp (nanoseconds truncated likewise)
decimal128, decimal256                 Decimal (scale kept)
list, large_list, fixed_size_list      ARRAY
map                                    MAP
struct                                 STRUCT
dictionary                             its value type
null                                   optional STRING (always ``None``)
=====================================  ===========================================

Other types (duration, interval, union...) make the file an error item naming the
column. The file must be seekable to read its footer; a stream that is not (e.g. a
decompressed one) is first copied to a temporary file, never into memory. ``skip`` passes
over whole row groups without reading them. ``number`` is the 1-based row number.

:meth:`ParquetFormat.batches` (the columnar path) gives the same rows as Arrow
batches: the value a ``struct`` column of the file's columns, cast as the table says
(dictionaries decoded, float16 widened, nanoseconds truncated), the key a column too.
A file with a ``uint64`` column anywhere (whose values must each be checked against
INT64) is read record by record instead.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import IO, Any, NamedTuple

from omconnect.data import logical
from omconnect.data.builder import SchemaBuilder
from omconnect.data.schema import STRING_SCHEMA, Schema, Type
from omconnect.data.struct import SchemaAndValue, Struct
from omconnect.errors import DataError
from omconnect.plugins import require
from omconnect.source_base.formats.base import (
    KeySource,
    ParsedBatch,
    ParsedRecord,
    RecordFormat,
    failed,
    record,
)
from omconnect.source_base.formats.seekable import seekable_source as _seekable_source

__all__ = ["ParquetFormat", "arrow_to_connect"]

ToConnect = Callable[[Any], Any] | None
"""Turns a value from Arrow's ``to_pylist`` into its Connect value; ``None``: unchanged."""

_INT64_MAX = 2**63 - 1


def _pyarrow() -> Any:
    return require("pyarrow", plugin="parquet format", extra="parquet")


class _BadValue(Exception):
    def __init__(self, index: int, message: str) -> None:
        super().__init__(message)
        self.index = index
        self.message = message


def _check_uint64(value: Any) -> Any:
    if value is not None and value > _INT64_MAX:
        raise DataError(f"{value} does not fit in INT64")
    return value


def arrow_to_connect(data_type: Any, *, nullable: bool = True,
                     name: str = "") -> tuple[Schema, Any, ToConnect]:
    """The Connect schema of an Arrow type, the Arrow type to cast a column to before
    ``to_pylist`` (``None`` when no cast is needed) and the converter of its values.

    Args:
        data_type: A ``pyarrow.DataType``.
        nullable: Whether ``None`` is allowed (the schema is then optional).
        name: The column, for error messages.

    Raises:
        DataError: The type has no Connect equivalent; names the column.

    """
    pa = _pyarrow()
    types = pa.types
    schema: Schema
    target: Any = None
    convert: ToConnect = None

    def built(builder: SchemaBuilder) -> Schema:
        return builder.optional().build() if nullable else builder.build()

    if types.is_dictionary(data_type):
        schema, target, convert = arrow_to_connect(data_type.value_type, nullable=nullable,
                                                   name=name)
        return schema, target or data_type.value_type, convert
    if types.is_boolean(data_type):
        schema = built(SchemaBuilder.boolean())
    elif types.is_integer(data_type):
        width = data_type.bit_width
        signed = types.is_signed_integer(data_type)
        if signed:
            type_ = {8: Type.INT8, 16: Type.INT16, 32: Type.INT32, 64: Type.INT64}[width]
        else:
            type_ = {8: Type.INT16, 16: Type.INT32, 32: Type.INT64, 64: Type.INT64}[width]
            if width == 64:
                convert = _check_uint64
        schema = built(SchemaBuilder.type(type_))
    elif types.is_float16(data_type):
        schema, target = built(SchemaBuilder.float32()), pa.float32()
    elif types.is_float32(data_type):
        schema = built(SchemaBuilder.float32())
    elif types.is_float64(data_type):
        schema = built(SchemaBuilder.float64())
    elif (types.is_string(data_type) or types.is_large_string(data_type)
          or _is(types, "is_string_view", data_type)):
        schema = built(SchemaBuilder.string())
    elif (types.is_binary(data_type) or types.is_large_binary(data_type)
          or types.is_fixed_size_binary(data_type) or _is(types, "is_binary_view", data_type)):
        schema = built(SchemaBuilder.bytes())
    elif types.is_date(data_type):
        schema = logical.date_schema(optional=nullable)
    elif types.is_time(data_type):
        schema = logical.time_schema(optional=nullable)
        if data_type.unit == "ns":
            target = pa.time64("us")
    elif types.is_timestamp(data_type):
        schema = logical.timestamp_schema(optional=nullable)
        if data_type.unit == "ns":
            target = pa.timestamp("us", tz=data_type.tz)
    elif types.is_decimal(data_type):
        schema = logical.decimal_schema(data_type.scale, optional=nullable)
    elif (types.is_list(data_type) or types.is_large_list(data_type)
          or types.is_fixed_size_list(data_type) or _is(types, "is_list_view", data_type)):
        field = data_type.value_field
        items, item_target, item_convert = arrow_to_connect(
            field.type, nullable=field.nullable, name=f"{name}[]")
        schema = built(SchemaBuilder.array(items))
        if item_target is not None:
            target = pa.list_(pa.field(field.name, item_target, field.nullable))
        if item_convert is not None:
            each = item_convert
            convert = lambda v: None if v is None else [each(x) for x in v]  # noqa: E731
    elif types.is_map(data_type):
        key_field, item_field = data_type.key_field, data_type.item_field
        key_schema, key_target, key_convert = arrow_to_connect(
            key_field.type, nullable=False, name=f"{name}{{key}}")
        value_schema, value_target, value_convert = arrow_to_connect(
            item_field.type, nullable=item_field.nullable, name=f"{name}{{value}}")
        schema = built(SchemaBuilder.map(key_schema, value_schema))
        if key_target is not None or value_target is not None:
            target = pa.map_(key_target or key_field.type,
                             pa.field(item_field.name, value_target or item_field.type,
                                      item_field.nullable))
        convert = _map_converter(key_convert, value_convert)
    elif types.is_struct(data_type):
        schema, target, convert = _struct(pa, data_type, nullable, name)
    elif types.is_null(data_type):
        schema = SchemaBuilder.string().optional().build()
    else:
        raise DataError(f"column {name!r} has Arrow type {data_type}, which has no Connect "
                        "schema; cast it to a supported type when writing the file")
    return schema, target, convert


def _is(types: Any, predicate: str, data_type: Any) -> bool:
    check = getattr(types, predicate, None)  # newer pyarrow only
    return bool(check(data_type)) if check is not None else False


def _map_converter(key_convert: ToConnect, value_convert: ToConnect) -> ToConnect:
    def convert(pairs: Any) -> Any:
        if pairs is None:
            return None
        if key_convert is None and value_convert is None:
            return dict(pairs)
        return {
            (k if key_convert is None else key_convert(k)):
            (v if value_convert is None else value_convert(v))
            for k, v in pairs
        }
    return convert


def _struct(pa: Any, data_type: Any, nullable: bool,
            name: str) -> tuple[Schema, Any, ToConnect]:
    builder = SchemaBuilder.struct()
    names: list[str] = []
    converters: list[ToConnect] = []
    targets: list[Any] = []
    cast_needed = False
    for index in range(data_type.num_fields):
        field = data_type.field(index)
        path = f"{name}.{field.name}" if name else field.name
        schema, target, convert = arrow_to_connect(field.type, nullable=field.nullable,
                                                   name=path)
        builder.field(field.name, schema)
        names.append(field.name)
        converters.append(convert)
        targets.append(pa.field(field.name, target or field.type, field.nullable))
        cast_needed = cast_needed or target is not None
    struct_schema = builder.optional().build() if nullable else builder.build()
    from_values = Struct.from_values
    pairs = list(zip(names, converters, strict=True))

    def convert_struct(value: Any) -> Struct | None:
        if value is None:
            return None
        return from_values(struct_schema, [
            value[n] if c is None else c(value[n]) for n, c in pairs], validate=False)

    return struct_schema, pa.struct(targets) if cast_needed else None, convert_struct


class _Column:
    """How one top-level column becomes a list of Connect values."""

    __slots__ = ("convert", "name", "target")

    def __init__(self, name: str, target: Any, convert: ToConnect) -> None:
        self.name = name
        self.target = target
        self.convert = convert

    def values(self, array: Any) -> list[Any]:
        if self.target is not None:
            array = array.cast(self.target, safe=False)
        values: list[Any] = array.to_pylist()
        convert = self.convert
        if convert is None:
            return values
        try:
            return [convert(v) for v in values]
        except DataError:
            for index, value in enumerate(values):
                try:
                    convert(value)
                except DataError as exc:
                    raise _BadValue(index, f"column {self.name!r}: {exc.message}") from None
            raise


class ParquetFormat(RecordFormat):
    """Reads Parquet files (``input.format=parquet``), row group by row group.

    Args:
        batch_size: Rows per Arrow batch read at a time (``parquet.batch.size``): the
            memory bound of a read, with the width of the rows.
        **options: ``key_source`` and ``key_field``, as for :class:`RecordFormat`.

    Raises:
        MissingExtraError: pyarrow is not installed (names the ``parquet`` extra).

    """

    name = "parquet"

    def __init__(self, *, batch_size: int = 4096, **options: Any) -> None:
        super().__init__(**options)
        if batch_size < 1:
            raise ValueError(f"parquet batch size must be at least 1, got {batch_size}")
        self.batch_size = batch_size
        self._pq = require("pyarrow.parquet", plugin="parquet format", extra="parquet")

    def _read(self, stream: IO[bytes], object_name: str, skip: int) -> Iterator[ParsedRecord]:
        with _seekable_source(stream) as source:
            yield from self._rows(self._pq, source, object_name, skip)

    reads_columns = True

    def _read_batches(self, stream: IO[bytes], object_name: str,
                      skip: int) -> Iterator[ParsedBatch | ParsedRecord]:
        with _seekable_source(stream) as source:
            yield from self._column_batches(self._pq, source, object_name, skip)

    def _open(self, pq: Any, source: IO[bytes], object_name: str) -> _Opened | ParsedRecord:
        """The file's reader and what its rows become, or the error item of a file that
        cannot be read.
        """
        try:
            parquet_file = pq.ParquetFile(source)
            arrow_schema = parquet_file.schema_arrow
            builder = SchemaBuilder.struct()
            columns: list[_Column] = []
            for field in arrow_schema:
                schema, target, convert = arrow_to_connect(
                    field.type, nullable=field.nullable, name=field.name)
                builder.field(field.name, schema)
                columns.append(_Column(field.name, target, convert))
            row_schema = builder.build()
            key_at = self.struct_key_index(row_schema, object_name)
        except DataError as exc:
            return failed(1, self.error(exc.message, object_name, 1))
        except Exception as exc:  # pyarrow raises ArrowInvalid, OSError...
            return failed(1, self.error(f"not a Parquet file: {exc}", object_name, 1))
        return _Opened(parquet_file, arrow_schema, row_schema, columns, key_at)

    def _batches_after(self, opened: _Opened, skip: int) -> Iterator[tuple[int, Any]]:
        """The file's Arrow batches after ``skip`` rows (whole row groups passed over
        unread), each with the number of its first row.
        """
        metadata = opened.parquet_file.metadata
        number, first_group = 1, 0
        while first_group < metadata.num_row_groups:
            rows = metadata.row_group(first_group).num_rows
            if skip < rows:
                break
            skip -= rows
            number += rows
            first_group += 1
        groups = list(range(first_group, metadata.num_row_groups))
        if not groups:
            return
        for batch in opened.parquet_file.iter_batches(batch_size=self.batch_size,
                                                      row_groups=groups):
            if skip:
                if skip >= batch.num_rows:
                    skip -= batch.num_rows
                    number += batch.num_rows
                    continue
                batch = batch.slice(skip)
                number += skip
                skip = 0
            yield number, batch
            number += batch.num_rows

    def _column_batches(self, pq: Any, source: IO[bytes], object_name: str,
                        skip: int) -> Iterator[ParsedBatch | ParsedRecord]:
        opened = self._open(pq, source, object_name)
        if isinstance(opened, ParsedRecord):
            yield opened
            return
        if any(_has_uint64(field.type) for field in opened.arrow_schema):
            yield from self._rows(pq, source, object_name, skip, opened)
            return
        pa = _pyarrow()
        columns = opened.columns
        fields = [pa.field(field.name, column.target or field.type, field.nullable)
                  for field, column in zip(opened.arrow_schema, columns, strict=True)]
        key_at = opened.key_at
        key_schema = STRING_SCHEMA if self.key_source is KeySource.OBJECT else \
            key_at[1] if key_at is not None else None
        number = skip + 1
        try:
            for number, batch in self._batches_after(opened, skip):
                arrays = [batch.column(i) if column.target is None
                          else batch.column(i).cast(column.target, safe=False)
                          for i, column in enumerate(columns)]
                value = pa.StructArray.from_arrays(arrays, fields=fields)
                if key_at is not None:
                    rows = pa.RecordBatch.from_arrays([arrays[key_at[0]], value],
                                                      names=["key", "value"])
                elif self.key_source is KeySource.OBJECT:
                    rows = pa.RecordBatch.from_arrays(
                        [pa.repeat(pa.scalar(object_name, pa.string()), len(value)), value],
                        names=["key", "value"])
                else:
                    rows = pa.RecordBatch.from_arrays([value], names=["value"])
                yield ParsedBatch(number, rows, key_schema, opened.row_schema)
                number += len(value)
        except Exception as exc:
            yield failed(number, self.error(
                f"corrupt Parquet data: {type(exc).__name__}: {exc}", object_name, number))

    def _rows(self, pq: Any, source: IO[bytes], object_name: str, skip: int,
              opened: _Opened | None = None) -> Iterator[ParsedRecord]:
        if opened is None:
            either = self._open(pq, source, object_name)
            if isinstance(either, ParsedRecord):
                yield either
                return
            opened = either
        row_schema, columns, key_at = opened.row_schema, opened.columns, opened.key_at
        key = self.object_key(object_name)
        from_values = Struct.from_values
        number = skip + 1
        try:
            for number, batch in self._batches_after(opened, skip):
                bad: _BadValue | None = None
                try:
                    values = [column.values(batch.column(i)) for i, column in enumerate(columns)]
                except _BadValue as exc:
                    bad = exc
                    values = [
                        column.values(batch.column(i).slice(0, exc.index))
                        for i, column in enumerate(columns)
                    ]
                for row in zip(*values, strict=True):
                    if key_at is not None:
                        key = SchemaAndValue(key_at[1], row[key_at[0]])
                    yield record(number, key, SchemaAndValue(
                        row_schema, from_values(row_schema, row, validate=False)))
                    number += 1
                if bad is not None:
                    yield failed(number, self.error(bad.message, object_name, number))
                    return
        except Exception as exc:
            yield failed(number, self.error(
                f"corrupt Parquet data: {type(exc).__name__}: {exc}", object_name, number))


class _Opened(NamedTuple):
    """A Parquet file opened for reading, and what its rows become."""

    parquet_file: Any
    arrow_schema: Any
    row_schema: Schema
    columns: list[_Column]
    key_at: tuple[int, Schema] | None


def _has_uint64(data_type: Any) -> bool:
    """Whether a ``uint64`` is anywhere in ``data_type`` (nested types included)."""
    pa = _pyarrow()
    types = pa.types
    if types.is_uint64(data_type):
        return True
    if types.is_dictionary(data_type):
        return _has_uint64(data_type.value_type)
    if types.is_map(data_type):
        return _has_uint64(data_type.key_type) or _has_uint64(data_type.item_type)
    if types.is_struct(data_type):
        return any(_has_uint64(data_type.field(i).type) for i in range(data_type.num_fields))
    value_field = getattr(data_type, "value_field", None)  # the list kinds
    return value_field is not None and _has_uint64(value_field.type)
