"""Validation of values against schemas."""

from __future__ import annotations

import datetime as dt
import decimal
from collections.abc import Mapping
from typing import Any

from omconnect.data import logical
from omconnect.data.schema import Schema, Type, integer_range
from omconnect.errors import DataError

__all__ = ["validate_value"]

_PYTHON_TYPES: dict[Type, tuple[type, ...]] = {
    Type.FLOAT32: (float, int),
    Type.FLOAT64: (float, int),
    Type.BOOLEAN: (bool,),
    Type.STRING: (str,),
    Type.BYTES: (bytes, bytearray, memoryview),
    Type.ARRAY: (list, tuple),
    Type.MAP: (Mapping,),
}

_LOGICAL_TYPES: dict[str, type] = {
    logical.DECIMAL: decimal.Decimal,
    logical.DATE: dt.date,
    logical.TIME: dt.time,
    logical.TIMESTAMP: dt.datetime,
}


def _where(path: str) -> str:
    return f" at {path}" if path else ""


def validate_value(schema: Schema, value: Any, *, path: str = "") -> None:
    """Check ``value`` against ``schema``, recursively.

    Args:
        schema: The schema the value claims to have.
        value: The value.
        path: Where the value sits (for the error message), e.g. ``"order.lines[2]"``.

    Raises:
        DataError: The value is not valid; the message names the path and the expected type.

    """
    if value is None:
        if schema.optional or schema.default is not None:
            return
        raise DataError(f"missing value for required {schema.type.value} schema{_where(path)}")
    if schema.name in _LOGICAL_TYPES:
        expected = _LOGICAL_TYPES[schema.name]
        ok = isinstance(value, expected) and not (
            expected is dt.date and isinstance(value, dt.datetime)
        )
        if not ok:
            raise DataError(
                f"logical type {schema.name.rsplit('.', 1)[-1]} needs a {expected.__name__}, "
                f"got {type(value).__name__}{_where(path)}"
            )
        return
    type_ = schema.type
    if type_.is_integer:
        if not isinstance(value, int) or isinstance(value, bool):
            raise DataError(f"{type_.value} schema needs an int, got {type(value).__name__}"
                            f"{_where(path)}")
        low, high = integer_range(type_)
        if not low <= value <= high:
            raise DataError(f"{value} is out of range for {type_.value} ({low}..{high})"
                            f"{_where(path)}")
        return
    if type_ is Type.STRUCT:
        from omconnect.data.struct import Struct

        if not isinstance(value, Struct):
            raise DataError(f"struct schema needs a Struct, got {type(value).__name__}"
                            f"{_where(path)}")
        if value.schema is not schema and value.schema != schema:
            raise DataError(f"Struct has schema {value.schema}, expected {schema}{_where(path)}")
        return
    expected_types = _PYTHON_TYPES[type_]
    if not isinstance(value, expected_types) or (
        type_ in (Type.FLOAT32, Type.FLOAT64) and isinstance(value, bool)
    ):
        names = " or ".join(t.__name__ for t in expected_types)
        raise DataError(f"{type_.value} schema needs {names}, got {type(value).__name__}"
                        f"{_where(path)}")
    if isinstance(value, (list, tuple)):
        element = schema.value_schema
        assert element is not None
        for i, item in enumerate(value):
            validate_value(element, item, path=f"{path}[{i}]")
    elif isinstance(value, Mapping):
        key_schema, value_schema = schema.key_schema, schema.value_schema
        assert key_schema is not None and value_schema is not None
        for k, v in value.items():
            validate_value(key_schema, k, path=f"{path}{{key {k!r}}}")
            validate_value(value_schema, v, path=f"{path}[{k!r}]")
