"""CSV: a header row names the columns; each further row is a STRUCT record.

By default every column is an optional STRING (an empty field is ``""``: CSV cannot tell
empty from missing). ``csv.column.types`` types chosen columns explicitly, e.g.
``id:int64, price:float64, active:boolean``; a typed column's empty field is ``None``
and a field that does not parse is an error item naming the line and column. Nothing is
inferred from the data: the schema of a file depends only on its header and the config.

Types: ``string``, ``int8``, ``int16``, ``int32``, ``int64``, ``float32``, ``float64``,
``boolean`` (``true``/``false``, ``1``/``0``, ``yes``/``no``).

Without a header row (``csv.header=false``) columns are named by ``csv.column.names`` or
else ``column1``, ``column2``, ...; with both, the names replace the header's. Blank lines
are not records. ``number`` is the line a record starts on (quoted fields may span lines).
A row with the wrong number of fields is an error item; reading goes on.
"""

from __future__ import annotations

import codecs
import csv
import io
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import IO, Any

from omconnect.data.builder import SchemaBuilder
from omconnect.data.schema import Schema, Type, integer_range
from omconnect.data.struct import SchemaAndValue, Struct
from omconnect.errors import ConfigError, DataError
from omconnect.source_base.formats.base import (
    ParsedBatch,
    ParsedRecord,
    RecordFormat,
    failed,
    record,
)
from omconnect.source_base.formats.undecodable import TEXT_ERRORS, undecodable

__all__ = ["CSV_TYPES", "CsvFormat", "parse_column_types"]

_TRUE = frozenset({"true", "1", "yes"})
_FALSE = frozenset({"false", "0", "no"})


def _int_parser(type_: Type) -> Callable[[str], Any]:
    low, high = integer_range(type_)

    def parse(text: str) -> int | None:
        if not text:
            return None
        value = int(text)
        if not low <= value <= high:
            raise ValueError(f"{value} is out of range for {type_.value}")
        return value

    return parse


def _float(text: str) -> float | None:
    return float(text) if text else None


def _boolean(text: str) -> bool | None:
    if not text:
        return None
    lowered = text.strip().lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise ValueError(f"expected true or false, got {text!r}")


CSV_TYPES: dict[str, tuple[Type, Callable[[str], Any] | None]] = {
    "string": (Type.STRING, None),
    "int8": (Type.INT8, _int_parser(Type.INT8)),
    "int16": (Type.INT16, _int_parser(Type.INT16)),
    "int32": (Type.INT32, _int_parser(Type.INT32)),
    "int64": (Type.INT64, _int_parser(Type.INT64)),
    "float32": (Type.FLOAT32, _float),
    "float64": (Type.FLOAT64, _float),
    "boolean": (Type.BOOLEAN, _boolean),
}
"""Column types ``csv.column.types`` accepts: the schema type and the field parser."""


def parse_column_types(entries: Sequence[str] | Mapping[str, str]) -> dict[str, str]:
    """``["id:int64", "price:float64"]`` (the config list) as ``{"id": "int64", ...}``.

    Raises:
        ConfigError: An entry is not ``name:type`` or names an unknown type (names
            ``csv.column.types``).

    """
    pairs = entries.items() if isinstance(entries, Mapping) else (
        entry.rsplit(":", 1) if ":" in entry else (entry, "") for entry in entries)
    types: dict[str, str] = {}
    for name, type_name in pairs:
        name, type_name = name.strip(), type_name.strip().lower()
        if not name or type_name not in CSV_TYPES:
            raise ConfigError(
                f"csv.column.types entry {name + ':' + type_name!r} must be column:type with "
                f"type one of {', '.join(CSV_TYPES)}", key="csv.column.types")
        types[name] = type_name
    return types


class _Layout:
    """The schema of one header, and the typed columns' parsers."""

    __slots__ = ("parsers", "schema", "width")

    def __init__(self, schema: Schema, parsers: list[tuple[int, str, Callable[[str], Any]]]):
        self.schema = schema
        self.parsers = parsers
        self.width = len(schema.fields)


