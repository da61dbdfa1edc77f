"""Schemas: the types of record keys, values and header values.

A :class:`Schema` is immutable and compared by value. Build one with :class:`SchemaBuilder`
or use the ready-made primitives (:data:`INT32_SCHEMA`, :data:`OPTIONAL_STRING_SCHEMA`, ...).
Logical types (:mod:`omconnect.data.logical`) are named schemas over a primitive, with the
names Kafka Connect uses so that wire formats stay compatible.
"""

from __future__ import annotations

import datetime as dt
import decimal
import enum
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from omconnect.data.logical_names import DATE, DECIMAL, TIME, TIMESTAMP
from omconnect.errors import DataError

__all__ = [
    "BOOLEAN_SCHEMA",
    "BYTES_SCHEMA",
    "FLOAT32_SCHEMA",
    "FLOAT64_SCHEMA",
    "INT8_SCHEMA",
    "INT16_SCHEMA",
    "INT32_SCHEMA",
    "INT64_SCHEMA",
    "OPTIONAL_BOOLEAN_SCHEMA",
    "OPTIONAL_BYTES_SCHEMA",
    "OPTIONAL_FLOAT32_SCHEMA",
    "OPTIONAL_FLOAT64_SCHEMA",
    "OPTIONAL_INT8_SCHEMA",
    "OPTIONAL_INT16_SCHEMA",
    "OPTIONAL_INT32_SCHEMA",
    "OPTIONAL_INT64_SCHEMA",
    "OPTIONAL_STRING_SCHEMA",
    "STRING_SCHEMA",
    "Field",
    "Schema",
    "StructValue",
    "Type",
    "validate_value",
]


class Type(enum.Enum):
    """The type of a schema. Primitive types carry a value directly; the rest nest."""

    INT8 = "int8"
    INT16 = "int16"
    INT32 = "int32"
    INT64 = "int64"
    FLOAT32 = "float32"
    FLOAT64 = "float64"
    BOOLEAN = "boolean"
    STRING = "string"
    BYTES = "bytes"
    ARRAY = "array"
    MAP = "map"
    STRUCT = "struct"

    @property
    def is_primitive(self) -> bool:
        """True for every type but ARRAY, MAP and STRUCT."""
        return self not in (Type.ARRAY, Type.MAP, Type.STRUCT)

    @property
    def is_integer(self) -> bool:
        """True for INT8, INT16, INT32 and INT64."""
        return self in _INTEGER_RANGES

    @classmethod
    def parse(cls, name: str) -> Type:
        """The type named ``name`` (case-insensitive), or a DataError listing the valid names."""
        try:
            return cls(name.lower())
        except ValueError:
            valid = ", ".join(t.value for t in cls)
            raise DataError(f"unknown schema type {name!r}; expected one of: {valid}") from None


_INTEGER_RANGES: dict[Type, tuple[int, int]] = {
    Type.INT8: (-(2**7), 2**7 - 1),
    Type.INT16: (-(2**15), 2**15 - 1),
    Type.INT32: (-(2**31), 2**31 - 1),
    Type.INT64: (-(2**63), 2**63 - 1),
}


@attrs.frozen(slots=True)
class Field:
    """A named, ordered field of a STRUCT schema.

    Attributes:
        name: The field name, unique within its struct.
        index: The field's position in the struct, from 0.
        schema: The field's schema.

    """

    name: str
    index: int
    schema: Schema


def _freeze_params(
    value: Mapping[str, str] | tuple[tuple[str, str], ...] | None,
) -> tuple[tuple[str, str], ...]:
    if isinstance(value, tuple):  # already frozen: attrs.evolve (with_optional) passes it on
        return tuple(sorted(value))
    return tuple(sorted((value or {}).items()))


