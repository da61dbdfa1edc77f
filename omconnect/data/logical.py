"""Logical types: Decimal, Date, Time and Timestamp.

Each is a named schema over a primitive, with the names Kafka Connect uses, so converters
stay wire-compatible with it. In memory the values are Python's own types:

=========  ==================================  =========  ==========================
logical    name                                primitive  Python value
=========  ==================================  =========  ==========================
Decimal    org.apache.kafka.connect.data.Decimal    BYTES  :class:`decimal.Decimal`
Date       org.apache.kafka.connect.data.Date       INT32  :class:`datetime.date`
Time       org.apache.kafka.connect.data.Time       INT32  :class:`datetime.time`
Timestamp  org.apache.kafka.connect.data.Timestamp  INT64  :class:`datetime.datetime` (UTC)
=========  ==================================  =========  ==========================

The encoded form (what converters put on the wire) is: Decimal, the big-endian two's
complement unscaled integer with the scale in the ``scale`` parameter; Date, days since the
Unix epoch; Time, milliseconds since midnight; Timestamp, milliseconds since the epoch.
"""

from __future__ import annotations

import datetime as dt
import decimal
from typing import Any

from omconnect.data.logical_names import DATE, DECIMAL, LOGICAL_NAMES, SCALE, TIME, TIMESTAMP
from omconnect.data.schema import Schema, Type
from omconnect.errors import DataError

__all__ = [
    "DATE",
    "DECIMAL",
    "LOGICAL_NAMES",
    "SCALE",
    "TIME",
    "TIMESTAMP",
    "date_schema",
    "decimal_schema",
    "from_logical",
    "time_schema",
    "timestamp_schema",
    "to_logical",
]


_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_EPOCH_DATE = dt.date(1970, 1, 1)


def decimal_schema(scale: int, *, optional: bool = False) -> Schema:
    """A Decimal schema with a fixed ``scale`` (digits after the point)."""
    return Schema(type=Type.BYTES, name=DECIMAL, version=1, optional=optional,
                  parameters={SCALE: str(scale)})


def date_schema(*, optional: bool = False) -> Schema:
    """A Date schema: a calendar day, no time of day."""
    return Schema(type=Type.INT32, name=DATE, version=1, optional=optional)


def time_schema(*, optional: bool = False) -> Schema:
    """A Time schema: a time of day to the millisecond, no date."""
    return Schema(type=Type.INT32, name=TIME, version=1, optional=optional)


def timestamp_schema(*, optional: bool = False) -> Schema:
    """A Timestamp schema: an instant to the millisecond."""
    return Schema(type=Type.INT64, name=TIMESTAMP, version=1, optional=optional)


def decimal_scale(schema: Schema) -> int:
    """The scale of a Decimal schema, or a DataError if it has none."""
    try:
        return int(schema.parameters[SCALE])
    except (KeyError, ValueError):
        raise DataError(f"Decimal schema {schema} has no integer '{SCALE}' parameter") from None


def _unscaled(value: decimal.Decimal, scale: int) -> int:
    """``value * 10**scale`` as an exact integer (no rounding: a lossy value is an error)."""
    if not value.is_finite():
        raise DataError(f"Decimal value {value} is not finite; only finite numbers can be encoded")
    sign, digits, exponent = value.as_tuple()
    assert isinstance(exponent, int)
    coefficient = int("".join(map(str, digits)) or "0")
    shift = exponent + scale
    unscaled: int
    if shift >= 0:
        unscaled = coefficient * 10**shift
    else:
        unscaled, dropped = divmod(coefficient, 10 ** (-shift))
        if dropped:
            raise DataError(
                f"Decimal value {value} has more than {scale} digits after the point (the "
                "schema's scale); round it first, e.g. with value.quantize()"
            )
    return -unscaled if sign else unscaled


def _decimal_from_unscaled(unscaled: int, scale: int) -> decimal.Decimal:
    """The exact decimal ``unscaled * 10**-scale`` (independent of the context precision)."""
    digits = tuple(int(d) for d in str(abs(unscaled)))
    return decimal.Decimal((1 if unscaled < 0 else 0, digits, -scale))


def to_logical(schema: Schema, encoded: Any) -> Any:
    """Decode the primitive ``encoded`` of a logical ``schema`` into its Python value.

    Non-logical schemas, and ``None``, pass through unchanged.
    """
    name = schema.name
    if encoded is None or name not in LOGICAL_NAMES:
        return encoded
    if name == DECIMAL:
        unscaled = int.from_bytes(bytes(encoded), "big", signed=True)
        return _decimal_from_unscaled(unscaled, decimal_scale(schema))
    if name == DATE:
        return _EPOCH_DATE + dt.timedelta(days=int(encoded))
    if name == TIME:
        ms = int(encoded)
        if not 0 <= ms < 86_400_000:
            raise DataError(f"Time value {ms} is outside 0..86399999 milliseconds")
        return (dt.datetime.min + dt.timedelta(milliseconds=ms)).time()
    return _EPOCH + dt.timedelta(milliseconds=int(encoded))


def from_logical(schema: Schema, value: Any) -> Any:
    """Encode the Python ``value`` of a logical ``schema`` into its primitive form.

    Non-logical schemas, and ``None``, pass through unchanged.

    Raises:
        DataError: The value is not of the logical type's Python type.

    """
    name = schema.name
    if value is None or name not in LOGICAL_NAMES:
        return value
    if name == DECIMAL:
        if not isinstance(value, decimal.Decimal):
            raise DataError(f"Decimal schema needs a decimal.Decimal, got {type(value).__name__}")
        unscaled = _unscaled(value, decimal_scale(schema))
        # Minimal two's complement, as Java's BigInteger.toByteArray() writes it.
        magnitude = unscaled if unscaled >= 0 else ~unscaled
        return unscaled.to_bytes(magnitude.bit_length() // 8 + 1, "big", signed=True)
    if name == DATE:
        if not isinstance(value, dt.date) or isinstance(value, dt.datetime):
            raise DataError(f"Date schema needs a datetime.date, got {type(value).__name__}")
        return (value - _EPOCH_DATE).days
    if name == TIME:
        if not isinstance(value, dt.time):
            raise DataError(f"Time schema needs a datetime.time, got {type(value).__name__}")
        return ((value.hour * 60 + value.minute) * 60 + value.second) * 1000 + (
            value.microsecond // 1000
        )
    if not isinstance(value, dt.datetime):
        raise DataError(f"Timestamp schema needs a datetime.datetime, got {type(value).__name__}")
    aware = value if value.tzinfo else value.replace(tzinfo=dt.UTC)
    delta = aware - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1000 + delta.microseconds // 1000
