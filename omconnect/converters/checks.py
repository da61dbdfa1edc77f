"""What the converters share: the check before writing a value, the prefix of their
settings in a worker or connector config.
"""

from __future__ import annotations

from typing import Any

from omconnect.data.schema import Schema, Type, validate_value
from omconnect.data.struct import Struct
from omconnect.errors import DataError

__all__ = ["check_value", "role_prefix"]


def check_value(schema: Schema, value: Any) -> None:
    """Check a non-null ``value`` against the record's ``schema`` before converting it.

    A Struct validated its fields when they were set, so only its schema is compared
    (by identity first: cheap for the usual batch of records sharing one schema); any
    other value is validated in full.

    Raises:
        DataError: The value does not match the schema.

    """
    if schema.type is Type.STRUCT:
        if not isinstance(value, Struct):
            raise DataError(f"a struct schema needs a Struct value, got {type(value).__name__}")
        if value.schema is not schema and value.schema != schema:
            raise DataError(
                f"the Struct's schema ({value.schema}) is not the record's schema ({schema})"
            )
        return
    validate_value(schema, value)


def role_prefix(is_key: bool | None) -> str:
    """How a converter's settings are written in a config, for error messages:
    ``key.converter.``, ``value.converter.``, or ``header.converter.`` when ``is_key`` is
    ``None`` (a converter configured as a header converter, Kafka Connect's
    ``converter.type=header``).
    """
    if is_key is None:
        return "header.converter."
    return "key.converter." if is_key else "value.converter."
