"""ReplaceField: keep, drop and rename fields.

Kafka Connect's ``org.apache.kafka.connect.transforms.ReplaceField$Key`` / ``$Value``.
A field is kept when it is not in ``exclude`` and ``include`` is empty or lists it; kept
fields named in ``renames`` (``old:new,...``) get their new name. Field order is the
input's. ``whitelist`` and ``blacklist``, Kafka Connect's old names for ``include`` and
``exclude``, are accepted too. Works on Structs (with a derived schema, cached per input
schema) and on schemaless maps; a tombstone passes through unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, TypeVar

from omconnect.config.definition import ConfigDef
from omconnect.config.types import ConfigType, Importance
from omconnect.data.schema import Schema
from omconnect.data.struct import Struct
from omconnect.errors import ConfigError
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

__all__ = ["ReplaceField", "ReplaceFieldKey", "ReplaceFieldValue"]

R = TypeVar("R", bound=ConnectRecord)

_Plan = tuple[Schema, tuple[int, ...], bool]  # (schema, kept field indexes, identity)


def _renames(items: list[str]) -> dict[str, str]:
    renames: dict[str, str] = {}
    for item in items:
        old, sep, new = item.partition(":")
        if not sep or not old.strip() or not new.strip():
            raise ConfigError(f"invalid rename {item!r}; write old:new (e.g. renames=a:b,c:d)",
                              key="renames")
        renames[old.strip()] = new.strip()
    return renames


class ReplaceField(KeyOrValueTransformation):
    """Filter and rename fields. Use :class:`ReplaceFieldKey` or :class:`ReplaceFieldValue`."""

    config_def: ClassVar[ConfigDef] = (
        ConfigDef()
        .define("exclude", ConfigType.LIST, [], importance=Importance.MEDIUM,
                documentation="Fields to drop; they win over include.")
        .define("include", ConfigType.LIST, [], importance=Importance.MEDIUM,
                documentation="Fields to keep; empty keeps every field not excluded.")
        .define("renames", ConfigType.LIST, [], importance=Importance.MEDIUM,
                documentation="Renames as old:new pairs, e.g. foo:bar,abc:xyz.")
        .define("blacklist", ConfigType.LIST, None, importance=Importance.LOW,
                documentation="Deprecated name of exclude.")
        .define("whitelist", ConfigType.LIST, None, importance=Importance.LOW,
                documentation="Deprecated name of include.")
    )

    def configure(self, config: Mapping[str, Any]) -> None:
        """Read include/exclude/renames (and the deprecated whitelist/blacklist)."""
        values = self.config_def.parse(config)
        for old, new in (("blacklist", "exclude"), ("whitelist", "include")):
            if values[old] is not None:
                if config.get(new) is not None:
                    raise ConfigError(f"both {new} and its deprecated name {old} are set; "
                                      f"keep only {new}", key=old)
                values[new] = values[old]
        self._exclude = frozenset(values["exclude"])
        self._include = frozenset(values["include"])
        self._renames = _renames(values["renames"])
        self._cache: SchemaCache[_Plan] = SchemaCache(self._plan)

    def keeps(self, name: str) -> bool:
        """Whether the field ``name`` is kept."""
        return name not in self._exclude and (not self._include or name in self._include)

    def renamed(self, name: str) -> str:
        """The output name of the field ``name``."""
        return self._renames.get(name, name)

    def _plan(self, schema: Schema) -> _Plan:
        kept = [f for f in schema.fields if self.keeps(f.name)]
        derived = struct_schema_like(schema, [(self.renamed(f.name), f.schema) for f in kept])
        indexes = tuple(f.index for f in kept)
        identity = derived == schema and indexes == tuple(range(len(schema.fields)))
        return derived, indexes, identity

    def apply(self, record: R) -> R | None:
        """The record with the key's or value's fields filtered and renamed."""
        value = self.operating_value(record)
        if value is None:
            return record
        if self.operating_schema(record) is None:
            mapping = require_mapping(value, what=type(self).__name__)
            renames = self._renames
            updated = {renames.get(k, k): v for k, v in mapping.items() if self.keeps(k)}
            return self.new_record(record, None, updated)
        struct = require_struct(value, what=type(self).__name__)
        schema, indexes, identity = self._cache.get(struct.schema)
        if identity:
            return record
        values = struct.values()
        updated_struct = Struct.from_values(schema, [values[i] for i in indexes], validate=False)
        return self.new_record(record, schema, updated_struct)


class ReplaceFieldKey(ReplaceField):
    """ReplaceField on the record key (Kafka Connect's ``ReplaceField$Key``)."""

    operates_on = KEY


class ReplaceFieldValue(ReplaceField):
    """ReplaceField on the record value (Kafka Connect's ``ReplaceField$Value``)."""

    operates_on = VALUE
