"""Cast: change the type of fields, or of the whole key or value.

Kafka Connect's ``org.apache.kafka.connect.transforms.Cast$Key`` / ``$Value``.
``spec`` is either one type (cast the whole key or value, which must be a primitive) or a
list ``field:type,...`` (cast those fields of a Struct or map; listed fields a record does
not have are ignored). Target types: int8, int16, int32, int64, float32, float64, boolean,
string. Inputs: integers, floats, booleans, strings, bytes (to string only, as base64),
Decimal (to numbers and string), Timestamp (to int64 epoch milliseconds and string),
Date and Time (to string).

The rules follow Kafka Connect's, except where Java would silently corrupt data:

* numbers to integers truncate toward zero; a value outside the target's range is an
  error (Java wraps it around), as are NaN and infinity;
* booleans become 1/0 and numbers become booleans by ``!= 0``; strings parse as numbers,
  and as booleans only from ``true``/``false`` in any case (Java takes anything else as
  false; here it is an error);
* to string: booleans as ``true``/``false``, bytes as base64, Timestamp as
  ``yyyy-MM-dd'T'HH:mm:ss.SSS'Z'``, Date as ``yyyy-MM-dd``, Time as ``HH:mm:ss.SSS'Z'``.

With a schema the cast fields' schemas become the target type (optionality kept, default
cast too); the derived schema is cached per input schema. A null stays null; a tombstone
passes through unchanged.
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import math
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, TypeVar

from omconnect.config.definition import ConfigDef
from omconnect.config.types import ConfigType, Importance
from omconnect.config.validators import ValidList
from omconnect.data import logical
from omconnect.data.schema import Schema, Type, integer_range
from omconnect.data.struct import Struct
from omconnect.errors import ConfigError, DataError
from omconnect.records import ConnectRecord
from omconnect.transforms.support import (
    KEY,
    VALUE,
    KeyOrValueTransformation,
    SchemaCache,
    require_mapping,
    require_struct,
    struct_schema_like,
)

__all__ = ["CAST_TARGETS", "Cast", "CastKey", "CastValue", "cast_value"]

R = TypeVar("R", bound=ConnectRecord)

CAST_TARGETS: dict[str, Type] = {
    t.value: t
    for t in (Type.INT8, Type.INT16, Type.INT32, Type.INT64, Type.FLOAT32, Type.FLOAT64,
              Type.BOOLEAN, Type.STRING)
}
_CASTABLE_INPUTS = frozenset({*CAST_TARGETS.values(), Type.BYTES})


def _describe(value: Any) -> str:
    text = repr(value)
    return f"{type(value).__name__} {text if len(text) <= 40 else text[:37] + '...'}"


def _to_integer(value: Any, target: Type) -> int:
    if isinstance(value, bool):
        number = int(value)
    elif isinstance(value, int):
        number = value
    elif isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            raise DataError(f"cannot cast {value!r} to {target.value}")
        number = int(value)
    elif isinstance(value, decimal.Decimal):
        if not value.is_finite():
            raise DataError(f"cannot cast {value!r} to {target.value}")
        number = int(value)
    elif isinstance(value, str):
        try:
            number = int(value.strip())
        except ValueError:
            raise DataError(f"cannot cast string {value!r} to {target.value}: "
                            "not an integer") from None
    elif isinstance(value, dt.datetime) and target is Type.INT64:
        number = logical.from_logical(logical.timestamp_schema(), value)
    else:
        raise DataError(f"cannot cast {_describe(value)} to {target.value}")
    low, high = integer_range(target)
    if not low <= number <= high:
        raise DataError(f"cannot cast {value!r} to {target.value}: out of range "
                        f"({low}..{high})")
    return number


def _to_float(value: Any, target: Type) -> float:
    if isinstance(value, (bool, int, float, decimal.Decimal)):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            raise DataError(f"cannot cast string {value!r} to {target.value}: "
                            "not a number") from None
    raise DataError(f"cannot cast {_describe(value)} to {target.value}")


def _to_boolean(value: Any, target: Type) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float, decimal.Decimal)):
        return bool(value != 0)
    if isinstance(value, str):
        text = value.strip().lower()
        if text in ("true", "false"):
            return text == "true"
        raise DataError(f"cannot cast string {value!r} to boolean: expected true or false")
    raise DataError(f"cannot cast {_describe(value)} to boolean")


def _to_string(value: Any, target: Type) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float, decimal.Decimal)):
        return str(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, dt.datetime):
        utc = value.astimezone(dt.UTC) if value.tzinfo else value
        return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, dt.time):
        return value.strftime("%H:%M:%S.") + f"{value.microsecond // 1000:03d}Z"
    raise DataError(f"cannot cast {_describe(value)} to string")


_CASTERS: dict[Type, Callable[[Any, Type], Any]] = {
    Type.INT8: _to_integer, Type.INT16: _to_integer, Type.INT32: _to_integer,
    Type.INT64: _to_integer, Type.FLOAT32: _to_float, Type.FLOAT64: _to_float,
    Type.BOOLEAN: _to_boolean, Type.STRING: _to_string,
}


def cast_value(value: Any, target: Type) -> Any:
    """``value`` (a Python value of any supported input type) cast to ``target``.

    Raises:
        DataError: The value cannot be cast (the message says why).

    """
    if value is None:
        return None
    return _CASTERS[target](value, target)


def _check_input(schema: Schema, target: Type, where: str) -> None:
    name = schema.name if schema.name in logical.LOGICAL_NAMES else None
    if name is None:
        if schema.type not in _CASTABLE_INPUTS:
            raise DataError(f"Cast: {where} is a {schema.type.value}; only primitive values "
                            "can be cast")
        if schema.type is Type.BYTES and target is not Type.STRING:
            raise DataError(f"Cast: {where} is bytes, which can only be cast to string")
        return
    allowed = {
        logical.DECIMAL: set(CAST_TARGETS.values()),
        logical.TIMESTAMP: {Type.INT64, Type.STRING},
        logical.DATE: {Type.STRING},
        logical.TIME: {Type.STRING},
    }[name]
    if target not in allowed:
        kinds = ", ".join(sorted(t.value for t in allowed))
        raise DataError(f"Cast: {where} is a {name.rsplit('.', 1)[-1]}, which can be cast "
                        f"to {kinds} only, not {target.value}")


def _target_schema(source: Schema, target: Type, where: str) -> Schema:
    _check_input(source, target, where)
    default = cast_value(source.default, target) if source.default is not None else None
    return Schema(type=target, optional=source.optional, default=default, doc=source.doc)


# (derived schema, (field index, caster, target type, field name) per cast field)
_FieldPlan = tuple[Schema, tuple[tuple[int, Callable[[Any, Type], Any], Type, str], ...]]


class Cast(KeyOrValueTransformation):
    """Cast fields or the whole key/value. Use :class:`CastKey` or :class:`CastValue`."""

    config_def: ClassVar[ConfigDef] = ConfigDef().define(
        "spec", ConfigType.LIST, importance=Importance.HIGH,
        validators=[ValidList(allow_empty=False)],
        documentation="One type to cast the whole key/value to, or field:type pairs, e.g. "
                      "id:int64,price:float64. Types: " + ", ".join(CAST_TARGETS) + ".")

    def configure(self, config: Mapping[str, Any]) -> None:
        """Read ``spec``."""
        spec: list[str] = self.config_def.parse(config)["spec"]
        self._whole: Type | None = None
        self._fields: dict[str, Type] = {}
        for item in spec:
            name, sep, type_name = item.rpartition(":")
            if not sep:
                if len(spec) > 1:
                    raise ConfigError(f"spec item {item!r} has no field name; write field:type "
                                      "for each item, or give a single type to cast the "
                                      "whole value", key="spec")
                self._whole = self._target(type_name)
            else:
                if not name.strip():
                    raise ConfigError(f"spec item {item!r} has no field name", key="spec")
                self._fields[name.strip()] = self._target(type_name)
        self._field_cache: SchemaCache[_FieldPlan] = SchemaCache(self._field_plan)
        self._whole_cache: SchemaCache[Schema] = SchemaCache(self._whole_schema)

    @staticmethod
    def _target(type_name: str) -> Type:
        target = CAST_TARGETS.get(type_name.strip().lower())
        if target is None:
            raise ConfigError(f"cannot cast to {type_name.strip()!r}; supported types: "
                              f"{', '.join(CAST_TARGETS)}", key="spec")
        return target

    def _field_plan(self, schema: Schema) -> _FieldPlan:
        fields: list[tuple[str, Schema]] = []
        casts: list[tuple[int, Callable[[Any, Type], Any], Type, str]] = []
        for field in schema.fields:
            target = self._fields.get(field.name)
            if target is None:
                fields.append((field.name, field.schema))
            else:
                where = f"field {field.name!r}"
                fields.append((field.name, _target_schema(field.schema, target, where)))
                casts.append((field.index, _CASTERS[target], target, field.name))
        return struct_schema_like(schema, fields), tuple(casts)

    def _whole_schema(self, schema: Schema) -> Schema:
        assert self._whole is not None
        return _target_schema(schema, self._whole, f"the record {self.operates_on}")

    def apply(self, record: R) -> R | None:
        """The record with its key/value (or some of its fields) cast."""
        value = self.operating_value(record)
        if value is None:
            return record
        schema = self.operating_schema(record)
        if self._whole is not None:
            target_schema = None if schema is None else self._whole_cache.get(schema)
            return self.new_record(record, target_schema, cast_value(value, self._whole))
        if schema is None:
            updated = dict(require_mapping(value, what=type(self).__name__))
            for name, target in self._fields.items():
                if name in updated:
                    updated[name] = self._cast_field(updated[name], target, name)
            return self.new_record(record, None, updated)
        struct = require_struct(value, what=type(self).__name__)
        derived, casts = self._field_cache.get(struct.schema)
        values = struct.values()
        for index, caster, target, name in casts:
            current = values[index]
            if current is not None:
                try:
                    values[index] = caster(current, target)
                except DataError as exc:
                    raise DataError(f"Cast: field {name!r}: {exc}") from None
        return self.new_record(record, derived, Struct.from_values(derived, values,
                                                                   validate=False))

    @staticmethod
    def _cast_field(value: Any, target: Type, name: str) -> Any:
        try:
            return cast_value(value, target)
        except DataError as exc:
            raise DataError(f"Cast: field {name!r}: {exc}") from None


class CastKey(Cast):
    """Cast on the record key (Kafka Connect's ``Cast$Key``)."""

    operates_on = KEY


class CastValue(Cast):
    """Cast on the record value (Kafka Connect's ``Cast$Value``)."""

    operates_on = VALUE