@attrs.frozen(slots=True, kw_only=True, repr=False)
class Schema:
    """The schema of a value.

    Schemas are immutable and compare (and hash) by value. Prefer :class:`SchemaBuilder`
    over calling this constructor.

    Attributes:
        type: The schema's :class:`Type`.
        optional: Whether ``None`` is a valid value.
        default: The value used where none is given (already validated).
        name: A fully qualified name; logical types are identified by it.
        version: An optional version number.
        doc: Documentation.
        parameters: String parameters (logical types keep theirs here, e.g. a decimal's
            ``scale``).
        fields: The fields of a STRUCT, in order.
        key_schema: The key schema of a MAP.
        value_schema: The element schema of an ARRAY or the value schema of a MAP.

    """

    type: Type
    optional: bool = False
    default: Any = attrs.field(default=None, hash=False)
    name: str | None = None
    version: int | None = None
    doc: str | None = attrs.field(default=None, eq=False)
    _parameters: tuple[tuple[str, str], ...] = attrs.field(
        default=(), converter=_freeze_params, alias="parameters"
    )
    fields: tuple[Field, ...] = ()
    key_schema: Schema | None = None
    value_schema: Schema | None = None
    _field_index: dict[str, Field] = attrs.field(
        init=False, eq=False, hash=False, repr=False,
        default=attrs.Factory(lambda self: {f.name: f for f in self.fields}, takes_self=True),
    )

    def __attrs_post_init__(self) -> None:
        if self.type is Type.ARRAY and self.value_schema is None:
            raise DataError("an ARRAY schema needs a value (element) schema")
        if self.type is Type.MAP and (self.key_schema is None or self.value_schema is None):
            raise DataError("a MAP schema needs a key schema and a value schema")
        if self.type is not Type.STRUCT and self.fields:
            raise DataError(f"only STRUCT schemas have fields, not {self.type.value}")
        if len(self._field_index) != len(self.fields):
            raise DataError("a STRUCT schema has duplicate field names")

    @property
    def parameters(self) -> dict[str, str]:
        """The schema's parameters, as a new dict."""
        return dict(self._parameters)

    def field(self, name: str) -> Field:
        """The field called ``name`` of this STRUCT schema.

        Raises:
            DataError: The schema is not a STRUCT, or has no such field.

        """
        if self.type is not Type.STRUCT:
            raise DataError(f"cannot look up field {name!r} in a non-struct schema ({self})")
        try:
            return self._field_index[name]
        except KeyError:
            known = ", ".join(self._field_index) or "none"
            raise DataError(
                f"schema {self.name or 'struct'} has no field {name!r}; fields: {known}"
            ) from None

    def has_field(self, name: str) -> bool:
        """Whether this STRUCT schema has a field called ``name``."""
        return name in self._field_index

    def validate_value(self, value: Any, *, path: str = "") -> None:
        """Check that ``value`` is valid for this schema.

        Raises:
            DataError: The value does not match; the message names the path of the
                offending field (e.g. ``address.zip``).

        """
        validate_value(self, value, path=path)

    def with_optional(self, optional: bool = True) -> Schema:
        """A copy of this schema that is (or is not) optional."""
        return attrs.evolve(self, optional=optional)

    def __repr__(self) -> str:
        return f"Schema({self})"

    def __str__(self) -> str:
        parts = [self.type.value]
        if self.name:
            parts.append(f"name={self.name}")
        if self.optional:
            parts.append("optional")
        if self.type is Type.STRUCT:
            parts.append("{" + ", ".join(f"{f.name}: {f.schema}" for f in self.fields) + "}")
        elif self.type is Type.ARRAY:
            parts.append(f"<{self.value_schema}>")
        elif self.type is Type.MAP:
            parts.append(f"<{self.key_schema}, {self.value_schema}>")
        return " ".join(parts)


def _primitive(type_: Type, optional: bool = False) -> Schema:
    return Schema(type=type_, optional=optional)


INT8_SCHEMA = _primitive(Type.INT8)
INT16_SCHEMA = _primitive(Type.INT16)
INT32_SCHEMA = _primitive(Type.INT32)
INT64_SCHEMA = _primitive(Type.INT64)
FLOAT32_SCHEMA = _primitive(Type.FLOAT32)
FLOAT64_SCHEMA = _primitive(Type.FLOAT64)
BOOLEAN_SCHEMA = _primitive(Type.BOOLEAN)
STRING_SCHEMA = _primitive(Type.STRING)
BYTES_SCHEMA = _primitive(Type.BYTES)
OPTIONAL_INT8_SCHEMA = _primitive(Type.INT8, True)
OPTIONAL_INT16_SCHEMA = _primitive(Type.INT16, True)
OPTIONAL_INT32_SCHEMA = _primitive(Type.INT32, True)
OPTIONAL_INT64_SCHEMA = _primitive(Type.INT64, True)
OPTIONAL_FLOAT32_SCHEMA = _primitive(Type.FLOAT32, True)
OPTIONAL_FLOAT64_SCHEMA = _primitive(Type.FLOAT64, True)
OPTIONAL_BOOLEAN_SCHEMA = _primitive(Type.BOOLEAN, True)
OPTIONAL_STRING_SCHEMA = _primitive(Type.STRING, True)
OPTIONAL_BYTES_SCHEMA = _primitive(Type.BYTES, True)


def integer_range(type_: Type) -> tuple[int, int]:
    """The inclusive (min, max) range of an integer type."""
    return _INTEGER_RANGES[type_]


def struct_fields(fields: Sequence[tuple[str, Schema]]) -> tuple[Field, ...]:
    """Fields numbered in order from (name, schema) pairs."""
    return tuple(Field(name, i, schema) for i, (name, schema) in enumerate(fields))


class StructValue:
    """The base of the values of STRUCT schemas (:class:`~omconnect.data.struct.Struct`):
    what validation checks a STRUCT value against, below the module that defines it.
    """

    __slots__ = ()

    @property
    def schema(self) -> Schema:
        """The value's STRUCT schema."""
        raise NotImplementedError


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
    DECIMAL: decimal.Decimal,
    DATE: dt.date,
    TIME: dt.time,
    TIMESTAMP: dt.datetime,
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
        if not isinstance(value, StructValue):
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
