r"""JSON text of a whole ``string`` column at once, and back: the JSON converter's
column form.

A string needs no escape in JSON unless it holds ``"``, ``\`` or a control character
(U+0000 to U+001F): omconnect writes UTF-8 without ``\u`` escapes of other characters,
as :func:`json.dumps` with ``ensure_ascii=False`` does. So when no item of a column holds
one of those (one regular-expression scan in Arrow), each item's JSON is the item between
quotes, inside the envelope's fixed head and tail, joined in Arrow with no Python object
per item. Reading is the same in reverse: when every item is a null, a null envelope,
or one of the known envelope heads, a quote, a string without ``"``, ``\`` or control
characters, a quote and the tail, the strings are sliced out in Arrow. Otherwise, or for
other column types, the converter has no column form for the batch and the runtime
converts it record by record.

A ``struct`` column of flat fields (integers, booleans, floats, strings, the logical
Date, Time and Timestamp, written as the integers Connect stores, and Decimal as
``decimal.format=BASE64`` writes it, from a ``decimal128`` column of the schema's scale;
no default), or of structs of such fields at any depth, is written the same way:
each field's JSON text as a column (integers and booleans by Arrow casts, strings between
quotes with ``\`` and ``"`` escaped in Arrow, floats by Python's ``repr``, the one step
with an object per value, since Arrow's shortest form writes ``1`` and ``1e+15`` where
JSON from Python writes ``1.0`` and ``1000000000000000.0``), joined with the field names
in Arrow; a nested struct is an object joined the same way (``null`` where it is null).
Reading a struct column is done by pyarrow's JSON reader: when every item is a null,
or the same envelope head, a JSON object on one line and the tail, the objects are
read at once with an explicit Arrow schema (integers, doubles, booleans, strings, Date
and Timestamp integers, structs of these; no default), and the result is given the
types records of that schema give ``put_batch``
(:mod:`~omconnect.columnar.arrow_types`: ``int8`` to ``int64``, ``double``, ``date32``,
``timestamp[us, tz=UTC]``). A value out of its schema's range, a required field that is
null or missing, a payload of another JSON type, a duplicate key or anything the reader
refuses leaves the batch to the records, which name the error; fields the schema does
not have are ignored, as the records ignore them.

A column whose Arrow types do not vouch for its schema
(:func:`~omconnect.columnar.typed_values.column_fits`), a null row, a string with a
control character or a float that is not finite (no JSON form: the per-record path names
the error) leaves the batch to the records.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Sequence
from typing import Any

from omconnect.plugins import require

require("pyarrow", plugin="the columnar path", extra="columnar")
require("numpy", plugin="the columnar path", extra="columnar")

import numpy as np  # noqa: E402
import pyarrow as pa  # noqa: E402
import pyarrow.compute as pc  # noqa: E402
import pyarrow.json as pj  # noqa: E402

from omconnect.columnar.arrow_types import arrow_type_of  # noqa: E402
from omconnect.columnar.buffers import data_of, offsets_of  # noqa: E402
from omconnect.columnar.typed_values import column_fits  # noqa: E402
from omconnect.data.logical import DATE, TIME, TIMESTAMP, decimal_scale  # noqa: E402
from omconnect.data.logical_names import DECIMAL  # noqa: E402
from omconnect.data.schema import Schema, Type, integer_range  # noqa: E402

__all__ = ["json_string_column", "json_string_values", "json_struct_column",
           "json_struct_values"]

_NEEDS_ESCAPE = '["\\\\\\x00-\\x1f]'
_CONTROL = "[\\x00-\\x1f]"
_FLAT = frozenset((Type.INT8, Type.INT16, Type.INT32, Type.INT64, Type.BOOLEAN,
                   Type.FLOAT32, Type.FLOAT64, Type.STRING))
_READ_FLAT = _FLAT - {Type.FLOAT32}  # a double out of FLOAT32's range: the records decide
_READ_TIMES = frozenset((DATE, TIMESTAMP))
_TIMES = frozenset((DATE, TIME, TIMESTAMP))
_NAME_ESCAPES = re.compile(_NEEDS_ESCAPE)
_DATE_DAYS = (-719_162, 2_932_896)  # datetime.date's range, in days since 1970-01-01
_TIMESTAMP_MS = (-62_135_596_800_000, 253_402_300_799_999)  # datetime's range, UTC
_BASE64 = np.frombuffer(
    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/", np.uint8)


def json_string_column(column: pa.Array, head: str, tail: str,
                       null_text: str | None) -> pa.Array | None:
    """``head + JSON string + tail`` of each item of a string ``column``, as ``binary``;
    a null item becomes ``null_text`` (``None``: a null, a tombstone). ``None`` when the
    column is not a string column or some item needs escapes.
    """
    kind = column.type
    if pa.types.is_large_string(kind) or pa.types.is_string_view(kind):
        column = column.cast(pa.string())
    elif not pa.types.is_string(kind):
        return None
    if len(column) and pc.any(pc.match_substring_regex(column, _NEEDS_ESCAPE)).as_py():
        return None
    joined = pc.binary_join_element_wise(head + '"', column, '"' + tail, "")
    if null_text is not None and column.null_count:
        joined = pc.if_else(column.is_null(), pa.scalar(null_text, pa.string()), joined)
    return joined.cast(pa.binary())


def json_string_values(column: pa.Array, heads: Sequence[str], tail: str,
                       null_texts: Sequence[str]) -> pa.Array | None:
    """The strings a ``binary`` column of JSON holds, when each item is a null, one of
    ``null_texts`` (a null value), or ``head + JSON string without escapes + tail`` for
    one of ``heads``: a ``string`` column (``null`` type when every item is null, as
    Arrow reads a column of ``None``). ``None`` when some item is anything else.
    """
    rows = len(column)
    if column.null_count == rows:
        return pa.nulls(rows)
    try:
        text = column.cast(pa.string())  # checks the UTF-8
    except pa.ArrowInvalid:
        return None
    nulls = column.is_null()
    for null_text in null_texts:
        nulls = pc.or_(nulls, pc.fill_null(pc.equal(text, null_text), False))
    if pc.all(nulls).as_py():  # only null values
        return pa.nulls(rows)
    values: pa.Array | None = None
    matched = nulls
    closing = '"' + tail
    ends = pc.fill_null(pc.ends_with(text, closing), False)
    for head in heads:
        opening = head + '"'
        fits = pc.and_(pc.and_(pc.fill_null(pc.starts_with(text, opening), False), ends),
                       pc.greater_equal(pc.utf8_length(text), len(opening) + len(closing)))
        fits = pc.and_not(fits, matched)
        if not pc.any(fits).as_py():
            continue
        body = pc.utf8_slice_codeunits(text, start=len(opening), stop=-len(closing))
        values = body if values is None else pc.if_else(fits, body, values)
        matched = pc.or_(matched, fits)
        if pc.all(matched).as_py():
            break
    else:
        return None  # some item matched no head
    assert values is not None
    strings = pc.if_else(nulls, pa.scalar(None, pa.string()), values)
    if pc.any(pc.match_substring_regex(strings, _NEEDS_ESCAPE)).as_py():
        return None  # escapes, or a quote that ends the string early: per record
    return strings


def json_struct_column(column: pa.Array, schema: Schema, head: str,
                       tail: str) -> pa.Array | None:
    """``head + JSON object + tail`` of each row of a ``struct`` ``column`` of ``schema``
    (fields flat or structs of such fields; see the module docstring), as ``binary``: the
    bytes the per-record writer gives each row. ``None`` when the column has no such form.
    """
    if schema.type is not Type.STRUCT or column.null_count or \
            not pa.types.is_struct(column.type) or not _plain_struct(schema) or \
            not column_fits(column, schema):
        return None
    text = _object_text(column, schema)
    if text is None:
        return None
    return pc.binary_join_element_wise(head, text, tail, "").cast(pa.binary())


def _plain_struct(schema: Schema) -> bool:
    """Whether every field of ``schema``, nested structs' included, has a column form: a
    flat type, a Date, Time or Timestamp, or a struct of such fields; no default.
    """
    return all(f.schema.default is None
               and ((f.schema.name in _TIMES and f.schema.type.is_integer)
                    or (f.schema.name == DECIMAL and f.schema.type is Type.BYTES)
                    or (not f.schema.name and (
                        f.schema.type in _FLAT
                        or (f.schema.type is Type.STRUCT and _plain_struct(f.schema)))))
               for f in schema.fields)


def _object_text(column: pa.Array, schema: Schema) -> pa.Array | None:
    """Each row's JSON object as a ``string`` column (``null`` for a null row), or
    ``None``: no form.
    """
    parts: list[pa.Array | str] = []
    literal = "{"
    for index, (field, child) in enumerate(zip(schema.fields, column.flatten(),
                                               strict=True)):
        if field.schema.type is Type.STRUCT:
            text = _object_text(child, field.schema)
        elif field.schema.name == DECIMAL:
            text = _decimal_text(child, decimal_scale(field.schema))
        elif field.schema.name:
            text = _time_text(child)
        else:
            text = _field_text(child, field.schema.type)
        if text is None:
            return None
        literal += ("," if index else "") + json.dumps(field.name, ensure_ascii=False) + ":"
        parts += [literal, text]
        literal = ""
    parts.append(literal + "}")
    joined = pc.binary_join_element_wise(*parts, "") if len(parts) > 1 else \
        pa.array([parts[0]] * len(column), pa.string())
    if column.null_count:
        joined = pc.if_else(column.is_null(), "null", joined)
    return joined


def _time_text(child: pa.Array) -> pa.Array | None:
    """A Date, Time or Timestamp field's JSON text per row: the integer Connect stores
    (days since the epoch; milliseconds since midnight; milliseconds since the epoch,
    floored as :func:`~omconnect.data.logical.from_logical` floors microseconds), or
    ``None`` for a type or unit it has no form for.
    """
    kind = child.type
    types = pa.types
    if types.is_date32(kind):
        numbers = child.cast(pa.int32())
    else:
        if types.is_date64(kind):
            times, per = 1, 86_400_000  # milliseconds, to days
        elif types.is_timestamp(kind) or types.is_time(kind):
            times, per = {"s": (1000, 1), "ms": (1, 1), "us": (1, 1000)}.get(kind.unit, (0, 0))
            if not per:
                return None
        else:
            return None
        storage = pa.int32() if types.is_time32(kind) else pa.int64()
        raw = child.cast(storage).fill_null(0).to_numpy().astype(np.int64)
        numbers = pa.array(np.floor_divide(raw * times, per), pa.int64())
    text = numbers.cast(pa.string())
    if child.null_count:
        text = pc.if_else(child.is_null(), "null", text)
    return text


def _decimal_text(child: pa.Array, scale: int) -> pa.Array | None:
    """A Decimal field's JSON text per row as ``decimal.format=BASE64`` writes it: the
    base64 of the unscaled value's minimal two's-complement big-endian bytes (Java's
    ``BigInteger.toByteArray``) between quotes, ``null`` for a null; computed on the
    ``decimal128`` column's 16-byte words with numpy. ``None`` for another type or scale.
    """
    kind = child.type
    if not pa.types.is_decimal128(kind) or kind.scale != scale or sys.byteorder != "little":
        return None  # (Arrow's words are in the machine's byte order)
    rows = len(child)
    words = np.frombuffer(child.buffers()[1], np.uint8)[
        child.offset * 16:(child.offset + rows) * 16].reshape(rows, 16)[:, ::-1]
    # A leading byte is redundant when it only repeats the sign of the byte after it.
    high = words[:, 1:] >= 0x80
    redundant = ((words[:, :-1] == 0) & ~high) | ((words[:, :-1] == 0xFF) & high)
    lengths = 16 - np.cumprod(redundant, axis=1).sum(axis=1)
    widths = 2 + 4 * ((lengths + 2) // 3)  # quotes around the base64 text
    offsets = np.zeros(rows + 1, np.int32)
    np.cumsum(widths, out=offsets[1:])
    data = np.empty(int(offsets[-1]), np.uint8)
    for length in np.unique(lengths):
        at = np.flatnonzero(lengths == length)
        padded = np.zeros((len(at), (length + 2) // 3 * 3), np.uint8)
        padded[:, :length] = words[at, 16 - length:]
        trio = padded.reshape(len(at), -1, 3).astype(np.uint32)
        bits = (trio[:, :, 0] << 16) | (trio[:, :, 1] << 8) | trio[:, :, 2]
        sextets = np.stack([(bits >> shift) & 63 for shift in (18, 12, 6, 0)], axis=2)
        text = _BASE64[sextets.reshape(len(at), -1)]
        pad = padded.shape[1] - length
        if pad:
            text[:, -pad:] = ord("=")
        quoted = np.full((len(at), text.shape[1] + 2), ord('"'), np.uint8)
        quoted[:, 1:-1] = text
        data[offsets[at][:, None] + np.arange(quoted.shape[1])] = quoted
    strings = pa.StringArray.from_buffers(rows, pa.py_buffer(offsets), pa.py_buffer(data))
    if child.null_count:
        strings = pc.if_else(child.is_null(), "null", strings)
    return strings


def _field_text(child: pa.Array, kind: Type) -> pa.Array | None:
    """One field's JSON text per row (``null`` for a null), or ``None``: no form."""
    if kind is Type.STRING:
        if not pa.types.is_string(child.type):
            child = child.cast(pa.string())
        if len(child) and pc.any(pc.match_substring_regex(child, _CONTROL)).as_py():
            return None
        escaped = pc.replace_substring(pc.replace_substring(child, "\\", "\\\\"),
                                       '"', '\\"')
        text = pc.binary_join_element_wise('"', escaped, '"', "")
    elif kind is Type.BOOLEAN:
        text = pc.if_else(child, "true", "false")
    elif kind in (Type.FLOAT32, Type.FLOAT64):
        if pc.any(pc.invert(pc.is_finite(child))).as_py():  # (null when all are null)
            return None
        text = pa.array(list(map(float.__repr__, child.fill_null(0.0).to_pylist())),
                        pa.string())
    else:
        text = child.cast(pa.string())
    if child.null_count:
        text = pc.if_else(child.is_null(), "null", text)
    return text


