"""MaskField: replace field values with an empty value of their type, or a replacement.

Kafka Connect's ``org.apache.kafka.connect.transforms.MaskField$Key`` / ``$Value``.
Without ``replacement`` a masked field becomes its type's empty value: 0 for numbers,
false, an empty string, bytes, list or map, a zero Decimal, and the epoch for Date, Time
and Timestamp. With ``replacement`` numeric fields take the replacement parsed as their type
and strings take it as is; masking any other type with a replacement is an error, as in
Kafka Connect. Null stays null (there is nothing to hide). The schema does not change.
Listed fields absent from a record are ignored. A tombstone passes through unchanged.
"""

from __future__ import annotations

import datetime as dt
import decimal
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, TypeVar

from omconnect.config.definition import ConfigDef
from omconnect.config.types import ConfigType, Importance
from omconnect.config.validators import ValidList
from omconnect.data import logical
from omconnect.data.schema import Schema, Type, integer_range
from omconnect.data.struct import Struct
from omconnect.errors import DataError
from omconnect.records import ConnectRecord
from omconnect.transforms.support import (
    KEY,
    VALUE,
    KeyOrValueTransformation,
    SchemaCache,
    require_mapping,
    require_struct,
)

__all__ = ["MaskField", "MaskFieldKey", "MaskFieldValue"]

R = TypeVar("R", bound=ConnectRecord)

Mask = Callable[[], Any]

_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_EMPTY_BY_LOGICAL: dict[str, Any] = {
    logical.DECIMAL: decimal.Decimal(0),
    logical.DATE: _EPOCH.date(),
    logical.TIME: dt.time(0),
    logical.TIMESTAMP: _EPOCH,
}
_EMPTY_BY_TYPE: dict[Type, Mask] = {
    Type.INT8: lambda: 0, Type.INT16: lambda: 0, Type.INT32: lambda: 0,
    Type.INT64: lambda: 0, Type.FLOAT32: lambda: 0.0, Type.FLOAT64: lambda: 0.0,
    Type.BOOLEAN: lambda: False, Type.STRING: lambda: "", Type.BYTES: lambda: b"",
    Type.ARRAY: list, Type.MAP: dict,
}


def _constant(value: Any) -> Mask:
    return lambda: value


def _replacement_for(type_: Type, logical_name: str | None, replacement: str,
                     field: str, scale: int | None) -> Mask:
    try:
        if logical_name == logical.DECIMAL:
            amount = decimal.Decimal(replacement.strip())
            if scale is not None:
                exact = amount.quantize(decimal.Decimal(1).scaleb(-scale))
                if exact != amount:
                    raise ValueError(f"it has more than the field's {scale} decimal places")
                amount = exact
            return _constant(amount)
        if logical_name is None and type_.is_integer:
            number = int(replacement.strip())
            low, high = integer_range(type_)
            if not low <= number <= high:
                raise ValueError(f"{number} is out of range for {type_.value} ({low}..{high})")
            return _constant(number)
        if logical_name is None and type_ in (Type.FLOAT32, Type.FLOAT64):
            return _constant(float(replacement))
    except (ValueError, decimal.InvalidOperation) as exc:
        raise DataError(f"MaskField: cannot use replacement {replacement!r} for field {field!r} "
                        f"of type {logical_name or type_.value}: {exc}") from None
    if logical_name is None and type_ is Type.STRING:
        return _constant(replacement)
    raise DataError(
        f"MaskField: field {field!r} is of type {logical_name or type_.value}, which cannot be "
        "masked with a replacement (only numbers and strings can); remove the replacement "
        "or the field"
    )


def _python_type(value: Any) -> tuple[Type, str | None]:
    if isinstance(value, bool):
        return Type.BOOLEAN, None
    if isinstance(value, int):
        return Type.INT64, None
    if isinstance(value, float):
        return Type.FLOAT64, None
    if isinstance(value, str):
        return Type.STRING, None
    if isinstance(value, (bytes, bytearray, memoryview)):
        return Type.BYTES, None
    if isinstance(value, decimal.Decimal):
        return Type.BYTES, logical.DECIMAL
    if isinstance(value, dt.datetime):
        return Type.INT64, logical.TIMESTAMP
    if isinstance(value, dt.date):
        return Type.INT32, logical.DATE
    if isinstance(value, dt.time):
        return Type.INT32, logical.TIME
    if isinstance(value, (list, tuple)):
        return Type.ARRAY, None
    if isinstance(value, Mapping):
        return Type.MAP, None
    return Type.STRUCT, None


class MaskField(KeyOrValueTransformation):
    """Mask fields. Use :class:`MaskFieldKey` or :class:`MaskFieldValue`."""

    config_def: ClassVar[ConfigDef] = (
        ConfigDef()
        .define("fields", ConfigType.LIST, importance=Importance.HIGH,
                validators=[ValidList(allow_empty=False)],
                documentation="The fields to mask.")
        .define("replacement", ConfigType.STRING, None, importance=Importance.LOW,
                documentation="The value masked numeric and string fields take; unset, "
                              "every masked field takes its type's empty value.")
    )

    def configure(self, config: Mapping[str, Any]) -> None:
        """Read the fields to mask and the replacement."""
        values = self.config_def.parse(config)
        self._fields = frozenset(values["fields"])
        self._replacement: str | None = values["replacement"]
        self._cache: SchemaCache[tuple[tuple[int, Mask], ...]] = SchemaCache(self._plan)

    def _mask(self, type_: Type, logical_name: str | None, field: str,
              scale: int | None = None) -> Mask:
        if self._replacement is not None:
            return _replacement_for(type_, logical_name, self._replacement, field, scale)
        if logical_name in _EMPTY_BY_LOGICAL:
            return _constant(_EMPTY_BY_LOGICAL[logical_name])
        if type_ in _EMPTY_BY_TYPE:
            return _EMPTY_BY_TYPE[type_]
        raise DataError(f"MaskField: field {field!r} is a struct, which cannot be masked; "
                        "mask its fields after a Flatten transform instead")

    def _plan(self, schema: Schema) -> tuple[tuple[int, Mask], ...]:
        plan = []
        for field in schema.fields:
            if field.name not in self._fields:
                continue
            name = field.schema.name if field.schema.name in logical.LOGICAL_NAMES else None
            scale = logical.decimal_scale(field.schema) if name == logical.DECIMAL else None
            plan.append((field.index, self._mask(field.schema.type, name, field.name, scale)))
        return tuple(plan)

    def apply(self, record: R) -> R | None:
        """The record with the listed fields of its key or value masked."""
        value = self.operating_value(record)
        if value is None:
            return record
        if self.operating_schema(record) is None:
            mapping = require_mapping(value, what=type(self).__name__)
            updated = dict(mapping)
            for name in self._fields:
                current = mapping.get(name)
                if current is not None:
                    updated[name] = self._mask(*_python_type(current), name)()
            return self.new_record(record, None, updated)
        struct = require_struct(value, what=type(self).__name__)
        plan = self._cache.get(struct.schema)
        if not plan:
            return record
        values = struct.values()
        for index, mask in plan:
            if values[index] is not None:
                values[index] = mask()
        masked = Struct.from_values(struct.schema, values, validate=False)
        return self.new_record(record, struct.schema, masked)


class MaskFieldKey(MaskField):
    """MaskField on the record key (Kafka Connect's ``MaskField$Key``)."""

    operates_on = KEY


class MaskFieldValue(MaskField):
    """MaskField on the record value (Kafka Connect's ``MaskField$Value``)."""

    operates_on = VALUE
