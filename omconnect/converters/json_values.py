"""Values between Connect form and JSON form, as Kafka Connect's JsonConverter maps them.

Each schema is compiled once into a pair of functions (:func:`compile_encoder`,
:func:`compile_decoder`); a record then costs one call per field instead of a walk over the
schema. The JSON form is Python's: ``dict``, ``list``, ``str``, ``int``, ``float``,
``bool``, ``None`` (and :class:`decimal.Decimal` for a NUMERIC decimal, written by
:func:`dumps_exact`).

The mapping (Kafka Connect's):

* integers, floats, booleans and strings are JSON scalars; a non-finite float is written as
  the string ``"NaN"``, ``"Infinity"`` or ``"-Infinity"`` (as Jackson writes it) and read back
  from it;
* bytes are a base64 string;
* an array is a JSON array; a map whose key schema is STRING is a JSON object, any other map
  an array of ``[key, value]`` pairs;
* a struct is a JSON object with one member per field, in field order;
* Decimal is the base64 of its unscaled two's-complement bytes (``decimal.format=BASE64``)
  or a JSON number (``NUMERIC``); either is accepted when reading. Date is days since the
  epoch, Time milliseconds since midnight, Timestamp milliseconds since the epoch.
* a null takes the schema's default when it has one (``replace.null.with.default``), stays
  null when the schema is optional, and is an error otherwise.
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import decimal
import json
import math
from collections.abc import Callable, Mapping
from typing import Any

import attrs

from omconnect.converters.encoders import Encode, identity, struct_encoder, where, with_nulls
from omconnect.data import logical
from omconnect.data.schema import Schema, Type, integer_range
from omconnect.data.struct import Struct
from omconnect.errors import DataError

__all__ = [
    "JsonOptions",
    "compile_decoder",
    "compile_encoder",
    "decode_schemaless",
    "dumps_exact",
    "encode_schemaless",
    "schema_has_numeric_decimal",
]

Decode = Callable[[Any], Any]

_NON_FINITE_TEXT = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}
_BYTES_TYPES = (bytes, bytearray, memoryview)


@attrs.frozen(kw_only=True)
class JsonOptions:
    """How values are encoded.

    Attributes:
        decimal_numeric: Write Decimals as JSON numbers rather than base64 bytes.
        replace_null_with_default: Write (and read) a null as the schema's default value
            when the schema has one.

    """

    decimal_numeric: bool = False
    replace_null_with_default: bool = True


# -- encoding: Connect -> JSON ----------------------------------------------------------


def compile_encoder(schema: Schema, options: JsonOptions, path: str = "") -> Encode:
    """A function from a Connect value of ``schema`` (``None`` included) to its JSON form.

    The values are trusted to match the schema (structs validate on ``put``); only nulls
    of required fields, and types a struct could not have checked, are checked here.

    Args:
        schema: The schema of the values.
        options: The encoding options.
        path: Where the values sit, for error messages.

    """
    return with_nulls(schema, _value_encoder(schema, options, path), path,
                      use_default=options.replace_null_with_default)


def _value_encoder(schema: Schema, options: JsonOptions, path: str) -> Encode | None:
    """The encoder of non-null values, or ``None`` when the value is its own JSON form."""
    name = schema.name
    if name == logical.DECIMAL:
        logical.decimal_scale(schema)  # fails now, naming the schema, if it has no scale
        if options.decimal_numeric:
            return lambda value: _decimal_number(schema, value)
        return lambda value: _b64(logical.from_logical(schema, value))
    if name in (logical.DATE, logical.TIME, logical.TIMESTAMP):
        return lambda value: logical.from_logical(schema, value)
    type_ = schema.type
    if type_ is Type.BYTES:
        return _b64
    if type_ is Type.ARRAY:
        assert schema.value_schema is not None
        element = compile_encoder(schema.value_schema, options, f"{path}[]")
        if element is identity:
            return None
        return lambda value: [element(item) for item in value]
    if type_ is Type.MAP:
        return _map_encoder(schema, options, path)
    if type_ is Type.STRUCT:
        return _struct_encoder(schema, options, path)
    return None


def _map_encoder(schema: Schema, options: JsonOptions, path: str) -> Encode:
    assert schema.key_schema is not None and schema.value_schema is not None
    encode_value = compile_encoder(schema.value_schema, options, f"{path}{{}}")
    if schema.key_schema.type is Type.STRING:
        if encode_value is identity:
            return lambda value: value if type(value) is dict else dict(value)
        return lambda value: {key: encode_value(item) for key, item in value.items()}
    encode_key = compile_encoder(schema.key_schema, options, f"{path}{{key}}")
    return lambda value: [[encode_key(key), encode_value(item)] for key, item in value.items()]


def _struct_encoder(schema: Schema, options: JsonOptions, path: str) -> Encode:
    return struct_encoder(
        schema, path, lambda field, at: compile_encoder(field, options, at),
        lambda field, at: _value_encoder(field, options, at) is not None)


def _b64(value: Any) -> str:
    return base64.b64encode(value).decode("ascii")


def _decimal_number(schema: Schema, value: Any) -> decimal.Decimal:
    """``value`` with exactly the schema's scale (a JSON number with that many digits after
    the point), checked as for BASE64: more digits than the scale is an error.
    """
    return logical.to_logical(schema, logical.from_logical(schema, value))  # type: ignore[no-any-return]


def encode_schemaless(value: Any, struct_encoder: Callable[[Schema], Encode]) -> Any:
    """The JSON form of a value that has no schema (Kafka Connect infers the type from the
    value's class): scalars as themselves, bytes as base64, lists as arrays, mappings with
    only string keys as objects and other mappings as arrays of ``[key, value]``.

    A :class:`Struct` carries its own schema and is encoded with it.

    Raises:
        DataError: A value of a type with no JSON form without a schema (e.g. a
            ``decimal.Decimal`` or ``datetime``: they need a logical schema).

    """
    cls = value.__class__
    if value is None or cls is str or cls is int or cls is float or cls is bool:
        return value
    if isinstance(value, (list, tuple)):
        return [encode_schemaless(item, struct_encoder) for item in value]
    if isinstance(value, Mapping):
        if all(type(key) is str for key in value):
            return {key: encode_schemaless(item, struct_encoder) for key, item in value.items()}
        return [
            [encode_schemaless(key, struct_encoder), encode_schemaless(item, struct_encoder)]
            for key, item in value.items()
        ]
    if isinstance(value, _BYTES_TYPES):
        return _b64(value)
    if isinstance(value, Struct):
        return struct_encoder(value.schema)(value)
    if isinstance(value, (str, int, float)):  # subclasses (bool is handled above)
        return value
    if isinstance(value, (decimal.Decimal, dt.date, dt.time)):
        raise DataError(
            f"a {type(value).__name__} has no JSON form without a schema; give the record "
            "a logical schema (decimal_schema, date_schema, time_schema, timestamp_schema)"
        )
    raise DataError(f"cannot convert a {type(value).__name__} to JSON without a schema")


# -- writing JSON text -----------------------------------------------------------------

_ENCODE_STRING = json.encoder.encode_basestring


def dumps_exact(value: Any) -> str:
    """Compact JSON text of ``value`` where :class:`decimal.Decimal` values are written as
    JSON numbers and non-finite floats as the strings ``"NaN"``, ``"Infinity"``,
    ``"-Infinity"`` (Jackson's default).

    Slower than :mod:`json`; converters use it only for values the fast encoder refuses.
    """
    parts: list[str] = []
    _dump(value, parts.append)
    return "".join(parts)


def _dump(value: Any, out: Callable[[str], Any]) -> None:
    if value is None:
        out("null")
    elif value is True:
        out("true")
    elif value is False:
        out("false")
    elif isinstance(value, str):
        out(_ENCODE_STRING(value))
    elif isinstance(value, int):
        out(int.__repr__(value))
    elif isinstance(value, float):
        if math.isfinite(value):
            out(float.__repr__(value))
        else:
            out('"NaN"' if math.isnan(value) else '"Infinity"' if value > 0 else '"-Infinity"')
    elif isinstance(value, decimal.Decimal):
        out(str(value))
    elif isinstance(value, dict):
        out("{")
        first = True
        for key, item in value.items():
            if not first:
                out(",")
            first = False
            out(_ENCODE_STRING(str(key)))
            out(":")
            _dump(item, out)
        out("}")
    elif isinstance(value, (list, tuple)):
        out("[")
        for index, item in enumerate(value):
            if index:
                out(",")
            _dump(item, out)
        out("]")
    else:
        raise DataError(f"cannot write a {type(value).__name__} as JSON")


def schema_has_numeric_decimal(schema: Schema) -> bool:
    """Whether ``schema`` contains a Decimal anywhere (written as a number in NUMERIC mode)."""
    if schema.name == logical.DECIMAL:
        return True
    nested = [f.schema for f in schema.fields]
    nested += [s for s in (schema.key_schema, schema.value_schema) if s is not None]
    return any(schema_has_numeric_decimal(s) for s in nested)


# -- decoding: JSON -> Connect ----------------------------------------------------------


def compile_decoder(schema: Schema, options: JsonOptions, path: str = "") -> Decode:
    """A function from the JSON form of a value of ``schema`` (``None`` included) to its
    Connect value, checking it against the schema.

    Raises (from the returned function):
        DataError: The JSON value does not match the schema; the message names the field
            path and what was expected.

    """
    decode_value = _value_decoder(schema, options, path)
    if schema.default is not None and options.replace_null_with_default:
        default = schema.default

        def decode_or_default(value: Any) -> Any:
            return default if value is None else decode_value(value)

        return decode_or_default
    if schema.optional:

        def decode_optional(value: Any) -> Any:
            return None if value is None else decode_value(value)

        return decode_optional
    at = where(path)

    def decode_required(value: Any) -> Any:
        if value is None:
            raise DataError(f"null value for required {schema.type.value} field{at}")
        return decode_value(value)

    return decode_required


def _value_decoder(schema: Schema, options: JsonOptions, path: str) -> Decode:
    name = schema.name
    if name == logical.DECIMAL:
        return _decimal_decoder(schema, path)
    if name in (logical.DATE, logical.TIME, logical.TIMESTAMP):
        return _temporal_decoder(schema, path)
    type_ = schema.type
    if type_.is_integer:
        return _integer_decoder(type_, path)
    if type_ in (Type.FLOAT32, Type.FLOAT64):
        return lambda value: _float(value, path)
    if type_ is Type.BOOLEAN:
        return lambda value: value if value is True or value is False else _mismatch(
            "a boolean", value, path)
    if type_ is Type.STRING:
        return lambda value: value if type(value) is str else _mismatch("a string", value, path)
    if type_ is Type.BYTES:
        return lambda value: _unbase64(value, path)
    if type_ is Type.ARRAY:
        assert schema.value_schema is not None
        element = compile_decoder(schema.value_schema, options, f"{path}[]")

        def decode_array(value: Any) -> Any:
            if type(value) is not list:
                _mismatch("an array", value, path)
            return [element(item) for item in value]

        return decode_array
    if type_ is Type.MAP:
        return _map_decoder(schema, options, path)
    return _struct_decoder(schema, options, path)


def _integer_decoder(type_: Type, path: str) -> Decode:
    low, high = integer_range(type_)

    def decode_integer(value: Any) -> Any:
        if type(value) is int and low <= value <= high:
            return value
        if isinstance(value, (float, decimal.Decimal)) and value == int(value):
            value = int(value)
        if type(value) is not int:
            _mismatch(f"an integer ({type_.value})", value, path)
        if not low <= value <= high:
            raise DataError(f"{value} is out of range for {type_.value} ({low}..{high})"
                            f"{where(path)}")
        return value

    return decode_integer


def _float(value: Any, path: str) -> float:
    cls = type(value)
    if cls is float:
        return value  # type: ignore[no-any-return]
    if cls is int or cls is decimal.Decimal:
        return float(value)
    if cls is str and value in _NON_FINITE_TEXT:
        return _NON_FINITE_TEXT[value]
    return _mismatch("a number", value, path)  # type: ignore[no-any-return]


def _unbase64(value: Any, path: str) -> bytes:
    if type(value) is not str:
        _mismatch("a base64 string", value, path)
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise DataError(f"invalid base64 for a bytes value{where(path)}: {value[:40]!r}"
                        ) from None


def _decimal_decoder(schema: Schema, path: str) -> Decode:
    exponent = f"E{-logical.decimal_scale(schema)}"

    def decode_decimal(value: Any) -> Any:
        cls = type(value)
        if cls is decimal.Decimal:
            return value
        if cls is int:
            return decimal.Decimal(value)
        if cls is float:
            return decimal.Decimal(repr(value))
        if cls is str:
            unscaled = int.from_bytes(_unbase64(value, path), "big", signed=True)
            # From text, a Decimal is exact whatever the context's precision.
            return decimal.Decimal(f"{unscaled}{exponent}")
        return _mismatch("a number or base64 string (Decimal)", value, path)

    return decode_decimal


def _temporal_decoder(schema: Schema, path: str) -> Decode:
    what = (schema.name or "").rsplit(".", 1)[-1]

    def decode_temporal(value: Any) -> Any:
        if type(value) is not int:
            _mismatch(f"an integer ({what})", value, path)
        try:
            return logical.to_logical(schema, value)
        except (OverflowError, ValueError) as exc:
            raise DataError(f"{value} is not a valid {what}{where(path)}: {exc}") from None

    return decode_temporal


def _map_decoder(schema: Schema, options: JsonOptions, path: str) -> Decode:
    assert schema.key_schema is not None and schema.value_schema is not None
    decode_value = compile_decoder(schema.value_schema, options, f"{path}{{}}")
    if schema.key_schema.type is Type.STRING:

        def decode_object(value: Any) -> Any:
            if type(value) is not dict:
                _mismatch("an object (map with string keys)", value, path)
            return {key: decode_value(item) for key, item in value.items()}

        return decode_object
    decode_key = compile_decoder(schema.key_schema, options, f"{path}{{key}}")

    def decode_pairs(value: Any) -> Any:
        if type(value) is not list:
            _mismatch("an array of [key, value] pairs (map with non-string keys)", value, path)
        result = {}
        for entry in value:
            if type(entry) is not list or len(entry) != 2:
                _mismatch("a [key, value] pair", entry, path)
            key = decode_key(entry[0])
            item = decode_value(entry[1])
            try:
                result[key] = item
            except TypeError:
                raise DataError(f"map key {key!r} is not hashable{where(path)}") from None
        return result

    return decode_pairs


def _struct_decoder(schema: Schema, options: JsonOptions, path: str) -> Decode:
    """A struct decoder generated for ``schema``: for each field an inline type check
    (the common case, a value already of the right Python type) with the field's full
    decoder as fallback, which handles nulls, defaults, coercions and errors. Generated
    because one function call per field is most of the cost of reading a record.
    """
    prefix = f"{path}." if path else ""
    namespace: dict[str, Any] = {
        "from_values": Struct.from_values,
        "schema": schema,
        "mismatch": _mismatch,
        "expected": f"an object ({schema.name or 'struct'})",
        "path": path,
    }
    lines = [
        "def decode_struct(value):",
        "    if type(value) is not dict:",
        "        mismatch(expected, value, path)",
        "    get = value.get",
    ]
    for index, field in enumerate(schema.fields):
        namespace[f"decode_{index}"] = compile_decoder(field.schema, options,
                                                       prefix + field.name)
        guard = _decode_guard(field.schema, f"v{index}")
        lines.append(f"    v{index} = get({field.name!r})")
        if guard:
            lines.append(f"    if not ({guard}):")
            lines.append(f"        v{index} = decode_{index}(v{index})")
        else:
            lines.append(f"    v{index} = decode_{index}(v{index})")
    values = ", ".join(f"v{index}" for index in range(len(schema.fields)))
    lines.append(f"    return from_values(schema, [{values}], validate=False)")
    exec("\n".join(lines), namespace)  # the source is built above from reprs only
    decode: Decode = namespace["decode_struct"]
    return decode


def _decode_guard(schema: Schema, var: str) -> str | None:
    """A Python expression true when ``var`` is already a valid Connect value of
    ``schema`` (so no decoding is needed), or ``None`` when there is no such shortcut.
    """
    if schema.name in logical.LOGICAL_NAMES:
        return None
    type_ = schema.type
    if type_.is_integer:
        low, high = integer_range(type_)
        return f"type({var}) is int and {low} <= {var} <= {high}"
    if type_ in (Type.FLOAT32, Type.FLOAT64):
        return f"type({var}) is float"
    if type_ is Type.BOOLEAN:
        return f"{var} is True or {var} is False"
    if type_ is Type.STRING:
        return f"type({var}) is str"
    return None


def decode_schemaless(value: Any) -> Any:
    """The Connect value of schemaless JSON: objects become dicts (maps), arrays lists,
    and numbers parsed as :class:`decimal.Decimal` become floats.
    """
    cls = type(value)
    if cls is decimal.Decimal:
        return float(value)
    if cls is list:
        return [decode_schemaless(item) for item in value]
    if cls is dict:
        return {key: decode_schemaless(item) for key, item in value.items()}
    return value


def _mismatch(expected: str, value: Any, path: str) -> Any:
    raise DataError(f"expected {expected}{where(path)}, got {_describe(value)}")


def _describe(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, (int, float, decimal.Decimal)):
        return f"the number {value}"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        return f"the string {shown!r}"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


