"""Avro object container files, read block by block with fastavro.

The writer schema in the file's header becomes the Connect schema:

==============================  =============================================
Avro                            Connect
==============================  =============================================
record                          STRUCT (named with the record's full name)
``["null", T]`` (either order)  T, optional
other unions                    STRUCT ``io.confluent.connect.avro.Union`` with one
                                optional field per branch (named by type, or by
                                the named type's simple name); one field is set
boolean, int, long              BOOLEAN, INT32, INT64
float, double                   FLOAT32, FLOAT64
string, bytes                   STRING, BYTES
enum                            STRING (parameter ``io.confluent.connect.avro.Enum``)
fixed                           BYTES (parameter ``connect.fixed.size``)
array, map                      ARRAY, MAP with STRING keys
decimal                         Decimal (scale kept)
date                            Date
time-millis, time-micros        Time
timestamp-*, local-timestamp-*  Timestamp
uuid                            STRING
==============================  =============================================

Field defaults are not carried into the Connect schema (the records always hold every
field). A recursive type cannot be expressed in Connect and is an error. ``number`` is
the 1-based record number; ``skip`` passes over whole blocks without decoding them. A
corrupt file yields one error item at the first record it cannot read, then ends.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import uuid
from collections.abc import Callable, Iterator
from typing import IO, Any

import fastavro

from omconnect.data import logical
from omconnect.data.builder import SchemaBuilder
from omconnect.data.schema import (
    BOOLEAN_SCHEMA,
    BYTES_SCHEMA,
    FLOAT32_SCHEMA,
    FLOAT64_SCHEMA,
    INT32_SCHEMA,
    INT64_SCHEMA,
    STRING_SCHEMA,
    Schema,
    Type,
)
from omconnect.data.struct import SchemaAndValue, Struct
from omconnect.errors import DataError
from omconnect.source_base.formats.base import (
    ParsedRecord,
    RecordFormat,
    failed,
    record,
)

__all__ = ["UNION_SCHEMA_NAME", "AvroFormat", "avro_to_connect"]

UNION_SCHEMA_NAME = "io.confluent.connect.avro.Union"
ENUM_PARAMETER = "io.confluent.connect.avro.Enum"
FIXED_SIZE_PARAMETER = "connect.fixed.size"

ToConnect = Callable[[Any], Any] | None
"""Turns a decoded Avro value into its Connect value; ``None`` when it is the same."""

_PRIMITIVES: dict[str, Schema] = {
    "boolean": BOOLEAN_SCHEMA, "int": INT32_SCHEMA, "long": INT64_SCHEMA,
    "float": FLOAT32_SCHEMA, "double": FLOAT64_SCHEMA, "bytes": BYTES_SCHEMA,
    "string": STRING_SCHEMA,
}
_NAMED = ("record", "error", "enum", "fixed")


def _uuid_to_str(value: Any) -> Any:
    return str(value) if isinstance(value, uuid.UUID) else value


class _Mapper:
    """Maps one file's writer schema (resolving named references) to Connect."""

    def __init__(self) -> None:
        self.named: dict[str, Any] = {}
        self.done: dict[str, tuple[Schema, ToConnect]] = {}
        self.in_progress: set[str] = set()

    @staticmethod
    def full_name(name: str, namespace: str | None) -> str:
        if "." in name or not namespace:
            return name
        return f"{namespace}.{name}"

    def map(self, avro: Any, namespace: str | None, optional: bool = False,
            ) -> tuple[Schema, ToConnect]:
        schema, convert = self._map(avro, namespace)
        return (schema.with_optional() if optional else schema), convert

    def _map(self, avro: Any, namespace: str | None) -> tuple[Schema, ToConnect]:
        if isinstance(avro, list):
            return self._union(avro, namespace)
        if isinstance(avro, str):
            if avro in _PRIMITIVES:
                return _PRIMITIVES[avro], None
            if avro == "null":
                raise DataError("an Avro field of type null alone has no Connect schema")
            full = self.full_name(avro, namespace)
            if full not in self.named:
                full = avro if avro in self.named else full
            if full in self.in_progress:
                raise DataError(f"Avro type {full} is recursive; Connect schemas cannot be")
            if full in self.done:
                return self.done[full]
            if full not in self.named:
                raise DataError(f"unknown Avro type {avro!r}")
            return self._map(self.named[full], namespace)
        if not isinstance(avro, dict):
            raise DataError(f"not an Avro schema: {avro!r}")
        type_name = avro.get("type")
        logical_type = avro.get("logicalType")
        if logical_type is not None:
            mapped = self._logical(avro, logical_type)
            if mapped is not None:
                return mapped
        if type_name in ("record", "error"):
            return self._record(avro, namespace)
        if type_name == "enum":
            full = self.full_name(avro["name"], avro.get("namespace", namespace))
            self.named[full] = avro
            result: tuple[Schema, ToConnect] = (
                SchemaBuilder.string().parameter(ENUM_PARAMETER, full).build(), None)
            self.done[full] = result
            return result
        if type_name == "fixed":
            full = self.full_name(avro["name"], avro.get("namespace", namespace))
            self.named[full] = avro
            result = (SchemaBuilder.bytes().parameter(FIXED_SIZE_PARAMETER,
                                                      str(avro["size"])).build(), None)
            self.done[full] = result
            return result
        if type_name == "array":
            items, convert = self.map(avro["items"], namespace)
            schema = SchemaBuilder.array(items).build()
            if convert is None:
                return schema, None
            item_convert = convert
            return schema, lambda values: [item_convert(v) for v in values]
        if type_name == "map":
            values_schema, convert = self.map(avro["values"], namespace)
            schema = SchemaBuilder.map(STRING_SCHEMA, values_schema).build()
            if convert is None:
                return schema, None
            value_convert = convert
            return schema, lambda values: {k: value_convert(v) for k, v in values.items()}
        return self._map(type_name, namespace)  # {"type": "long"} and the like

    def _logical(self, avro: dict[str, Any], logical_type: str) -> tuple[Schema, ToConnect] | None:
        base = avro.get("type")
        if logical_type == "decimal" and base in ("bytes", "fixed"):
            return logical.decimal_schema(int(avro.get("scale", 0))), None
        if logical_type == "date" and base == "int":
            return logical.date_schema(), None
        if logical_type in ("time-millis", "time-micros"):
            return logical.time_schema(), None
        if logical_type in ("timestamp-millis", "timestamp-micros", "timestamp-nanos",
                            "local-timestamp-millis", "local-timestamp-micros"):
            return logical.timestamp_schema(), None
        if logical_type == "uuid":
            return STRING_SCHEMA, _uuid_to_str
        return None  # unknown: the underlying type

    def _record(self, avro: dict[str, Any], namespace: str | None) -> tuple[Schema, ToConnect]:
        record_namespace = avro.get("namespace", namespace)
        full = self.full_name(avro["name"], record_namespace)
        if "." in avro["name"]:
            record_namespace = avro["name"].rsplit(".", 1)[0]
        self.named[full] = avro
        self.in_progress.add(full)
        builder = SchemaBuilder.struct().name(full)
        if avro.get("doc"):
            builder.doc(str(avro["doc"]))
        names: list[str] = []
        converters: list[ToConnect] = []
        for field in avro["fields"]:
            schema, convert = self.map(field["type"], record_namespace)
            builder.field(field["name"], schema)
            names.append(field["name"])
            converters.append(convert)
        self.in_progress.discard(full)
        struct_schema = builder.build()
        from_values = Struct.from_values
        if all(c is None for c in converters):
            def convert_record(value: dict[str, Any]) -> Struct:
                return from_values(struct_schema, [value[n] for n in names], validate=False)
        else:
            pairs = list(zip(names, converters, strict=True))

            def convert_record(value: dict[str, Any]) -> Struct:
                return from_values(struct_schema, [
                    value[n] if c is None else c(value[n]) for n, c in pairs], validate=False)
        result = (struct_schema, convert_record)
        self.done[full] = result
        return result

    def _union(self, branches: list[Any], namespace: str | None) -> tuple[Schema, ToConnect]:
        others = [b for b in branches if b != "null"]
        optional = len(others) < len(branches)
        if len(others) == 1:
            schema, convert = self.map(others[0], namespace, optional=optional)
            tagged = self._is_named(others[0], namespace)
            if not tagged:
                if convert is None or not optional:
                    return schema, convert
                inner = convert
                return schema, lambda v: None if v is None else inner(v)
            # fastavro tags named types in unions: (name, value)
            if convert is None:
                return schema, lambda v: None if v is None else v[1]
            named_convert = convert
            return schema, lambda v: None if v is None else named_convert(v[1])
        builder = SchemaBuilder.struct().name(UNION_SCHEMA_NAME)
        members: list[tuple[str, Schema, ToConnect, bool, str | None]] = []
        for branch in others:
            schema, convert = self.map(branch, namespace, optional=True)
            named = self._named_full_name(branch, namespace)
            field_name = named.rsplit(".", 1)[-1] if named else self._type_name(branch)
            builder.field(field_name, schema)
            members.append((field_name, schema, convert, named is not None, named))
        union_schema = builder.build()
        if optional:
            union_schema = union_schema.with_optional()
        width = len(members)

        def convert_union(value: Any) -> Struct | None:
            if value is None:
                return None
            values: list[Any] = [None] * width
            for index, (_, schema, convert, named, full) in enumerate(members):
                if named:
                    if isinstance(value, tuple) and value[0] == full:
                        values[index] = value[1] if convert is None else convert(value[1])
                        break
                elif _matches(schema, value):
                    values[index] = value if convert is None else convert(value)
                    break
            else:
                raise DataError(f"value {value!r} matches no branch of the Avro union")
            return Struct.from_values(union_schema, values, validate=False)

        return union_schema, convert_union

    def _named_full_name(self, avro: Any, namespace: str | None) -> str | None:
        if isinstance(avro, dict) and avro.get("type") in _NAMED:
            return self.full_name(avro["name"], avro.get("namespace", namespace))
        if isinstance(avro, str) and avro not in _PRIMITIVES and avro != "null":
            full = self.full_name(avro, namespace)
            return full if full in self.named else avro
        return None

    def _is_named(self, avro: Any, namespace: str | None) -> bool:
        return self._named_full_name(avro, namespace) is not None

    @staticmethod
    def _type_name(avro: Any) -> str:
        if isinstance(avro, str):
            return avro
        if isinstance(avro, dict):
            return str(avro.get("type"))
        return "union"