def json_struct_values(column: pa.Array, schema: Schema, head: bytes, tail: bytes
                       ) -> pa.Array | None:
    """The column the records of a ``binary`` ``column`` of JSON give ``put_batch`` when
    every item is a null or ``head + object of schema + tail`` (or ``head + null + tail``
    where ``schema`` is optional): a ``struct`` column of the schema's Arrow type (see
    the module docstring). ``None`` (record by record) otherwise.
    """
    if schema.type is not Type.STRUCT or not schema.fields or not _readable_struct(schema):
        return None
    rows = len(column)
    if column.null_count == rows:
        return pa.nulls(rows)
    if not pa.types.is_binary(column.type):
        return None
    if _has_control_bytes(column):
        return None  # one object per line; raw control characters: the records refuse
    framed = pc.and_(_starts_with(column, head), _ends_with(column, tail))
    if not pc.all(pc.or_(framed, column.is_null())).as_py():
        return None
    payloads = pc.binary_slice(column, len(head), -len(tail) if tail else None)
    null_payload = pc.fill_null(pc.equal(payloads, b"null"), False)
    if not schema.optional and pc.any(null_payload).as_py():
        return None  # a null for a required struct: the records say why not
    objects = pc.and_(pc.invert(null_payload), column.is_valid())
    if not pc.any(objects).as_py():
        return pa.nulls(rows)  # only null values: as Arrow reads a column of None
    payloads = payloads.filter(objects)
    table = _read_lines(payloads, schema)
    if table is None or table.num_rows != len(payloads):
        return None  # refused, or an item was not one object
    parsed = _typed_struct(pa.StructArray.from_arrays(
        [table.column(i).combine_chunks() for i in range(table.num_columns)],
        names=table.column_names), schema, rows=None)
    if parsed is None or len(parsed) == rows:
        return parsed
    # Null rows (tombstones, null payloads) between the objects: take with null indices.
    present = objects.to_numpy(zero_copy_only=False)
    return parsed.take(pa.array(np.cumsum(present) - 1, pa.int64(), mask=~present))


