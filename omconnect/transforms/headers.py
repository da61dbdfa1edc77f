"""InsertHeader and DropHeaders: add a constant header, remove headers by key.

Kafka Connect's ``org.apache.kafka.connect.transforms.InsertHeader`` and ``DropHeaders``.
InsertHeader appends a header (headers may repeat, so an existing one is kept);
``value.literal`` is typed as Kafka Connect's ``Values.parseString`` types scalars:
``true``/``false`` → boolean, an integer → the narrowest of int8..int64, a decimal number
→ float64, anything else → the string as written.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, ClassVar, TypeVar

from omconnect.config.definition import ConfigDef
from omconnect.config.types import ConfigType, Importance
from omconnect.config.validators import NonEmptyString, ValidList
from omconnect.data.schema import Schema, Type, integer_range
from omconnect.records import ConnectRecord
from omconnect.transforms.base import Transformation
from omconnect.transforms.support import with_headers

__all__ = ["DropHeaders", "InsertHeader", "parse_literal"]

R = TypeVar("R", bound=ConnectRecord)

_INTEGER = re.compile(r"[+-]?\d+")
_DECIMAL = re.compile(r"[+-]?(?:\d+\.\d*|\.\d+|\d+(?=[eE]))(?:[eE][+-]?\d+)?")


def parse_literal(text: str) -> tuple[Schema, Any]:
    """The schema and value of a configured literal (see the module docstring)."""
    stripped = text.strip()
    if stripped.lower() in ("true", "false"):
        return Schema(type=Type.BOOLEAN), stripped.lower() == "true"
    if _INTEGER.fullmatch(stripped):
        number = int(stripped)
        for type_ in (Type.INT8, Type.INT16, Type.INT32, Type.INT64):
            low, high = integer_range(type_)
            if low <= number <= high:
                return Schema(type=type_), number
    elif _DECIMAL.fullmatch(stripped):
        return Schema(type=Type.FLOAT64), float(stripped)
    return Schema(type=Type.STRING), text


class InsertHeader(Transformation):
    """Append a header with a constant value to every record."""

    config_def: ClassVar[ConfigDef] = (
        ConfigDef()
        .define("header", ConfigType.STRING, importance=Importance.HIGH,
                validators=[NonEmptyString()], documentation="The header's key.")
        .define("value.literal", ConfigType.STRING, importance=Importance.HIGH,
                documentation="The header's value (typed: boolean, integer, float or string).")
    )

    def configure(self, config: Mapping[str, Any]) -> None:
        """Read the header key and type its value."""
        values = self.config_def.parse(config)
        self._key: str = values["header"]
        self._schema, self._value = parse_literal(values["value.literal"])

    def apply_columns(self, batch: Any, serialize_header: Any) -> Any:
        """The header appended to every row's ``headers`` (serialised per topic)."""
        from omconnect.columnar.transforms import append_header

        return append_header(batch, self._key, lambda topic: serialize_header(
            topic, self._key, self._schema, self._value)), None

    def apply(self, record: R) -> R | None:
        """The record with the header appended."""
        return with_headers(
            record, record.headers.with_header(self._key, self._value, self._schema))


class DropHeaders(Transformation):
    """Remove every header whose key is listed."""

    config_def: ClassVar[ConfigDef] = ConfigDef().define(
        "headers", ConfigType.LIST, importance=Importance.HIGH,
        validators=[ValidList(allow_empty=False)], documentation="The header keys to remove.")

    def configure(self, config: Mapping[str, Any]) -> None:
        """Read the keys to remove."""
        self._keys = frozenset(self.config_def.parse(config)["headers"])

    def apply_columns(self, batch: Any, serialize_header: Any) -> Any:
        """Every listed header removed from the ``headers`` column."""
        from omconnect.columnar.transforms import drop_headers

        return drop_headers(batch, self._keys), None

    def apply(self, record: R) -> R | None:
        """The record without the listed headers."""
        keys = self._keys
        if not any(header.key in keys for header in record.headers):
            return record
        return with_headers(record, record.headers.without(*keys))
