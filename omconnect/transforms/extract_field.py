"""ExtractField: replace the key or value by one of its fields.

Kafka Connect's ``org.apache.kafka.connect.transforms.ExtractField$Key`` / ``$Value``.
With a schema the result takes the field's schema (a field the schema lacks is an error);
schemaless, the field's entry of the map (``None`` when absent). A null key or value stays
null (with the field's schema when there is one).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, TypeVar

from omconnect.config.definition import ConfigDef
from omconnect.config.types import ConfigType, Importance
from omconnect.config.validators import NonEmptyString
from omconnect.data.schema import Field, Schema
from omconnect.records import ConnectRecord
from omconnect.transforms.support import (
    KEY,
    VALUE,
    KeyOrValueTransformation,
    SchemaCache,
    field_of,
    require_mapping,
    require_struct,
)

__all__ = ["ExtractField", "ExtractFieldKey", "ExtractFieldValue"]

R = TypeVar("R", bound=ConnectRecord)


class ExtractField(KeyOrValueTransformation):
    """Extract one field. Use :class:`ExtractFieldKey` or :class:`ExtractFieldValue`."""

    config_def: ClassVar[ConfigDef] = ConfigDef().define(
        "field", ConfigType.STRING, importance=Importance.MEDIUM,
        validators=[NonEmptyString()], documentation="The field to extract.")

    def configure(self, config: Mapping[str, Any]) -> None:
        """Read the field name."""
        self._field: str = self.config_def.parse(config)["field"].strip()
        self._cache: SchemaCache[Field] = SchemaCache(self._lookup)

    def _lookup(self, schema: Schema) -> Field:
        return field_of(schema, self._field, what=type(self).__name__)

    def apply(self, record: R) -> R | None:
        """The record whose key/value is the field's value."""
        value = self.operating_value(record)
        schema = self.operating_schema(record)
        if schema is None:
            if value is None:
                return self.new_record(record, None, None)
            return self.new_record(
                record, None, require_mapping(value, what=type(self).__name__).get(self._field))
        if value is None:
            return self.new_record(record, self._cache.get(schema).schema, None)
        struct = require_struct(value, what=type(self).__name__)
        field = self._cache.get(struct.schema)
        return self.new_record(record, field.schema, struct.values()[field.index])

class ExtractFieldKey(ExtractField):
    """ExtractField on the record key (Kafka Connect's ``ExtractField$Key``)."""

    operates_on = KEY


class ExtractFieldValue(ExtractField):
    """ExtractField on the record value (Kafka Connect's ``ExtractField$Value``)."""

    operates_on = VALUE
