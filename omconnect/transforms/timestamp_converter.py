"""TimestampConverter: convert timestamps between strings, epoch numbers and logical types.

Kafka Connect's ``org.apache.kafka.connect.transforms.TimestampConverter$Key`` / ``$Value``.
Converts the whole key/value, or the field ``field`` of a Struct or map, to
``target.type``:

==========  ==========================================  ================================
target      value                                       schema
==========  ==========================================  ================================
string      text in ``format`` (SimpleDateFormat, UTC)  string
unix        epoch number in ``unix.precision`` units    int64
Date        :class:`datetime.date` (the UTC day)        Date
Time        :class:`datetime.time` (UTC time of day)    Time
Timestamp   aware UTC :class:`datetime.datetime`        Timestamp
==========  ==========================================  ================================

The input's kind comes from its schema (Timestamp/Date/Time logical, int64 → unix, string)
or, schemaless, from its Python type (datetime, date, time, int, str). Strings are parsed
with ``format`` too. Microseconds are kept where the source has them (Kafka Connect keeps
milliseconds); nanoseconds are truncated. Null stays null; a tombstone passes through.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, TypeVar

from omconnect.config.definition import ConfigDef
from omconnect.config.types import ConfigType, Importance
from omconnect.config.validators import OneOf
from omconnect.data import logical
from omconnect.data.schema import Schema, Type
from omconnect.data.struct import Struct
from omconnect.errors import ConfigError, DataError
from omconnect.records import ConnectRecord
from omconnect.transforms.java import JavaDateFormat
from omconnect.transforms.support import (
    KEY,
    VALUE,
    KeyOrValueTransformation,
    SchemaCache,
    field_of,
    require_mapping,
    require_struct,
    struct_schema_like,
)

__all__ = ["TimestampConverter", "TimestampConverterKey", "TimestampConverterValue"]

R = TypeVar("R", bound=ConnectRecord)

STRING, UNIX, DATE, TIME, TIMESTAMP = "string", "unix", "Date", "Time", "Timestamp"
_TARGETS = (STRING, UNIX, DATE, TIME, TIMESTAMP)
_PRECISIONS = {"seconds": 1, "milliseconds": 1_000, "microseconds": 1_000_000,
               "nanoseconds": 1_000_000_000}
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_EPOCH_DATE = _EPOCH.date()


def _kind_of_schema(schema: Schema, where: str) -> str:
    if schema.name == logical.TIMESTAMP:
        return TIMESTAMP
    if schema.name == logical.DATE:
        return DATE
    if schema.name == logical.TIME:
        return TIME
    if schema.type is Type.INT64 and schema.name is None:
        return UNIX
    if schema.type is Type.STRING and schema.name is None:
        return STRING
    raise DataError(
        f"TimestampConverter: {where} has schema {schema}; expected a Timestamp, Date or Time "
        "logical type, int64 (epoch) or string"
    )


def _kind_of_value(value: Any, where: str) -> str:
    if isinstance(value, dt.datetime):
        return TIMESTAMP
    if isinstance(value, dt.date):
        return DATE
    if isinstance(value, dt.time):
        return TIME
    if isinstance(value, int) and not isinstance(value, bool):
        return UNIX
    if isinstance(value, str):
        return STRING
    raise DataError(
        f"TimestampConverter: {where} is a {type(value).__name__}; expected a datetime, date, "
        "time, int (epoch) or str"
    )


class TimestampConverter(KeyOrValueTransformation):
    """Convert timestamps. Use :class:`TimestampConverterKey` or
    :class:`TimestampConverterValue`.
    """

    config_def: ClassVar[ConfigDef] = (
        ConfigDef()
        .define("target.type", ConfigType.STRING, importance=Importance.HIGH,
                validators=[OneOf(_TARGETS)],
                documentation="What to convert to: string, unix, Date, Time or Timestamp.")
        .define("field", ConfigType.STRING, "", importance=Importance.HIGH,
                documentation="The field to convert; empty converts the whole key/value.")
        .define("format", ConfigType.STRING, "", importance=Importance.MEDIUM,
                documentation="A java.text.SimpleDateFormat pattern (UTC), needed to write "
                              "or read strings, e.g. yyyy-MM-dd'T'HH:mm:ss.SSSX.")
        .define("unix.precision", ConfigType.STRING, "milliseconds",
                importance=Importance.LOW, validators=[OneOf(tuple(_PRECISIONS))],
                documentation="Units of epoch numbers: seconds, milliseconds, microseconds "
                              "or nanoseconds.")
    )

    def configure(self, config: Mapping[str, Any]) -> None:
        """Read the target type, field, format and precision."""
        values = self.config_def.parse(config)
        by_lower = {t.lower(): t for t in _TARGETS}
        self._target = by_lower[values["target.type"].strip().lower()]
        self._field: str = values["field"].strip()
        pattern: str = values["format"]
        self._format: JavaDateFormat | None = None
        if pattern.strip():
            try:
                self._format = JavaDateFormat(pattern)
            except ValueError as exc:
                raise ConfigError(str(exc), key="format") from None
        elif self._target == STRING:
            raise ConfigError("target.type string needs a format; set format to a "
                              "SimpleDateFormat pattern, e.g. yyyy-MM-dd'T'HH:mm:ss.SSSX",
                              key="format")
        self._per_second = _PRECISIONS[values["unix.precision"].strip().lower()]
        target_schemas = {
            STRING: Schema(type=Type.STRING), UNIX: Schema(type=Type.INT64),
            DATE: logical.date_schema(), TIME: logical.time_schema(),
            TIMESTAMP: logical.timestamp_schema(),
        }
        self._target_schema = target_schemas[self._target]
        self._output: Callable[[dt.datetime], Any] = {
            STRING: self._to_string, UNIX: self._to_unix, DATE: lambda t: t.date(),
            TIME: lambda t: t.time(), TIMESTAMP: lambda t: t,
        }[self._target]
        self._whole_cache: SchemaCache[tuple[Schema, str]] = SchemaCache(self._whole_plan)
        self._field_cache: SchemaCache[tuple[Schema, int, str]] = SchemaCache(self._field_plan)

    # -- conversions ----------------------------------------------------------------------
    def _to_string(self, when: dt.datetime) -> str:
        assert self._format is not None
        return self._format.format(when)

    def _to_unix(self, when: dt.datetime) -> int:
        delta = when - _EPOCH
        micros = (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
        return micros * self._per_second // 1_000_000

    def _instant(self, value: Any, kind: str, where: str) -> dt.datetime:
        if kind == TIMESTAMP:
            stamp: dt.datetime = value
            return stamp.astimezone(dt.UTC) if stamp.tzinfo else stamp.replace(tzinfo=dt.UTC)
        if kind == UNIX:
            micros = value * 1_000_000 // self._per_second
            return _EPOCH + dt.timedelta(microseconds=micros)
        if kind == DATE:
            return dt.datetime.combine(value, dt.time(0), tzinfo=dt.UTC)
        if kind == TIME:
            return dt.datetime.combine(_EPOCH_DATE, value.replace(tzinfo=None), tzinfo=dt.UTC)
        if self._format is None:
            raise DataError(f"TimestampConverter: {where} is a string, which needs the format "
                            "option to be parsed; set format")
        try:
            return self._format.parse(value)
        except ValueError as exc:
            raise DataError(f"TimestampConverter: {where}: {exc}") from None

    def convert(self, value: Any, kind: str | None = None, where: str = "the value") -> Any:
        """``value`` converted to the target type (``kind`` inferred when not given)."""
        if value is None:
            return None
        if kind is None:
            kind = _kind_of_value(value, where)
        elif kind == TIMESTAMP and not isinstance(value, dt.datetime):
            raise DataError(f"TimestampConverter: {where} is a {type(value).__name__}, "
                            "not the datetime its Timestamp schema promises")
        if kind == self._target and kind != STRING:
            return value
        return self._output(self._instant(value, kind, where))

    # -- schemas --------------------------------------------------------------------------
    def _output_schema(self, source: Schema) -> Schema:
        return self._target_schema.with_optional(source.optional)

    def _whole_plan(self, schema: Schema) -> tuple[Schema, str]:
        return self._output_schema(schema), _kind_of_schema(schema, f"the {self.operates_on}")

    def _field_plan(self, schema: Schema) -> tuple[Schema, int, str]:
        field = field_of(schema, self._field, what="TimestampConverter")
        kind = _kind_of_schema(field.schema, f"field {field.name!r}")
        fields = [(f.name, self._output_schema(f.schema) if f is field else f.schema)
                  for f in schema.fields]
        return struct_schema_like(schema, fields), field.index, kind

    def apply(self, record: R) -> R | None:
        """The record with its timestamp (key/value or field) converted."""
        value = self.operating_value(record)
        if value is None:
            return record
        schema = self.operating_schema(record)
        if not self._field:
            if schema is None:
                return self.new_record(record, None, self.convert(value))
            target_schema, kind = self._whole_cache.get(schema)
            return self.new_record(record, target_schema, self.convert(value, kind))
        where = f"field {self._field!r}"
        if schema is None:
            updated = dict(require_mapping(value, what=type(self).__name__))
            if self._field not in updated:
                return record  # nothing to convert (as a null field)
            updated[self._field] = self.convert(updated[self._field], where=where)
            return self.new_record(record, None, updated)
        struct = require_struct(value, what=type(self).__name__)
        derived, index, kind = self._field_cache.get(struct.schema)
        values = struct.values()
        values[index] = self.convert(values[index], kind, where)
        return self.new_record(record, derived,
                               Struct.from_values(derived, values, validate=False))


class TimestampConverterKey(TimestampConverter):
    """TimestampConverter on the record key (Kafka Connect's ``TimestampConverter$Key``)."""

    operates_on = KEY


class TimestampConverterValue(TimestampConverter):
    """TimestampConverter on the record value (Kafka Connect's ``TimestampConverter$Value``)."""

    operates_on = VALUE