_MATCH: dict[Type, tuple[type, ...]] = {
    Type.BOOLEAN: (bool,), Type.INT32: (int,), Type.INT64: (int,),
    Type.FLOAT32: (float,), Type.FLOAT64: (float,), Type.STRING: (str, uuid.UUID),
    Type.BYTES: (bytes,), Type.ARRAY: (list,), Type.MAP: (dict,),
}
_LOGICAL_MATCH: dict[str, type] = {
    logical.DECIMAL: decimal.Decimal, logical.DATE: dt.date, logical.TIME: dt.time,
    logical.TIMESTAMP: dt.datetime,
}


def _matches(schema: Schema, value: Any) -> bool:
    """Whether an untagged union value belongs to the branch of ``schema``."""
    if schema.name in _LOGICAL_MATCH:
        expected = _LOGICAL_MATCH[schema.name]
        if expected is dt.date:
            return isinstance(value, dt.date) and not isinstance(value, dt.datetime)
        return isinstance(value, expected)
    types = _MATCH.get(schema.type, ())
    if schema.type is Type.INT32 and isinstance(value, int) and not -(2**31) <= value < 2**31:
        return False
    return isinstance(value, types) and not (isinstance(value, bool) and bool not in types)


def avro_to_connect(avro_schema: Any) -> tuple[Schema, ToConnect]:
    """The Connect schema of a parsed-JSON Avro schema, and the converter of its values
    as fastavro decodes them (with ``return_named_type=True``); ``None`` means unchanged.

    Raises:
        DataError: The schema has no Connect equivalent (recursive, bare null).

    """
    return _Mapper().map(avro_schema, None)


