"""Struct: a value of a STRUCT schema, and SchemaAndValue."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import attrs

from omconnect.data.schema import Schema, StructValue, Type, validate_value
from omconnect.errors import DataError

__all__ = ["SchemaAndValue", "Struct"]

_UNSET: Any = object()


class Struct(StructValue):
    """A value of a STRUCT schema: named fields, each validated against its field schema.

    Every :meth:`put` is validated at once; :meth:`validate` checks that every required
    field is set. Two structs are equal when their schemas and values are.

    Args:
        schema: A STRUCT schema.
        values: Initial field values by name (each validated as by :meth:`put`).

    Raises:
        DataError: ``schema`` is not a STRUCT, or a value does not match its field.

    """

    __slots__ = ("_schema", "_values")

    def __init__(self, schema: Schema, values: Mapping[str, Any] | None = None) -> None:
        if schema.type is not Type.STRUCT:
            raise DataError(f"a Struct needs a STRUCT schema, got {schema}")
        self._schema = schema
        self._values: list[Any] = [_UNSET] * len(schema.fields)
        if values:
            for name, value in values.items():
                self.put(name, value)

    @property
    def schema(self) -> Schema:
        """The struct's schema."""
        return self._schema

    @classmethod
    def from_values(
        cls, schema: Schema, values: Sequence[Any], *, validate: bool = True
    ) -> Struct:
        """A struct from one value per field, in the order of ``schema.fields``.

        This is the fast way to build a struct from another (transforms and converters
        use it on their hot path): no per-name lookups.

        Args:
            schema: A STRUCT schema.
            values: One value per field, in field order (``None`` for a null).
            validate: Check each value against its field schema, as :meth:`put` does.
                Pass ``False`` only when every value is known to be valid already, e.g.
                copied from a struct whose field has the same schema.

        Raises:
            DataError: ``schema`` is not a STRUCT, the number of values differs from the
                number of fields, or (when validating) a value does not match its field.

        """
        if schema.type is not Type.STRUCT:
            raise DataError(f"a Struct needs a STRUCT schema, got {schema}")
        fields = schema.fields
        if len(values) != len(fields):
            raise DataError(
                f"{len(values)} values given for the {len(fields)} fields of "
                f"{schema.name or 'struct'}"
            )
        if validate:
            for field, value in zip(fields, values, strict=True):
                validate_value(field.schema, value, path=field.name)
        struct = cls.__new__(cls)
        struct._schema = schema
        struct._values = list(values)
        return struct

    def values(self) -> list[Any]:
        """Every field's value in schema order, defaults filled in (a new list)."""
        values = self._values
        if _UNSET not in values:  # every field set: the common case, a plain copy
            return values.copy()
        return [
            field.schema.default if value is _UNSET else value
            for field, value in zip(self._schema.fields, values, strict=True)
        ]

    def put(self, name: str, value: Any) -> Struct:
        """Set field ``name`` to ``value`` after validating it; returns self for chaining.

        Raises:
            DataError: No such field, or the value does not match the field's schema.

        """
        field = self._schema.field(name)
        validate_value(field.schema, value, path=name)
        self._values[field.index] = value
        return self

    def get(self, name: str) -> Any:
        """The value of field ``name``, or the field's default when it was not set.

        Raises:
            DataError: No such field.

        """
        field = self._schema.field(name)
        value = self._values[field.index]
        return field.schema.default if value is _UNSET else value

    def __getitem__(self, name: str) -> Any:
        return self.get(name)

    def validate(self) -> None:
        """Check that every required field without a default has a value, in this struct
        and in every struct nested in it (directly, or in arrays and maps).

        Raises:
            DataError: Naming the first missing field.

        """
        for field in self._schema.fields:
            value = self._values[field.index]
            if value is _UNSET or value is None:
                if not field.schema.optional and field.schema.default is None:
                    raise DataError(
                        f"required field {field.name!r} of {self._schema.name or 'struct'} "
                        "has no value"
                    )
            elif not field.schema.type.is_primitive:
                _validate_nested(value)

    def items(self) -> Iterator[tuple[str, Any]]:
        """(name, value) for every field, in schema order, defaults filled in."""
        for field in self._schema.fields:
            yield field.name, self.get(field.name)

    def to_dict(self) -> dict[str, Any]:
        """The fields as a dict, nested structs converted too."""
        return {
            name: value.to_dict() if isinstance(value, Struct) else value
            for name, value in self.items()
        }

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Struct):
            return NotImplemented
        return self._schema == other._schema and dict(self.items()) == dict(other.items())

    def __hash__(self) -> int:
        return hash((self._schema, tuple(repr(v) for _, v in self.items())))

    def __repr__(self) -> str:
        body = ", ".join(f"{k}={v!r}" for k, v in self.items())
        return f"Struct{{{body}}}"


def _validate_nested(value: Any) -> None:
    """Validate the structs inside ``value`` (a struct, or an array or map holding some)."""
    if isinstance(value, Struct):
        value.validate()
    elif isinstance(value, (list, tuple)):
        for item in value:
            _validate_nested(item)
    elif isinstance(value, Mapping):
        for key, item in value.items():
            _validate_nested(key)
            _validate_nested(item)


@attrs.frozen(slots=True)
class SchemaAndValue:
    """A value with its schema (either may be ``None``: a schemaless value, a null)."""

    schema: Schema | None
    value: Any

