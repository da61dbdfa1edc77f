"""The Arrow type of a Connect schema, and Connect values in the form Arrow takes them.

Where records of one schema become a column (a batch sink fed record by record), the
column gets the schema's type rather than what Arrow would infer from the values, so a
batch sink sees the same types whichever path a batch took:

==================  =====================================================
Connect             Arrow
==================  =====================================================
INT8 .. INT64       int8 .. int64
FLOAT32, FLOAT64    float32, float64
BOOLEAN, STRING     bool, string
BYTES               binary
ARRAY, MAP          list, map (Arrow map keys are never null: a null key fails the values)
STRUCT              struct, every field nullable, in schema order
Decimal             decimal128(precision, scale): precision from the
                    ``connect.decimal.precision`` parameter (at most 38), else 38
Date                date32
Time                time64[us]
Timestamp           timestamp[us, tz=UTC]
==================  =====================================================
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any

import pyarrow as pa

from omconnect.data.logical import DATE, DECIMAL, SCALE, TIME, TIMESTAMP
from omconnect.data.schema import Schema, Type
from omconnect.data.struct import Struct

__all__ = ["DECIMAL_PRECISION", "arrow_type_of", "arrow_value"]

DECIMAL_PRECISION = "connect.decimal.precision"
"""The Decimal schema parameter holding its precision (Kafka Connect's Avro converter)."""

_PRIMITIVES = {
    Type.INT8: pa.int8(), Type.INT16: pa.int16(), Type.INT32: pa.int32(),
    Type.INT64: pa.int64(), Type.FLOAT32: pa.float32(), Type.FLOAT64: pa.float64(),
    Type.BOOLEAN: pa.bool_(), Type.STRING: pa.string(), Type.BYTES: pa.binary(),
}


def arrow_type_of(schema: Schema, time_type: pa.DataType | None = None
                  ) -> pa.DataType | None:
    """The Arrow type of values of ``schema`` (see the module docstring), or ``None``
    where there is none. ``time_type`` replaces Time's ``time64[us]`` (a sink whose
    storage has no time-of-day type writes Times as text, say).
    """
    name = schema.name
    if name == DECIMAL:
        precision = int(schema.parameters.get(DECIMAL_PRECISION, 38))
        return pa.decimal128(min(precision, 38), int(schema.parameters.get(SCALE, "0")))
    if name == DATE:
        return pa.date32()
    if name == TIME:
        return pa.time64("us") if time_type is None else time_type
    if name == TIMESTAMP:
        return pa.timestamp("us", tz="UTC")
    kind = schema.type
    primitive = _PRIMITIVES.get(kind)
    if primitive is not None:
        return primitive
    if kind is Type.ARRAY:
        assert schema.value_schema is not None
        item = arrow_type_of(schema.value_schema, time_type)
        return None if item is None else pa.list_(item)
    if kind is Type.MAP:
        assert schema.key_schema is not None and schema.value_schema is not None
        key = arrow_type_of(schema.key_schema, time_type)
        value = arrow_type_of(schema.value_schema, time_type)
        return None if key is None or value is None else pa.map_(key, value)
    if kind is Type.STRUCT:
        fields = []
        for field in schema.fields:
            field_type = arrow_type_of(field.schema, time_type)
            if field_type is None:
                return None
            fields.append(pa.field(field.name, field_type))
        return pa.struct(fields)
    return None


def arrow_value(value: Any, schema: Schema | None,
                time: Callable[[dt.time], Any] | None = None) -> Any:
    """``value`` of ``schema`` as ``pa.array`` takes it for :func:`arrow_type_of`:
    structs as dicts, maps as lists of pairs, recursively; ``time`` turns Time values
    into what the ``time_type`` given to :func:`arrow_type_of` takes. A value without a
    schema stays as it is.
    """
    if value is None or schema is None:
        return value
    kind = schema.type
    if time is not None and schema.name == TIME and isinstance(value, dt.time):
        return time(value)
    if kind is Type.STRUCT and isinstance(value, Struct):
        return {f.name: arrow_value(value.get(f.name), f.schema, time)
                for f in schema.fields}
    if kind is Type.ARRAY and schema.value_schema is not None:
        return [arrow_value(item, schema.value_schema, time) for item in value]
    if kind is Type.MAP and schema.key_schema is not None and schema.value_schema is not None:
        pairs = value.items() if isinstance(value, dict) else value
        return [(arrow_value(k, schema.key_schema, time),
                 arrow_value(v, schema.value_schema, time)) for k, v in pairs]
    return value
