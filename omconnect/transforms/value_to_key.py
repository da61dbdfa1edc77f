"""ValueToKey: make the key a struct (or map) of fields copied from the value.

Kafka Connect's ``org.apache.kafka.connect.transforms.ValueToKey``. With a schema the key
is a Struct of an unnamed STRUCT schema with the listed fields, in the listed order, with
their value schemas (cached per value schema; a field the value lacks is an error);
schemaless, a map of the listed fields (``None`` for absent ones). The value must not be
null: a tombstone has no fields to copy.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, TypeVar

from omconnect.config.definition import ConfigDef
from omconnect.config.types import ConfigType, Importance
from omconnect.config.validators import ValidList
from omconnect.data.schema import Schema, Type, struct_fields
from omconnect.data.struct import Struct
from omconnect.records import ConnectRecord
from omconnect.transforms.base import Transformation
from omconnect.transforms.support import (
    SchemaCache,
    field_of,
    require_mapping,
    require_struct,
    with_key,
)

__all__ = ["ValueToKey"]

R = TypeVar("R", bound=ConnectRecord)


class ValueToKey(Transformation):
    """Replace the record key by a struct or map of fields of the value."""

    config_def: ClassVar[ConfigDef] = ConfigDef().define(
        "fields", ConfigType.LIST, importance=Importance.HIGH,
        validators=[ValidList(allow_empty=False)],
        documentation="The value's fields that make up the key, in order.")

    def configure(self, config: Mapping[str, Any]) -> None:
        """Read the field list."""
        self._fields: tuple[str, ...] = tuple(self.config_def.parse(config)["fields"])
        self._cache: SchemaCache[tuple[Schema, tuple[int, ...]]] = SchemaCache(self._plan)

    def _plan(self, schema: Schema) -> tuple[Schema, tuple[int, ...]]:
        fields = [field_of(schema, name, what="ValueToKey") for name in self._fields]
        key_schema = Schema(type=Type.STRUCT,
                            fields=struct_fields([(f.name, f.schema) for f in fields]))
        return key_schema, tuple(f.index for f in fields)

    def apply(self, record: R) -> R | None:
        """The record with its key built from its value."""
        value = record.value
        if record.value_schema is None:
            mapping = require_mapping(value, what="ValueToKey")
            return with_key(record, None, {name: mapping.get(name) for name in self._fields})
        struct = require_struct(value, what="ValueToKey")
        key_schema, indexes = self._cache.get(struct.schema)
        values = struct.values()
        key = Struct.from_values(key_schema, [values[i] for i in indexes], validate=False)
        return with_key(record, key_schema, key)
