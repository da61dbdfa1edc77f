"""Flatten: lift the fields of nested structs (or maps) to the top level.

Kafka Connect's ``org.apache.kafka.connect.transforms.Flatten$Key`` / ``$Value``. A nested
field's name is its path joined by ``delimiter`` (``address.city``). With a schema, nested
STRUCT fields are flattened (arrays and maps are kept as they are); a field below an
optional struct becomes optional, and takes its own default, else the one its parent's
default struct holds. A null nested struct gives nulls for all its fields. The derived
schema (and the walk over it) is cached per input schema. Schemaless, nested maps are
flattened and every other value is kept. A tombstone passes through unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, TypeVar

from omconnect.config.definition import ConfigDef
from omconnect.config.types import ConfigType, Importance
from omconnect.data.schema import Schema, Type
from omconnect.data.struct import Struct
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

__all__ = ["Flatten", "FlattenKey", "FlattenValue"]

R = TypeVar("R", bound=ConnectRecord)

# One entry per field of a struct: (field index, the nested walk or None for a leaf,
# how many output fields it yields).
_Walk = tuple[tuple[int, "_Walk | None", int], ...]


def _leaf_schema(schema: Schema, optional: bool, default: Any) -> Schema:
    if schema.optional == optional and schema.default is default:
        return schema
    return Schema(type=schema.type, optional=optional, default=default, name=schema.name,
                  version=schema.version, doc=schema.doc, parameters=schema.parameters,
                  fields=schema.fields, key_schema=schema.key_schema,
                  value_schema=schema.value_schema)


def _collect(struct: Struct, walk: _Walk, out: list[Any]) -> None:
    values = struct.values()
    for index, nested, width in walk:
        value = values[index]
        if nested is None:
            out.append(value)
        elif value is None:
            out.extend([None] * width)
        else:
            _collect(value, nested, out)


class Flatten(KeyOrValueTransformation):
    """Flatten nested structure. Use :class:`FlattenKey` or :class:`FlattenValue`."""

    config_def: ClassVar[ConfigDef] = ConfigDef().define(
        "delimiter", ConfigType.STRING, ".", importance=Importance.MEDIUM,
        documentation="Joins the names of nested fields into the flattened field's name.")

    def configure(self, config: Mapping[str, Any]) -> None:
        """Read the delimiter."""
        self._delimiter: str = self.config_def.parse(config)["delimiter"]
        self._cache: SchemaCache[tuple[Schema, _Walk, bool]] = SchemaCache(self._plan)

    def _plan(self, schema: Schema) -> tuple[Schema, _Walk, bool]:
        fields: list[tuple[str, Schema]] = []
        walk = self._walk(schema, "", False, None, fields)
        nested = any(entry[1] is not None for entry in walk)
        return struct_schema_like(schema, fields), walk, not nested

    def _walk(self, schema: Schema, prefix: str, optional: bool, parent_default: Any,
              fields: list[tuple[str, Schema]]) -> _Walk:
        entries: list[tuple[int, _Walk | None, int]] = []
        for field in schema.fields:
            name = prefix + field.name
            field_optional = optional or field.schema.optional
            default = field.schema.default
            if default is None and isinstance(parent_default, Struct):
                default = parent_default.get(field.name)
            if field.schema.type is Type.STRUCT:
                start = len(fields)
                nested = self._walk(field.schema, name + self._delimiter, field_optional,
                                    default, fields)
                entries.append((field.index, nested, len(fields) - start))
            else:
                fields.append((name, _leaf_schema(field.schema, field_optional, default)))
                entries.append((field.index, None, 1))
        return tuple(entries)

    def _flatten_map(self, mapping: Mapping[Any, Any], prefix: str, out: dict[str, Any]) -> None:
        for key, value in mapping.items():
            name = prefix + str(key)
            if isinstance(value, Mapping):
                self._flatten_map(value, name + self._delimiter, out)
            else:
                out[name] = value

    def apply(self, record: R) -> R | None:
        """The record with its key/value flattened."""
        value = self.operating_value(record)
        if value is None:
            return record
        if self.operating_schema(record) is None:
            flat: dict[str, Any] = {}
            self._flatten_map(require_mapping(value, what=type(self).__name__), "", flat)
            return self.new_record(record, None, flat)
        struct = require_struct(value, what=type(self).__name__)
        schema, walk, unchanged = self._cache.get(struct.schema)
        if unchanged:
            return record
        values: list[Any] = []
        _collect(struct, walk, values)
        return self.new_record(record, schema, Struct.from_values(schema, values, validate=False))


class FlattenKey(Flatten):
    """Flatten on the record key (Kafka Connect's ``Flatten$Key``)."""

    operates_on = KEY


class FlattenValue(Flatten):
    """Flatten on the record value (Kafka Connect's ``Flatten$Value``)."""

    operates_on = VALUE
