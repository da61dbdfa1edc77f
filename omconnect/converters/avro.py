"""AvroConverter: Avro binary in the single-object encoding, with fastavro.

Each message is ``C3 01`` + the 8-byte CRC-64-AVRO fingerprint of the writer schema +
the Avro binary body (Avro's own single-object encoding, readable by any Avro library
that knows the writer schema). Connect schemas map to Avro schemas as Confluent's
AvroConverter maps them (see :mod:`omconnect.converters.avro_data`).

**A reader needs the writer's schema.** Writers register theirs in the process's schema
registry (:data:`~omconnect.converters.avro_registry.DEFAULT_REGISTRY`) under the subject
``<topic>-key`` or ``<topic>-value``, so a reader in the same process (the usual
standalone worker running source and sink) finds it. A reader in another process needs the
schemas as ``.avsc`` files listed in ``avro.schemas``. There is no Confluent Schema
Registry support yet: ``schema.registry.url`` is refused rather than ignored, and the
bytes are not Confluent's wire format (``00`` + 4-byte schema id).

Options (``key.converter.*`` / ``value.converter.*``):

* ``avro.schemas`` (empty): ``.avsc`` files of writer schemas to know when reading.
* ``avro.reader.schema`` (unset): an ``.avsc`` file; every message is read into this
  schema by Avro schema resolution (e.g. to see old and new data in one shape).
* ``connect.meta.data`` (true): write ``connect.*`` properties into the Avro schema so the
  Connect schema (INT8/INT16, names, versions, docs, parameters) is rebuilt exactly.
* ``schemas.cache.size`` (1000): schemas whose compiled form is kept, per direction.

Nulls: a null value is a tombstone (``None`` bytes), whatever its schema, as with
Confluent's AvroConverter; ``None`` bytes read as a null with no schema. A value without
a schema is refused (Avro needs one) unless it is a Struct, which carries its own.
"""

from __future__ import annotations

import io
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any

import attrs
from fastavro import parse_schema, schemaless_reader, schemaless_writer

from omconnect.config.definition import ConfigDef
from omconnect.config.types import ConfigType, Importance
from omconnect.config.validators import Range
from omconnect.converters.avro_data import (
    Decode,
    compile_from_avro,
    compile_to_avro,
    from_avro_schema,
    strip_unsupported_logical_types,
    to_avro_schema,
)
from omconnect.converters.avro_registry import (
    DEFAULT_REGISTRY,
    MARKER,
    SchemaRegistry,
    avro_fingerprint,
    load_schema_file,
    subject_of,
)
from omconnect.converters.base import Converter
from omconnect.converters.checks import check_value
from omconnect.converters.encoders import Encode
from omconnect.converters.schema_cache import SchemaCache
from omconnect.data.schema import Schema
from omconnect.data.struct import SchemaAndValue, Struct
from omconnect.errors import ConfigError, DataError

__all__ = ["AvroConverter", "register_schema"]

SCHEMAS = "avro.schemas"
READER_SCHEMA = "avro.reader.schema"
CONNECT_META_DATA = "connect.meta.data"
SCHEMAS_CACHE_SIZE = "schemas.cache.size"
SCHEMA_REGISTRY_URL = "schema.registry.url"
_HEADER_SIZE = len(MARKER) + 8


def register_schema(avro_schema: Any, subject: str | None = None) -> bytes:
    """Make an Avro writer schema known to every AvroConverter of this process; returns
    its fingerprint.

    Args:
        avro_schema: The schema (JSON-able, as in an ``.avsc`` file).
        subject: ``<topic>-key`` or ``<topic>-value`` to prefer it for that topic's keys
            or values (see :mod:`omconnect.converters.avro_registry`).

    Raises:
        DataError: Not a valid Avro schema.

    """
    return DEFAULT_REGISTRY.register(avro_schema, subject)


@attrs.frozen(slots=True)
class _Writer:
    avro_schema: Any
    parsed: Any
    header: bytes
    encode: Encode
    topics: set[str] = attrs.field(factory=set, eq=False)  # registered for these


@attrs.frozen(slots=True)
class _Reader:
    schema: Schema
    writer: Any
    reader: Any
    decode: Decode


