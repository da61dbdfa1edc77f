"""CSV objects read as Arrow batches (the columnar path), by pyarrow's CSV reader.

:func:`csv_batches` gives the same rows :class:`~omconnect.source_base.formats.csv.CsvFormat`
reads record by record, as :class:`~omconnect.source_base.formats.base.ParsedBatch`
columns: the header is read with Python's ``csv`` module (so names, blank lines and the
byte-order mark are handled as the record reader handles them), the rest by pyarrow with
every column's type given (nothing is inferred): ``string`` columns keep empty fields as
``""``, typed columns read them as null, ``float32`` columns are read as ``float64`` (the
record reader's Python floats). Where pyarrow refuses anything (a row of the wrong width, a
field that does not parse, bytes that are not UTF-8, a header the record reader rejects)
:class:`NotColumnar` is raised and the caller reads the rest of the object record by
record, which reports each bad row in its place. pyarrow accepts a subset of what the
record reader accepts (``" 5"`` is 5 for both; ``"+5"``, ``"1_000"``, ``"YES"`` only for the
record reader, so they fall back), with one exception: a field with characters after its
closing quote (``"ab"c``) is ``abc`` in a batch, where the record reader reports it.

A batch's ``number`` is its first row's line counted as one line per row after the
header: exact unless blank lines or quoted line breaks come before it (batches carry no
per-record headers, where numbers show).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from typing import IO, TYPE_CHECKING

from omconnect.data.schema import STRING_SCHEMA
from omconnect.errors import DataError
from omconnect.source_base.formats.base import KeySource, ParsedBatch

if TYPE_CHECKING:
    from omconnect.source_base.formats.csv import CsvFormat

__all__ = ["BLOCK_SIZE", "NotColumnar", "csv_batches"]

BLOCK_SIZE = 1 << 18
"""Bytes pyarrow parses at a time: a batch is the rows of one block."""

_HEADER_LIMIT = 1 << 16
"""A first row longer than this goes to the record reader."""

_ARROW_TYPES = {"string": "string", "int8": "int8", "int16": "int16", "int32": "int32",
                "int64": "int64", "float32": "float64", "float64": "float64",
                "boolean": "bool_"}


class NotColumnar(Exception):
    """The object (from the rows already given on) needs the record reader."""


def _first_row(source: IO[bytes], fmt: CsvFormat) -> tuple[list[str], int, int] | None:
    """The first non-blank row of ``source`` (at its start), the byte after it and the
    lines it and the blank lines before it took; ``None`` for an object with no row.

    Raises:
        NotColumnar: The row is not simple to find (too long, not UTF-8, malformed).

    """
    data = b""
    while True:
        line = source.readline(_HEADER_LIMIT)
        data += line
        if len(data) >= _HEADER_LIMIT:
            raise NotColumnar("a long first row")
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError:
            if not line:
                raise NotColumnar("not UTF-8") from None
            continue  # a character cut by the length limit: read on
        try:
            rows = [row for row in csv.reader(io.StringIO(text, newline=""),
                                              delimiter=fmt.delimiter,
                                              quotechar=fmt.quote_char, strict=True) if row]
        except csv.Error:
            if not line:
                raise NotColumnar("malformed first row") from None
            continue  # a quoted field goes on past this line
        if len(rows) > 1:
            raise NotColumnar("rows ended by \\r only")
        if rows:
            return rows[0], len(data), data.count(b"\n") or 1
        if not line:
            return None


def csv_batches(fmt: CsvFormat, source: IO[bytes], object_name: str
                ) -> Iterator[ParsedBatch]:
    """The rows of a CSV object (``source`` seekable, at its start) as batches.

    Raises:
        NotColumnar: From the first row pyarrow cannot read as the record reader would;
            the batches given before it hold every row before it.

    """
    import pyarrow as pa
    import pyarrow.csv as pa_csv

    start = source.tell()
    first = _first_row(source, fmt)
    if first is None:
        return
    fields, end, lines = first
    if fmt.header:
        names = tuple(fmt.column_names or (name.strip() for name in fields))
        data_from, number = start + end, lines + 1
    else:
        names = tuple(fmt.column_names or (f"column{i}" for i in range(1, len(fields) + 1)))
        data_from, number = start, 1
    try:
        schema = fmt.schema_for(names)
        key_at = fmt.struct_key_index(schema, object_name)
    except DataError as exc:
        raise NotColumnar(exc.message) from None
    types = {name: getattr(pa, _ARROW_TYPES[fmt.column_types.get(name, "string")])()
             for name in names}
    source.seek(data_from)
    try:
        reader = pa_csv.open_csv(
            source,
            read_options=pa_csv.ReadOptions(column_names=list(names), use_threads=False,
                                            block_size=BLOCK_SIZE),
            parse_options=pa_csv.ParseOptions(delimiter=fmt.delimiter,
                                              quote_char=fmt.quote_char,
                                              newlines_in_values=True),
            convert_options=pa_csv.ConvertOptions(
                column_types=types, strings_can_be_null=False, null_values=[""],
                quoted_strings_can_be_null=True, true_values=["true", "1", "yes"],
                false_values=["false", "0", "no"]))
    except pa.ArrowInvalid as exc:
        if "Empty CSV file" in str(exc):
            return
        raise NotColumnar(str(exc)) from None
    value_fields = [pa.field(name, types[name]) for name in names]
    key_schema = STRING_SCHEMA if fmt.key_source is KeySource.OBJECT else \
        key_at[1] if key_at is not None else None
    while True:
        try:
            batch = reader.read_next_batch()
        except StopIteration:
            return
        except pa.ArrowInvalid as exc:
            raise NotColumnar(str(exc)) from None
        if batch.num_rows == 0:
            continue
        arrays = batch.columns
        value = pa.StructArray.from_arrays(arrays, fields=value_fields)
        if key_at is not None:
            rows = pa.RecordBatch.from_arrays([arrays[key_at[0]], value],
                                              names=["key", "value"])
        elif fmt.key_source is KeySource.OBJECT:
            rows = pa.RecordBatch.from_arrays(
                [pa.repeat(pa.scalar(object_name, pa.string()), len(value)), value],
                names=["key", "value"])
        else:
            rows = pa.RecordBatch.from_arrays([value], names=["value"])
        yield ParsedBatch(number, rows, key_schema, schema)
        number += batch.num_rows


def column_reader_available() -> bool:
    """Whether pyarrow's CSV reader is installed (the ``columnar`` extra)."""
    try:
        import pyarrow.csv  # noqa: F401
    except ImportError:
        return False
    return True
