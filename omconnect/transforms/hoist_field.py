"""HoistField: wrap the key or value in a struct (or map) with a single field.

Kafka Connect's ``org.apache.kafka.connect.transforms.HoistField$Key`` / ``$Value``.
With a schema the result is a Struct of an unnamed STRUCT schema holding one field
``field`` of the original schema (cached per input schema); schemaless, the map
``{field: value}``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, TypeVar

from omconnect.config.definition import ConfigDef
from omconnect.config.types import ConfigType, Importance
from omconnect.config.validators import NonEmptyString
from omconnect.data.schema import Schema, Type, struct_fields
from omconnect.data.struct import Struct
from omconnect.records import ConnectRecord
from omconnect.transforms.support import KEY, VALUE, KeyOrValueTransformation, SchemaCache

__all__ = ["HoistField", "HoistFieldKey", "HoistFieldValue"]

R = TypeVar("R", bound=ConnectRecord)


class HoistField(KeyOrValueTransformation):
    """Wrap in a single-field struct. Use :class:`HoistFieldKey` or :class:`HoistFieldValue`."""

    config_def: ClassVar[ConfigDef] = ConfigDef().define(
        "field", ConfigType.STRING, importance=Importance.MEDIUM,
        validators=[NonEmptyString()],
        documentation="The name of the single field of the resulting struct or map.")

    def configure(self, config: Mapping[str, Any]) -> None:
        """Read the field name."""
        self._field: str = self.config_def.parse(config)["field"].strip()
        self._cache: SchemaCache[Schema] = SchemaCache(self._wrap)

    def _wrap(self, schema: Schema) -> Schema:
        return Schema(type=Type.STRUCT, fields=struct_fields([(self._field, schema)]))

    def apply(self, record: R) -> R | None:
        """The record whose key/value is wrapped in a one-field struct or map."""
        value = self.operating_value(record)
        schema = self.operating_schema(record)
        if schema is None:
            return self.new_record(record, None, {self._field: value})
        wrapper = self._cache.get(schema)
        # A null is valid only for an optional schema: validate that one case.
        hoisted = Struct.from_values(wrapper, [value], validate=value is None)
        return self.new_record(record, wrapper, hoisted)


class HoistFieldKey(HoistField):
    """HoistField on the record key (Kafka Connect's ``HoistField$Key``)."""

    operates_on = KEY


class HoistFieldValue(HoistField):
    """HoistField on the record value (Kafka Connect's ``HoistField$Value``)."""

    operates_on = VALUE