def _has_control_bytes(column: pa.Array) -> bool:
    """Whether some item of a ``binary`` column holds a byte below 0x20 (one numpy scan
    of the data buffer: a regular expression over the column is six times slower).
    """
    ends = offsets_of(column)
    data = np.frombuffer(data_of(column), np.uint8)[int(ends[0]):int(ends[-1])]
    return bool((data < 0x20).any())


def _starts_with(column: pa.Array, prefix: bytes) -> pa.Array:
    return pc.fill_null(pc.equal(pc.binary_slice(column, 0, len(prefix)), prefix), False)


def _ends_with(column: pa.Array, suffix: bytes) -> pa.Array:
    if not suffix:
        return pc.is_valid(column)
    return pc.fill_null(pc.equal(pc.binary_slice(column, -len(suffix)), suffix), False)


def _readable_struct(schema: Schema) -> bool:
    """Whether every field of ``schema`` (nested structs' too) has a read form: an
    integer, FLOAT64, boolean or string, a Date or Timestamp; no default; a name written
    without escapes (FLOAT32 and Time are read record by record).
    """
    return all(f.schema.default is None and not _NAME_ESCAPES.search(f.name)
               and ((f.schema.name in _READ_TIMES and f.schema.type.is_integer)
                    or (not f.schema.name and (
                        f.schema.type in _READ_FLAT
                        or (f.schema.type is Type.STRUCT and _readable_struct(f.schema)))))
               for f in schema.fields)


