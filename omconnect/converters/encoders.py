"""What the JSON and Avro value encoders are built from: a schema's nulls
(:func:`with_nulls`: its default, optional or required) and a struct's fields
(:func:`struct_encoder`).

An encoder is compiled once per schema and called once per value; the pieces here build
the same closures each converter built for itself, so sharing them costs nothing per
value. A value encoder of ``None`` means "the value is its own encoded form".
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from omconnect.data.schema import Schema
from omconnect.data.struct import Struct
from omconnect.errors import DataError

__all__ = ["Encode", "identity", "struct_encoder", "where", "with_nulls"]

Encode = Callable[[Any], Any]
"""A compiled encoder: a value of one schema to its encoded form."""


def identity(value: Any) -> Any:
    """The value itself: the encoder of an optional value that is its own form."""
    return value


def where(path: str) -> str:
    """`` at <path>`` for an error message, or nothing at the top level."""
    return f" at {path}" if path else ""


def with_nulls(schema: Schema, encode_value: Encode | None, path: str, *,
               use_default: bool = True) -> Encode:
    """The encoder of every value of ``schema``, ``None`` included.

    Args:
        schema: The schema of the values.
        encode_value: The encoder of non-null values (``None``: a value is its own form).
        path: Where the values sit, for error messages.
        use_default: Whether a null becomes the schema's default, when it has one.

    Returns:
        An encoder that gives a null the encoded default (where used), ``None`` for an
        optional schema, and otherwise raises :class:`~omconnect.errors.DataError`
        naming the field; for an optional schema whose values are their own form, the
        shared :func:`identity`.

    """
    if schema.default is not None and use_default:
        default = schema.default if encode_value is None else encode_value(schema.default)

        def encode_or_default(value: Any) -> Any:
            if value is None:
                return default
            return value if encode_value is None else encode_value(value)

        return encode_or_default
    if schema.optional:
        if encode_value is None:
            return identity

        def encode_optional(value: Any) -> Any:
            return None if value is None else encode_value(value)

        return encode_optional
    at = where(path)

    def encode_required(value: Any) -> Any:
        if value is None:
            raise DataError(f"null value for required {schema.type.value} field{at} that "
                            "has no default; set a value or make the schema optional")
        return value if encode_value is None else encode_value(value)

    return encode_required


def struct_encoder(schema: Schema, path: str, field_encoder: Callable[[Schema, str], Encode],
                   converts: Callable[[Schema, str], bool]) -> Encode:
    """The encoder of a struct's non-null values: a dict of its fields' encoded values.

    Args:
        schema: The struct schema.
        path: Where the struct sits (its fields are at ``path.field``).
        field_encoder: A field's whole encoder (nulls included), from its schema and path.
        converts: Whether a field's non-null values need encoding (are not their own
            form); fields that do not are copied as they are when the struct has no null.

    """
    prefix = f"{path}." if path else ""
    names = tuple(field.name for field in schema.fields)
    encoders = tuple(field_encoder(field.schema, prefix + field.name) for field in schema.fields)
    converting = tuple(
        (index, encoder)
        for index, (field, encoder) in enumerate(zip(schema.fields, encoders, strict=True))
        if converts(field.schema, prefix + field.name)
    )
    what = schema.name or "struct"
    at = where(path)

    def encode_struct(value: Any) -> Any:
        if not isinstance(value, Struct):
            raise DataError(f"{what} schema needs a Struct{at}, got {type(value).__name__}")
        values = value.values()
        if None in values:  # nulls: defaults, or errors for required fields
            return {name: encode(item)
                    for name, encode, item in zip(names, encoders, values, strict=True)}
        for index, encode in converting:
            values[index] = encode(values[index])
        return dict(zip(names, values, strict=True))

    return encode_struct
