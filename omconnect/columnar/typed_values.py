"""Typed Arrow columns as Connect values, checked once per column instead of per value.

Where a batch of typed rows meets a per-record stage (a converter with no column form),
each row becomes a Connect value: a ``struct`` row a
:class:`~omconnect.data.struct.Struct`, a ``map`` a dict. Checking every value against its
schema costs more than building it (7 µs of 8 for an 8-field row). When the column's
Arrow type already guarantees what the schema asks (:func:`column_fits`: the same kinds,
integers that fit, a Decimal's scale, no null where the schema has no room for one),
:func:`value_builder` builds the values with no per-value check; otherwise the caller
checks each value as before.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pyarrow as pa

from omconnect.data.logical_names import DATE, DECIMAL, SCALE, TIME, TIMESTAMP
from omconnect.data.schema import Schema, Type
from omconnect.data.struct import Struct

__all__ = ["column_fits", "value_builder"]

Builder = Callable[[Any], Any]
"""Turns one value of ``to_pylist`` into its Connect value."""

_INT_BITS = {Type.INT8: 8, Type.INT16: 16, Type.INT32: 32, Type.INT64: 64}


def _int_fits(arrow_type: pa.DataType, kind: Type) -> bool:
    if not pa.types.is_integer(arrow_type):
        return False
    bits = _INT_BITS[kind]
    if pa.types.is_signed_integer(arrow_type):
        return bool(arrow_type.bit_width <= bits)
    return bool(arrow_type.bit_width < bits)


def _primitive_fits(arrow_type: pa.DataType, schema: Schema) -> bool:
    types = pa.types
    name = schema.name
    if name == DATE:
        return bool(types.is_date(arrow_type))
    if name == TIMESTAMP:
        return bool(types.is_timestamp(arrow_type) and arrow_type.unit != "ns")
    if name == TIME:
        return bool(types.is_time(arrow_type) and arrow_type.unit != "ns")
    if name == DECIMAL:
        scale = (schema.parameters or {}).get(SCALE)
        return bool(types.is_decimal(arrow_type) and str(arrow_type.scale) == str(scale))
    kind = schema.type
    if kind.is_integer:
        return _int_fits(arrow_type, kind)
    if kind in (Type.FLOAT64, Type.FLOAT32):  # a FLOAT32 value is any Python float
        return bool(types.is_float64(arrow_type) or types.is_float32(arrow_type))
    if kind is Type.BOOLEAN:
        return bool(types.is_boolean(arrow_type))
    if kind is Type.STRING:
        return bool(types.is_string(arrow_type) or types.is_large_string(arrow_type))
    if kind is Type.BYTES:
        return bool(types.is_binary(arrow_type) or types.is_large_binary(arrow_type)
                    or types.is_fixed_size_binary(arrow_type))
    return False


def _nulls_fit(array: pa.Array, schema: Schema) -> bool:
    return bool(schema.optional or schema.default is not None or array.null_count == 0)


def column_fits(array: pa.Array, schema: Schema) -> bool:
    """Whether every value of ``array`` (as ``to_pylist`` gives it) is valid for
    ``schema`` once :func:`value_builder` built it. A top-level null is left to the
    caller (a null key or value is a record's business, not the schema's). Conservative:
    ``False`` means "check each value", never "invalid".
    """
    if isinstance(array, pa.ChunkedArray):
        return all(column_fits(chunk, schema) for chunk in array.chunks)
    arrow_type = array.type
    types = pa.types
    kind = schema.type
    if kind.is_primitive:
        return _primitive_fits(arrow_type, schema)
    if kind is Type.STRUCT:
        fields = schema.fields
        if not types.is_struct(arrow_type) or arrow_type.num_fields != len(fields):
            return False
        for index, field in enumerate(fields):
            if arrow_type.field(index).name != field.name:
                return False
            child = array.field(index)
            if not (_nulls_fit(child, field.schema) and column_fits(child, field.schema)):
                return False
        return True
    if kind is Type.ARRAY:
        if not (types.is_list(arrow_type) or types.is_large_list(arrow_type)):
            return False
        items = array.flatten()
        element = schema.value_schema
        assert element is not None
        return _nulls_fit(items, element) and column_fits(items, element)
    if kind is Type.MAP:
        if not types.is_map(arrow_type):
            return False
        key_schema, value_schema = schema.key_schema, schema.value_schema
        assert key_schema is not None and value_schema is not None
        return (column_fits(array.keys, key_schema)
                and _nulls_fit(array.items, value_schema)
                and column_fits(array.items, value_schema))
    return False


def value_builder(schema: Schema) -> Builder | None:
    """How to turn a ``to_pylist`` value of a column that :func:`column_fits` ``schema``
    into its Connect value (``None``: it is one already). Builds structs with no check.
    """
    kind = schema.type
    if kind.is_primitive:
        return None
    if kind is Type.STRUCT:
        builders = [value_builder(field.schema) for field in schema.fields]
        from_values = Struct.from_values
        if all(builder is None for builder in builders):
            def plain_struct(value: Any) -> Any:
                if value is None:
                    return None
                return from_values(schema, list(value.values()), validate=False)
            return plain_struct
        pairs = list(enumerate(builders))

        def struct(value: Any) -> Any:
            if value is None:
                return None
            values = list(value.values())
            for index, builder in pairs:
                if builder is not None:
                    values[index] = builder(values[index])
            return from_values(schema, values, validate=False)
        return struct
    if kind is Type.ARRAY:
        assert schema.value_schema is not None
        element = value_builder(schema.value_schema)
        if element is None:
            return None
        each = element
        return lambda value: None if value is None else [each(item) for item in value]
    assert schema.key_schema is not None and schema.value_schema is not None
    key_builder = value_builder(schema.key_schema)
    item_builder = value_builder(schema.value_schema)

    def mapping(pairs: Any) -> Any:
        if pairs is None:
            return None
        return {(k if key_builder is None else key_builder(k)):
                (v if item_builder is None else item_builder(v)) for k, v in pairs}
    return mapping
