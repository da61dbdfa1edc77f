"""Values as text and back, inferring the type: what Kafka Connect's ``Values`` class does
for its SimpleHeaderConverter.

Writing (:func:`format_value`): strings as themselves, numbers and booleans as literals
(``true``/``false``), bytes as base64, dates as ISO 8601 (``2024-05-01``,
``13:45:00.250Z``, ``2024-05-01T13:45:00.250Z``), lists as ``[a,b]`` and maps and structs
as ``{"k":v}``, strings inside them quoted (backslash and double quote escaped with a
backslash).

Reading (:func:`parse_value`) infers the schema from the text:

=====================================  =====================================
text                                   schema and value
=====================================  =====================================
empty                                  STRING ``""``
``null``                               no schema, ``None``
``true`` / ``false``                   BOOLEAN
an integer                             the smallest of INT8..INT64 that holds it,
                                       else Decimal with scale 0
a decimal number                       FLOAT64
``yyyy-MM-dd``                         Date
``HH:mm:ss.SSSZ``                      Time
``yyyy-MM-ddTHH:mm:ss.SSSZ``           Timestamp
``[...]``                              ARRAY of the elements' common schema
``{k: v, ...}``                        MAP of the common key and value schemas
anything else                          STRING, the text unchanged
=====================================  =====================================

A list or map whose elements share no schema is returned without a schema. Two places
differ from Kafka Connect on purpose, to keep a value's text round trip exact: a decimal
number reads as FLOAT64 (Kafka Connect picks FLOAT32 whenever the number does not
overflow it), and a whole text in double quotes stays a string with its quotes.
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import re
from collections.abc import Mapping
from typing import Any

from omconnect.data import logical
from omconnect.data.builder import SchemaBuilder
from omconnect.data.schema import (
    BOOLEAN_SCHEMA,
    FLOAT64_SCHEMA,
    INT8_SCHEMA,
    INT16_SCHEMA,
    INT32_SCHEMA,
    INT64_SCHEMA,
    OPTIONAL_STRING_SCHEMA,
    STRING_SCHEMA,
    Schema,
    Type,
    integer_range,
)
from omconnect.data.struct import SchemaAndValue, Struct
from omconnect.errors import DataError

__all__ = ["format_value", "parse_value"]

_INTEGER = re.compile(r"[+-]?\d+")
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_TIME = re.compile(r"\d{2}:\d{2}:\d{2}\.\d{3}Z")
_TIMESTAMP = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z")
_INTEGER_SCHEMAS = (INT8_SCHEMA, INT16_SCHEMA, INT32_SCHEMA, INT64_SCHEMA)
_NUMERIC_ORDER = (Type.INT8, Type.INT16, Type.INT32, Type.INT64, Type.FLOAT32, Type.FLOAT64)
_DELIMITERS = frozenset('[]{},:"') | frozenset(" \t\r\n")


# -- writing ---------------------------------------------------------------------------


def format_value(value: Any) -> str:
    """``value`` as text (see the module docstring); ``None`` is ``"null"``.

    Raises:
        DataError: A value of a type with no text form.

    """
    parts: list[str] = []
    _append(parts, value, embedded=False)
    return "".join(parts)


def _append(parts: list[str], value: Any, *, embedded: bool) -> None:
    if value is None:
        parts.append("null")
    elif value is True or value is False:
        parts.append("true" if value else "false")
    elif isinstance(value, str):
        parts.append('"' + _escape(value) + '"' if embedded else value)
    elif isinstance(value, (int, float, decimal.Decimal)):
        parts.append(repr(value) if isinstance(value, float) else str(value))
    elif isinstance(value, (bytes, bytearray, memoryview)):
        encoded = base64.b64encode(value).decode("ascii")
        parts.append(f'"{encoded}"' if embedded else encoded)
    elif isinstance(value, dt.datetime):
        parts.append(_format_timestamp(value))
    elif isinstance(value, dt.date):
        parts.append(value.isoformat())
    elif isinstance(value, dt.time):
        parts.append(value.strftime("%H:%M:%S.") + f"{value.microsecond // 1000:03d}Z")
    elif isinstance(value, (list, tuple)):
        parts.append("[")
        for index, item in enumerate(value):
            if index:
                parts.append(",")
            _append(parts, item, embedded=True)
        parts.append("]")
    elif isinstance(value, (Mapping, Struct)):
        items = value.items()
        parts.append("{")
        for index, (key, item) in enumerate(items):
            if index:
                parts.append(",")
            _append(parts, key, embedded=True)
            parts.append(":")
            _append(parts, item, embedded=True)
        parts.append("}")
    else:
        raise DataError(f"a {type(value).__name__} has no text form for a header")


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def _format_timestamp(value: dt.datetime) -> str:
    utc = value.astimezone(dt.UTC) if value.tzinfo else value
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"


# -- reading ---------------------------------------------------------------------------


def parse_value(text: str) -> SchemaAndValue:
    """The value written as ``text``, with an inferred schema (see the module docstring).

    Never fails: text that is not a recognised literal or a well-formed list or map is a
    STRING.
    """
    if not text:
        return SchemaAndValue(STRING_SCHEMA, text)
    stripped = text.strip()
    if stripped[:1] in ("[", "{"):
        try:
            parser = _Parser(stripped)
            result = parser.value()
            if parser.at_end():
                return result
        except _Malformed:
            pass
        return SchemaAndValue(STRING_SCHEMA, text)
    if stripped != text or stripped[:1] == '"':
        return SchemaAndValue(STRING_SCHEMA, text)
    scalar = _scalar(text)
    return scalar if scalar is not None else SchemaAndValue(STRING_SCHEMA, text)


def _scalar(token: str) -> SchemaAndValue | None:
    """The literal ``token`` stands for, or ``None`` when it is just text."""
    if token == "null":
        return SchemaAndValue(None, None)
    if token in ("true", "false"):
        return SchemaAndValue(BOOLEAN_SCHEMA, token == "true")
    if _INTEGER.fullmatch(token):
        number = int(token)
        for schema in _INTEGER_SCHEMAS:
            low, high = integer_range(schema.type)
            if low <= number <= high:
                return SchemaAndValue(schema, number)
        return SchemaAndValue(logical.decimal_schema(0), decimal.Decimal(number))
    if _NUMBER.fullmatch(token):
        value = float(token)
        if value in (float("inf"), float("-inf")):
            exact = decimal.Decimal(token)
            scale = max(0, -int(exact.as_tuple().exponent))
            return SchemaAndValue(logical.decimal_schema(scale), exact)
        return SchemaAndValue(FLOAT64_SCHEMA, value)
    try:
        if _TIMESTAMP.fullmatch(token):
            parsed = dt.datetime.strptime(token, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=dt.UTC)
            return SchemaAndValue(logical.timestamp_schema(), parsed)
        if _DATE.fullmatch(token):
            return SchemaAndValue(logical.date_schema(), dt.date.fromisoformat(token))
        if _TIME.fullmatch(token):
            parsed_time = dt.datetime.strptime(token, "%H:%M:%S.%fZ").time()
            return SchemaAndValue(logical.time_schema(), parsed_time)
    except ValueError:  # e.g. month 13: not a date after all
        return None
    return None


class _Malformed(Exception):
    """The text is not a well-formed list or map."""


class _Parser:
    """Recursive descent over ``[...]``, ``{...}``, quoted strings and bare tokens."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._pos = 0

    def at_end(self) -> bool:
        self._skip_space()
        return self._pos == len(self._text)

    def _skip_space(self) -> None:
        while self._pos < len(self._text) and self._text[self._pos].isspace():
            self._pos += 1

    def _peek(self) -> str:
        self._skip_space()
        if self._pos >= len(self._text):
            raise _Malformed
        return self._text[self._pos]

    def _expect(self, char: str) -> None:
        if self._peek() != char:
            raise _Malformed
        self._pos += 1

    def value(self) -> SchemaAndValue:
        char = self._peek()
        if char == "[":
            return self._array()
        if char == "{":
            return self._map()
        if char == '"':
            return SchemaAndValue(STRING_SCHEMA, self._quoted())
        return self._bare()

    def _array(self) -> SchemaAndValue:
        self._expect("[")
        items: list[SchemaAndValue] = []
        if self._peek() == "]":
            self._pos += 1
            return SchemaAndValue(SchemaBuilder.array(OPTIONAL_STRING_SCHEMA).build(), [])
        while True:
            items.append(self.value())
            if self._peek() == ",":
                self._pos += 1
                continue
            self._expect("]")
            break
        values = [item.value for item in items]
        element = _common_schema([item.schema for item in items], values)
        if element is None:
            return SchemaAndValue(None, values)
        return SchemaAndValue(SchemaBuilder.array(element).build(), values)

    def _map(self) -> SchemaAndValue:
        self._expect("{")
        entries: list[tuple[SchemaAndValue, SchemaAndValue]] = []
        if self._peek() == "}":
            self._pos += 1
            empty = SchemaBuilder.map(OPTIONAL_STRING_SCHEMA, OPTIONAL_STRING_SCHEMA).build()
            return SchemaAndValue(empty, {})
        while True:
            key = self.value()
            self._expect(":")
            entries.append((key, self.value()))
            if self._peek() == ",":
                self._pos += 1
                continue
            self._expect("}")
            break
        try:
            result = {key.value: item.value for key, item in entries}
        except TypeError:  # a list as a key
            raise _Malformed from None
        key_schema = _common_schema([k.schema for k, _ in entries], [k.value for k, _ in entries])
        value_schema = _common_schema([v.schema for _, v in entries],
                                      [v.value for _, v in entries])
        if key_schema is None or value_schema is None:
            return SchemaAndValue(None, result)
        return SchemaAndValue(SchemaBuilder.map(key_schema, value_schema).build(), result)

    def _quoted(self) -> str:
        self._expect('"')
        out: list[str] = []
        text = self._text
        while self._pos < len(text):
            char = text[self._pos]
            if char == "\\" and self._pos + 1 < len(text):
                out.append(text[self._pos + 1])
                self._pos += 2
            elif char == '"':
                self._pos += 1
                return "".join(out)
            else:
                out.append(char)
                self._pos += 1
        raise _Malformed

    def _bare(self) -> SchemaAndValue:
        start = self._pos
        text = self._text
        while self._pos < len(text) and text[self._pos] not in _DELIMITERS:
            self._pos += 1
        token = text[start:self._pos]
        if not token:
            raise _Malformed
        scalar = _scalar(token)
        return scalar if scalar is not None else SchemaAndValue(STRING_SCHEMA, token)


def _common_schema(schemas: list[Schema | None], values: list[Any]) -> Schema | None:
    """The schema every value fits: the shared one, the widest of mixed numbers; optional
    when a value is null. ``None`` when the values share none.
    """
    present = [s for s, v in zip(schemas, values, strict=True) if v is not None]
    has_null = len(present) < len(values)
    if not present:
        return OPTIONAL_STRING_SCHEMA
    if any(s is None for s in present):
        return None
    known: list[Schema] = [s for s in present if s is not None]
    first = known[0]
    if all(s == first for s in known):
        common = first
    elif all(s.type in _NUMERIC_ORDER and s.name is None for s in known):
        widest = max((s.type for s in known), key=_NUMERIC_ORDER.index)
        if widest.is_integer:
            common = _INTEGER_SCHEMAS[_NUMERIC_ORDER.index(widest)]
        else:
            common = FLOAT64_SCHEMA  # FLOAT64 values may be ints
    else:
        return None
    return common.with_optional(True) if has_null else common