class AvroConverter(Converter):
    """Converts values to and from Avro (single-object encoding), with fastavro.

    Entry-point name ``avro``.
    """

    config_def = (
        ConfigDef()
        .define(SCHEMAS, ConfigType.LIST, [], importance=Importance.HIGH,
                documentation="Avro schema files (.avsc) of the writers whose data this "
                "converter reads, when they ran in another process.")
        .define(READER_SCHEMA, ConfigType.STRING, None, importance=Importance.MEDIUM,
                documentation="An Avro schema file (.avsc) to read every message into, by "
                "Avro schema resolution.")
        .define(CONNECT_META_DATA, ConfigType.BOOLEAN, True, importance=Importance.LOW,
                documentation="Write connect.* properties into Avro schemas so Connect "
                "schemas are rebuilt exactly when read.")
        .define(SCHEMAS_CACHE_SIZE, ConfigType.INT, 1000, importance=Importance.LOW,
                validators=[Range(min=1)],
                documentation="The most schemas whose compiled form this converter keeps.")
        .define(SCHEMA_REGISTRY_URL, ConfigType.STRING, None, importance=Importance.LOW,
                documentation="Not supported: there is no Confluent Schema Registry client "
                "yet. Setting it is an error.")
    )

    def __init__(self, registry: SchemaRegistry = DEFAULT_REGISTRY) -> None:
        self._registry = registry
        self._connect_meta = True
        self._cache_size = 1000
        self._writers: SchemaCache[_Writer] = SchemaCache(self._cache_size)
        self._readers: OrderedDict[tuple[str, bytes], _Reader] = OrderedDict()
        self._reader_schema: Any = None
        self._is_key = False
        self._local: dict[bytes, Any] = {}  # from avro.schemas files

    def configure(self, config: Mapping[str, Any], is_key: bool = False) -> None:
        """Apply the settings and register the ``avro.schemas`` files.

        Raises:
            ConfigError: A setting is invalid, a schema file is missing or invalid, or
                ``schema.registry.url`` is set.

        """
        prefix = "key.converter." if is_key else "value.converter."
        values = self.config_def.parse(config, what="Avro converter", prefix=prefix)
        if values[SCHEMA_REGISTRY_URL]:
            raise ConfigError(
                f"{prefix}{SCHEMA_REGISTRY_URL}: the Confluent Schema Registry is not "
                f"supported yet; remove it, and give readers in other processes the writer "
                f"schemas as .avsc files in {prefix}{SCHEMAS}",
                key=prefix + SCHEMA_REGISTRY_URL,
            )
        self._is_key = is_key
        self._connect_meta = bool(values[CONNECT_META_DATA])
        self._cache_size = int(values[SCHEMAS_CACHE_SIZE])
        self._writers = SchemaCache(self._cache_size)
        self._readers = OrderedDict()
        self._local = {}
        for path in values[SCHEMAS]:
            avro_schema = self._load(path, prefix + SCHEMAS)
            self._local[avro_fingerprint(avro_schema)] = avro_schema
        reader_path = values[READER_SCHEMA]
        self._reader_schema = self._load(reader_path, prefix + READER_SCHEMA) if reader_path \
            else None

    @staticmethod
    def _load(path: str, key: str) -> Any:
        """The Avro schema in file ``path``, checked to have a Connect form."""
        try:
            avro_schema = load_schema_file(path)
            from_avro_schema(parse_schema(strip_unsupported_logical_types(avro_schema)))
            return avro_schema
        except OSError as exc:
            raise ConfigError(f"{key}: cannot read Avro schema file {path!r}: "
                              f"{exc.strerror or exc}", key=key) from None
        except (ValueError, DataError) as exc:
            raise ConfigError(f"{key}: {path!r} is not a usable Avro schema: {exc}",
                              key=key) from None
        except Exception as exc:  # fastavro's schema errors
            raise ConfigError(f"{key}: {path!r} is not a valid Avro schema: {exc}",
                              key=key) from None

    # -- Connect -> bytes ------------------------------------------------------------
    def from_connect(self, topic: str, schema: Schema | None, value: Any) -> bytes | None:
        """Serialise ``value`` of ``schema`` (single-object encoding); ``None`` stays
        ``None``.

        Raises:
            DataError: No schema, or the value does not match it.

        """
        return self._write(topic, schema, value, io.BytesIO())

    def from_connect_batch(
        self, topic: str, items: Sequence[tuple[Schema | None, Any]]
    ) -> list[bytes | None]:
        """:meth:`from_connect` for each (schema, value), in order."""
        buffer = io.BytesIO()
        write = self._write
        return [write(topic, schema, value, buffer) for schema, value in items]

    def _write(
        self, topic: str, schema: Schema | None, value: Any, buffer: io.BytesIO
    ) -> bytes | None:
        if value is None:
            return None
        if schema is None:
            if not isinstance(value, Struct):
                raise DataError(
                    f"the Avro converter needs a schema, and this {type(value).__name__} "
                    "value has none; give the record a schema, or use the json converter "
                    "with schemas.enable=false for schemaless data", topic=topic)
            schema = value.schema
        writer = self._writers.get(schema) or self._compile_writer(schema, topic)
        if topic not in writer.topics:  # register once per topic, not per record
            self._registry.register(writer.avro_schema, subject_of(topic, self._is_key))
            writer.topics.add(topic)
        try:
            check_value(schema, value)
            datum = writer.encode(value)
        except DataError as exc:
            exc.context.setdefault("topic", topic)
            raise
        buffer.seek(0)
        buffer.truncate()
        buffer.write(writer.header)
        try:
            schemaless_writer(buffer, writer.parsed, datum)
        except (ValueError, TypeError, AttributeError, KeyError, OverflowError) as exc:
            raise DataError(f"cannot write the value as Avro: {exc}", topic=topic) from None
        return buffer.getvalue()

    def _compile_writer(self, schema: Schema, topic: str) -> _Writer:
        try:
            avro_schema = to_avro_schema(schema, connect_meta=self._connect_meta)
            parsed = parse_schema(avro_schema)
        except DataError as exc:
            exc.context.setdefault("topic", topic)
            raise
        except Exception as exc:  # fastavro's schema errors
            raise DataError(f"the schema {schema} has no valid Avro form: {exc}",
                            topic=topic) from exc
        key = avro_fingerprint(avro_schema)
        writer = _Writer(avro_schema, parsed, MARKER + key, compile_to_avro(schema))
        self._writers.put(schema, writer)
        return writer

    # -- bytes -> Connect ------------------------------------------------------------
    def to_connect(self, topic: str, data: bytes | None) -> SchemaAndValue:
        """Deserialise single-object encoded Avro.

        Raises:
            DataError: Not single-object encoded, an unknown writer schema (the message
                says how to make it known), or a corrupt body.

        """
        if data is None:
            return SchemaAndValue(None, None)
        if len(data) < _HEADER_SIZE or data[:2] != MARKER:
            raise DataError(
                "not Avro single-object encoding (no C3 01 marker and fingerprint); was it "
                "written by another converter or Confluent's wire format?", topic=topic)
        key = bytes(data[2:_HEADER_SIZE])
        reader = self._readers.get((topic, key))
        if reader is None:
            reader = self._compile_reader(key, topic)
        buffer = io.BytesIO(data[_HEADER_SIZE:])  # twice as fast to read as a seek(10)
        try:
            datum = schemaless_reader(buffer, reader.writer, reader.reader)
        except Exception as exc:  # fastavro raises EOFError, ValueError, IndexError, ...
            raise DataError(f"corrupt Avro body for writer schema {key.hex()}: "
                            f"{type(exc).__name__}: {exc}", topic=topic) from None
        if buffer.tell() != len(data) - _HEADER_SIZE:
            left = len(data) - _HEADER_SIZE - buffer.tell()
            raise DataError(f"{left} bytes left after the Avro body for "
                            f"writer schema {key.hex()}: corrupt or wrong schema", topic=topic)
        return SchemaAndValue(reader.schema, reader.decode(datum))

    def _compile_reader(self, key: bytes, topic: str) -> _Reader:
        writer_schema = self._local.get(key)
        if writer_schema is None:
            writer_schema = self._registry.get(key, subject_of(topic, self._is_key))
        if writer_schema is None:
            raise DataError(
                f"unknown Avro writer schema (fingerprint {key.hex()}): a reader needs the "
                "writer's schema; list its .avsc file in the converter's avro.schemas "
                "setting (writers in the same process register theirs automatically)",
                topic=topic)
        try:
            writer = parse_schema(strip_unsupported_logical_types(writer_schema))
            reader = None
            if self._reader_schema is not None:
                reader = parse_schema(strip_unsupported_logical_types(self._reader_schema))
            schema = from_avro_schema(reader if reader is not None else writer)
        except DataError as exc:
            exc.context.setdefault("topic", topic)
            raise
        except Exception as exc:  # fastavro's schema errors
            raise DataError(f"writer schema {key.hex()} is not usable: {exc}",
                            topic=topic) from exc
        compiled = _Reader(schema, writer, reader, compile_from_avro(schema))
        self._readers[(topic, key)] = compiled
        while len(self._readers) > self._cache_size:
            self._readers.popitem(last=False)
        return compiled