def _read_type(schema: Schema) -> pa.DataType:
    """The Arrow type the JSON reader reads a value of ``schema`` as."""
    kind = schema.type
    if kind is Type.STRUCT:
        return pa.struct([pa.field(f.name, _read_type(f.schema)) for f in schema.fields])
    if kind is Type.STRING:
        return pa.string()
    if kind is Type.BOOLEAN:
        return pa.bool_()
    if kind is Type.FLOAT64:
        return pa.float64()
    return pa.int64()


def _read_lines(payloads: pa.Array, schema: Schema) -> pa.Table | None:
    """``payloads`` (objects, one per item) read by pyarrow's JSON reader, or ``None``
    when it refuses them or an item is not an object.
    """
    if not pc.all(pc.and_(_starts_with(payloads, b"{"), _ends_with(payloads, b"}"))).as_py():
        return None
    lines = pc.binary_join_element_wise(payloads, b"\n", b"")
    ends = offsets_of(lines)
    text = data_of(lines)[int(ends[0]):int(ends[-1])]
    options = pj.ParseOptions(explicit_schema=pa.schema(_read_type(schema)),
                              unexpected_field_behavior="ignore")
    try:
        return pj.read_json(pa.BufferReader(pa.py_buffer(text)), parse_options=options,
                            read_options=pj.ReadOptions(use_threads=False,
                                                        block_size=max(len(text), 1 << 16)))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None