class CsvFormat(RecordFormat):
    """Reads CSV (``input.format=csv``), see the module docstring.

    Args:
        delimiter: The field separator (``csv.delimiter``).
        quote_char: The quote character (``csv.quote.char``).
        header: Whether the first row names the columns (``csv.header``).
        column_names: Column names (``csv.column.names``), replacing the header's.
        column_types: Column name to type name (``csv.column.types``).
        encoding: The text encoding (``input.encoding``); a UTF-8 BOM is skipped.
        **options: ``key_source`` and ``key_field``, as for :class:`RecordFormat`.

    Raises:
        ConfigError: A bad delimiter, quote character, encoding or column type.

    """

    name = "csv"

    def __init__(
        self,
        *,
        delimiter: str = ",",
        quote_char: str = '"',
        header: bool = True,
        column_names: Sequence[str] = (),
        column_types: Mapping[str, str] | Sequence[str] = (),
        encoding: str = "utf-8",
        **options: Any,
    ) -> None:
        super().__init__(**options)
        if len(delimiter) != 1:
            raise ConfigError(f"csv.delimiter must be one character, got {delimiter!r}",
                              key="csv.delimiter")
        if len(quote_char) != 1:
            raise ConfigError(f"csv.quote.char must be one character, got {quote_char!r}",
                              key="csv.quote.char")
        try:
            codec = codecs.lookup(encoding).name
        except LookupError:
            raise ConfigError(f"unknown encoding {encoding!r}; set input.encoding to e.g. "
                              "utf-8 or latin-1", key="input.encoding") from None
        self.delimiter = delimiter
        self.quote_char = quote_char
        self.header = header
        self.column_names = tuple(column_names)
        self.column_types = parse_column_types(column_types)
        self.encoding = "utf-8-sig" if codec == "utf-8" else encoding
        self._layouts: dict[tuple[str, ...], _Layout] = {}

    def _layout(self, names: tuple[str, ...]) -> _Layout:
        layout = self._layouts.get(names)
        if layout is not None:
            return layout
        seen: set[str] = set()
        builder = SchemaBuilder.struct()
        parsers: list[tuple[int, str, Callable[[str], Any]]] = []
        for index, name in enumerate(names):
            if not name:
                raise DataError(f"column {index + 1} has no name; set csv.column.names")
            if name in seen:
                raise DataError(f"column name {name!r} appears twice; set csv.column.names")
            seen.add(name)
            type_, parser = CSV_TYPES[self.column_types.get(name, "string")]
            builder.field(name, SchemaBuilder.type(type_).optional())
            if parser is not None:
                parsers.append((index, name, parser))
        missing = sorted(set(self.column_types) - seen)
        if missing:
            raise DataError(f"csv.column.types names column(s) {', '.join(missing)} that the "
                            f"header lacks (columns: {', '.join(names)})")
        layout = self._layouts[names] = _Layout(builder.build(), parsers)
        return layout

    def schema_for(self, names: Sequence[str]) -> Schema:
        """The value schema of an object whose columns are ``names``.

        Raises:
            DataError: A name is empty or repeated, or ``csv.column.types`` names a column
                that is not there.

        """
        return self._layout(tuple(names)).schema

    @property
    def reads_columns(self) -> bool:  # type: ignore[override]
        """Whether :meth:`batches` reads columns: with pyarrow (the ``columnar`` extra)
        and a UTF-8 encoding.
        """
        from omconnect.source_base.formats.csv_columns import column_reader_available

        return self.encoding == "utf-8-sig" and column_reader_available()

    def _read_batches(self, stream: IO[bytes], object_name: str,
                      skip: int) -> Iterator[ParsedBatch | ParsedRecord]:
        """Batches from pyarrow's CSV reader (:mod:`~omconnect.source_base.formats.
        csv_columns`); from the first row it cannot read as :meth:`records` would (and
        for an object resumed after ``skip`` records), the records :meth:`records` gives.
        """
        if skip or not self.reads_columns:
            yield from self._read(stream, object_name, skip)
            return
        from omconnect.source_base.formats.csv_columns import NotColumnar, csv_batches
        from omconnect.source_base.formats.seekable import seekable_source

        with seekable_source(stream) as source:
            start = source.tell()
            given = 0
            try:
                for batch in csv_batches(self, source, object_name):
                    given += batch.num_rows
                    yield batch
            except NotColumnar:
                source.seek(start)
                yield from self._read(source, object_name, given)

    def _read(self, stream: IO[bytes], object_name: str, skip: int) -> Iterator[ParsedRecord]:
        text = io.TextIOWrapper(stream, encoding=self.encoding, newline="", errors=TEXT_ERRORS)
        try:
            yield from self._rows(text, object_name, skip)
        finally:
            text.detach()  # the caller owns (and closes) the stream

    def _rows(self, text: io.TextIOWrapper, object_name: str,
              skip: int) -> Iterator[ParsedRecord]:
        reader = csv.reader(text, delimiter=self.delimiter, quotechar=self.quote_char,
                            strict=True)
        from_values = Struct.from_values
        key = self.object_key(object_name)
        layout: _Layout | None = None
        key_at: tuple[int, Schema] | None = None
        start = 1
        while True:
            try:
                row = next(reader)
            except StopIteration:
                return
            except csv.Error as exc:
                yield failed(start, self.error(f"malformed CSV: {exc}", object_name, start,
                                               line=True))
                start = reader.line_num + 1
                continue
            number, start = start, reader.line_num + 1
            if not row:
                continue  # a blank line
            bad = undecodable(row)
            if layout is None:
                if bad is not None:
                    yield failed(number, self.error(
                        f"not valid {self.encoding}: byte {bad} in the first row",
                        object_name, number, line=True))
                    return
                try:
                    if self.header:
                        names = self.column_names or tuple(name.strip() for name in row)
                    else:
                        names = self.column_names or tuple(
                            f"column{i}" for i in range(1, len(row) + 1))
                    layout = self._layout(tuple(names))
                    key_at = self.struct_key_index(layout.schema, object_name)
                except DataError as exc:
                    yield failed(number, self.error(exc.message, object_name, number,
                                                    line=True))
                    return
                if self.header:
                    continue
            if skip:
                skip -= 1
                continue
            if bad is not None:
                yield failed(number, self.error(
                    f"not valid {self.encoding}: byte {bad} does not decode", object_name,
                    number, line=True))
                continue
            if len(row) != layout.width:
                yield failed(number, self.error(
                    f"{len(row)} fields where the header has {layout.width}", object_name,
                    number, line=True))
                continue
            values: list[Any] = row
            if layout.parsers:
                try:
                    for index, name, parse in layout.parsers:
                        column = name
                        values[index] = parse(values[index])
                except ValueError as exc:
                    yield failed(number, self.error(
                        f"column {column!r}: {exc}", object_name, number, line=True))
                    continue
            if key_at is not None:
                key = SchemaAndValue(key_at[1], values[key_at[0]])
            yield record(number, key, SchemaAndValue(
                layout.schema, from_values(layout.schema, values, validate=False)))
