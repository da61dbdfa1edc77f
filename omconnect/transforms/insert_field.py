"""InsertField: add the record's topic, partition, offset, timestamp or a constant as fields.

Kafka Connect's ``org.apache.kafka.connect.transforms.InsertField$Key`` / ``$Value``.
A field name ending in ``!`` makes the inserted field required, ``?`` (the default)
optional. On a Struct the fields are appended to a derived schema (topic: string,
partition: int32, offset: int64, timestamp: Timestamp, static: string); on a schemaless map
they are added as entries (the timestamp as epoch milliseconds). A null key or value
(a tombstone) passes through unchanged.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, TypeVar

import attrs

from omconnect.config.definition import ConfigDef
from omconnect.config.types import ConfigType, Importance
from omconnect.data.logical import timestamp_schema
from omconnect.data.schema import Schema, Type
from omconnect.data.struct import Struct
from omconnect.errors import ConfigError, DataError
from omconnect.records import ConnectRecord, SinkRecord
from omconnect.transforms.support import (
    KEY,
    VALUE,
    KeyOrValueTransformation,
    SchemaCache,
    require_mapping,
    require_struct,
    struct_schema_like,
)

__all__ = ["InsertField", "InsertFieldKey", "InsertFieldValue"]

R = TypeVar("R", bound=ConnectRecord)

_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_NAME_DOC = " Suffix with ! for a required field, ? for an optional one (the default)."


def _require_sink(record: ConnectRecord) -> int:
    if not isinstance(record, SinkRecord):
        raise DataError(
            "InsertField: offset.field needs sink records (a source record has no offset "
            "yet); remove offset.field from this source connector's transform"
        )
    return record.offset


def _timestamp(record: ConnectRecord) -> dt.datetime | None:
    millis = record.timestamp
    return None if millis is None else _EPOCH + dt.timedelta(milliseconds=millis)


@attrs.frozen
class _Insertion:
    option: str  # the config key, for messages
    name: str
    optional: bool
    schema: Schema
    with_schema: Callable[[ConnectRecord], Any]
    schemaless: Callable[[ConnectRecord], Any]


def _field_spec(option: str, raw: str | None) -> tuple[str, bool] | None:
    if raw is None or not raw.strip():
        return None
    text = raw.strip()
    optional = not text.endswith("!")
    name = text[:-1] if text[-1] in "!?" else text
    if not name:
        raise ConfigError(f"{option} {raw!r} has no field name before the suffix", key=option)
    return name, optional


class InsertField(KeyOrValueTransformation):
    """Insert fields taken from the record's metadata, or a constant.

    Use :class:`InsertFieldKey` or :class:`InsertFieldValue`.
    """

    config_def: ClassVar[ConfigDef] = (
        ConfigDef()
        .define("topic.field", ConfigType.STRING, None, importance=Importance.MEDIUM,
                documentation="Field for the record's topic." + _NAME_DOC)
        .define("partition.field", ConfigType.STRING, None, importance=Importance.MEDIUM,
                documentation="Field for the record's partition." + _NAME_DOC)
        .define("offset.field", ConfigType.STRING, None, importance=Importance.MEDIUM,
                documentation="Field for the record's offset (sink connectors only)."
                + _NAME_DOC)
        .define("timestamp.field", ConfigType.STRING, None, importance=Importance.MEDIUM,
                documentation="Field for the record's timestamp." + _NAME_DOC)
        .define("static.field", ConfigType.STRING, None, importance=Importance.MEDIUM,
                documentation="Field for a constant value." + _NAME_DOC)
        .define("static.value", ConfigType.STRING, None, importance=Importance.MEDIUM,
                documentation="The constant for static.field.")
    )

    def configure(self, config: Mapping[str, Any]) -> None:
        """Read the field names (see ``config_def``)."""
        values = self.config_def.parse(config)
        static_value = values["static.value"]
        sources: list[tuple[str, Schema, Callable[[ConnectRecord], Any],
                            Callable[[ConnectRecord], Any]]] = [
            ("topic.field", Schema(type=Type.STRING),
             lambda r: r.topic, lambda r: r.topic),
            ("partition.field", Schema(type=Type.INT32),
             lambda r: r.partition, lambda r: r.partition),
            ("offset.field", Schema(type=Type.INT64), _require_sink, _require_sink),
            ("timestamp.field", timestamp_schema(), _timestamp, lambda r: r.timestamp),
            ("static.field", Schema(type=Type.STRING),
             lambda r: static_value, lambda r: static_value),
        ]
        insertions: list[_Insertion] = []
        for option, schema, with_schema, schemaless in sources:
            spec = _field_spec(option, values[option])
            if spec is None:
                continue
            name, optional = spec
            if option == "static.field" and static_value is None and not optional:
                raise ConfigError(
                    f"static.field {name!r} is required (!) but static.value is not set; "
                    "set static.value", key="static.value")
            insertions.append(_Insertion(option, name, optional,
                                         schema.with_optional(optional), with_schema,
                                         schemaless))
        names = [i.name for i in insertions]
        for name in names:
            if names.count(name) > 1:
                raise ConfigError(f"field {name!r} is inserted twice; give each its own name",
                                  key=next(i.option for i in insertions if i.name == name))
        self._insertions = tuple(insertions)
        self._cache: SchemaCache[Schema] = SchemaCache(self._derive)

    def _derive(self, schema: Schema) -> Schema:
        fields = [(f.name, f.schema) for f in schema.fields]
        fields += [(i.name, i.schema) for i in self._insertions]
        return struct_schema_like(schema, fields)

    def apply(self, record: R) -> R | None:
        """The record with the fields inserted into its key or value."""
        value = self.operating_value(record)
        if value is None:
            return record
        if self.operating_schema(record) is None:
            updated = dict(require_mapping(value, what=type(self).__name__))
            for insertion in self._insertions:
                inserted = insertion.schemaless(record)
                if inserted is not None:
                    updated[insertion.name] = inserted
            return self.new_record(record, None, updated)
        struct = require_struct(value, what=type(self).__name__)
        schema = self._cache.get(struct.schema)
        values = struct.values()
        for insertion in self._insertions:
            inserted = insertion.with_schema(record)
            if inserted is None and not insertion.optional:
                raise DataError(
                    f"{type(self).__name__}: {insertion.option} {insertion.name!r} is required, "
                    f"but the record has no {insertion.option.split('.')[0]}"
                )
            values.append(inserted)
        return self.new_record(record, schema, Struct.from_values(schema, values, validate=False))


class InsertFieldKey(InsertField):
    """InsertField on the record key (Kafka Connect's ``InsertField$Key``)."""

    operates_on = KEY


class InsertFieldValue(InsertField):
    """InsertField on the record value (Kafka Connect's ``InsertField$Value``)."""

    operates_on = VALUE