def _within(values: pa.Array, bounds: tuple[int, int]) -> bool:
    if values.null_count == len(values):
        return True
    extremes: Any = pc.min_max(values).as_py()
    return bool(bounds[0] <= extremes["min"] and extremes["max"] <= bounds[1])


def _typed_struct(column: pa.StructArray, schema: Schema, rows: pa.Array | None
                  ) -> pa.Array | None:
    """``column`` as read, given the types the records' values would have, or ``None``
    when a value is out of range or a required field is null where its struct is not.
    ``rows`` marks the rows where the enclosing struct is valid (``None``: all).
    """
    valid = column.is_valid() if rows is None else pc.and_(rows, column.is_valid())
    children: list[pa.Array] = []
    for field, child in zip(schema.fields, column.flatten(), strict=True):
        if not field.schema.optional and \
                pc.any(pc.and_(valid, child.is_null())).as_py():
            return None  # missing or null where required: the records name it
        typed = _typed_value(child, field.schema, valid)
        if typed is None:
            return None
        children.append(typed)
    mask = pc.invert(valid) if rows is not None or column.null_count else None
    return pa.StructArray.from_arrays(children, names=[f.name for f in schema.fields],
                                      mask=mask)


def _typed_value(child: pa.Array, schema: Schema, valid: pa.Array) -> pa.Array | None:
    """One field's values in the type the records' values get
    (:func:`~omconnect.columnar.arrow_types.arrow_type_of`; see :func:`_typed_struct`).
    """
    if schema.type is Type.STRUCT:
        return _typed_struct(child, schema, valid)
    values = child.filter(valid)
    name = schema.name
    if name == DATE:
        if not _within(values, _DATE_DAYS):
            return None
        child = child.cast(pa.int32())
    elif name == TIMESTAMP:
        if not _within(values, _TIMESTAMP_MS):
            return None
        child = pc.multiply(child, 1000)  # milliseconds, to the type's microseconds
    elif schema.type.is_integer and not _within(values, integer_range(schema.type)):
        return None
    return child.cast(arrow_type_of(schema))