class AvroFormat(RecordFormat):
    """Reads Avro object container files (``input.format=avro``).

    Args:
        **options: ``key_source`` and ``key_field``, as for :class:`RecordFormat`.

    """

    name = "avro"

    def _read(self, stream: IO[bytes], object_name: str, skip: int) -> Iterator[ParsedRecord]:
        number = 1
        try:
            blocks = fastavro.block_reader(stream, return_named_type=True)
            schema, convert = avro_to_connect(json.loads(blocks.metadata["avro.schema"]))
            key_at = self.struct_key_index(schema, object_name)
        except (ValueError, KeyError, EOFError, OSError) as exc:  # DataError is a ValueError
            message = exc.message if isinstance(exc, DataError) else f"not an Avro file: {exc}"
            yield failed(number, self.error(message, object_name, number))
            return
        key = self.object_key(object_name)
        key_name = self.key_field
        try:
            for block in blocks:
                count = block.num_records
                if skip >= count:
                    skip -= count
                    number += count
                    continue
                records = iter(block)
                for _ in range(skip):
                    next(records)
                number += skip
                skip = 0
                for decoded in records:
                    value: Any = decoded if convert is None else convert(decoded)
                    if key_at is not None:
                        key = SchemaAndValue(key_at[1], value.get(key_name))
                    yield record(number, key, SchemaAndValue(schema, value))
                    number += 1
        except Exception as exc:  # fastavro raises many types on corrupt input
            yield failed(number, self.error(
                f"corrupt Avro data: {type(exc).__name__}: {exc}", object_name, number))
