"""HeaderFrom: copy or move fields of the key or value into headers.

Kafka Connect's ``org.apache.kafka.connect.transforms.HeaderFrom$Key`` / ``$Value``.
The i-th field of ``fields`` becomes a header with the i-th key of ``headers`` (appended;
with the field's schema when there is one). ``operation=move`` also removes the fields
(the derived schema is cached per input schema); ``copy`` leaves the key/value as it is.
With a schema a listed field the schema lacks is an error; schemaless, an absent entry
gives a null header. A tombstone passes through unchanged (it has no fields).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, TypeVar

from omconnect.config.definition import ConfigDef
from omconnect.config.types import ConfigType, Importance
from omconnect.config.validators import OneOf, ValidList
from omconnect.data.headers import Header, Headers
from omconnect.data.schema import Schema
from omconnect.data.struct import Struct
from omconnect.errors import ConfigError
from omconnect.records import ConnectRecord
from omconnect.transforms.support import (
    KEY,
    VALUE,
    KeyOrValueTransformation,
    SchemaCache,
    field_of,
    require_mapping,
    require_struct,
    struct_schema_like,
    with_headers,
)

__all__ = ["HeaderFrom", "HeaderFromKey", "HeaderFromValue"]

R = TypeVar("R", bound=ConnectRecord)

# (schema after a move, (field index, header key, header schema) per header, kept indexes)
_Plan = tuple[Schema, tuple[tuple[int, str, Schema], ...], tuple[int, ...]]


class HeaderFrom(KeyOrValueTransformation):
    """Fields to headers. Use :class:`HeaderFromKey` or :class:`HeaderFromValue`."""

    config_def: ClassVar[ConfigDef] = (
        ConfigDef()
        .define("fields", ConfigType.LIST, importance=Importance.HIGH,
                validators=[ValidList(allow_empty=False)],
                documentation="The fields to turn into headers.")
        .define("headers", ConfigType.LIST, importance=Importance.HIGH,
                validators=[ValidList(allow_empty=False)],
                documentation="The header keys, one per field, in the same order.")
        .define("operation", ConfigType.STRING, importance=Importance.HIGH,
                validators=[OneOf(("move", "copy"))],
                documentation="move removes the fields; copy keeps them.")
    )

    def configure(self, config: Mapping[str, Any]) -> None:
        """Read the field/header pairs and the operation."""
        values = self.config_def.parse(config)
        fields, headers = values["fields"], values["headers"]
        if len(fields) != len(headers):
            raise ConfigError(f"headers lists {len(headers)} key(s) but fields lists "
                              f"{len(fields)}; give one header key per field", key="headers")
        self._pairs: tuple[tuple[str, str], ...] = tuple(zip(fields, headers, strict=True))
        self._move = values["operation"].strip().lower() == "move"
        self._moved = frozenset(fields)
        self._cache: SchemaCache[_Plan] = SchemaCache(self._plan)

    def _plan(self, schema: Schema) -> _Plan:
        headers = tuple(
            (field.index, header, field.schema)
            for field, header in ((field_of(schema, name, what=type(self).__name__), header)
                                  for name, header in self._pairs)
        )
        kept = [f for f in schema.fields if not (self._move and f.name in self._moved)]
        derived = struct_schema_like(schema, [(f.name, f.schema) for f in kept])
        return derived, headers, tuple(f.index for f in kept)

    def apply(self, record: R) -> R | None:
        """The record with the fields added as headers (and removed, for a move)."""
        value = self.operating_value(record)
        if value is None:
            return record
        if self.operating_schema(record) is None:
            mapping = require_mapping(value, what=type(self).__name__)
            added = [Header(header, mapping.get(name)) for name, header in self._pairs]
            headers = Headers((*record.headers, *added))
            if self._move:
                moved = self._moved
                kept = {k: v for k, v in mapping.items() if k not in moved}
                return with_headers(self.new_record(record, None, kept), headers)
            return with_headers(record, headers)
        struct = require_struct(value, what=type(self).__name__)
        derived, header_plan, kept_indexes = self._cache.get(struct.schema)
        values = struct.values()
        headers = Headers((*record.headers,
                           *(Header(key, values[i], schema) for i, key, schema in header_plan)))
        if not self._move:
            return with_headers(record, headers)
        remaining = Struct.from_values(derived, [values[i] for i in kept_indexes],
                                       validate=False)
        return with_headers(self.new_record(record, derived, remaining), headers)


class HeaderFromKey(HeaderFrom):
    """HeaderFrom on the record key (Kafka Connect's ``HeaderFrom$Key``)."""

    operates_on = KEY


class HeaderFromValue(HeaderFrom):
    """HeaderFrom on the record value (Kafka Connect's ``HeaderFrom$Value``)."""

    operates_on = VALUE
