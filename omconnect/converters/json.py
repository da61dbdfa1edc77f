"""JsonConverter: JSON bytes, wire-compatible with Kafka Connect's ``JsonConverter``.

With ``schemas.enable=true`` (the default) every message is an envelope carrying the schema
next to the value, exactly as Kafka Connect writes it::

    {"schema":{"type":"struct","fields":[{"type":"int32","optional":false,"field":"id"}],
               "optional":false,"name":"x"},"payload":{"id":1}}

With ``schemas.enable=false`` a message is the plain JSON of the value, and reading gives
schemaless values (objects as dicts, arrays as lists, numbers as int or float).

Options (``key.converter.*`` / ``value.converter.*`` / ``header.converter.*``):

* ``schemas.enable`` (true): write and expect the envelope.
* ``schemas.cache.size`` (1000): schemas whose compiled form is kept, per direction.
* ``decimal.format`` (BASE64): Decimals as base64 bytes, or ``NUMERIC`` JSON numbers.
  Both forms are read whatever this says.
* ``replace.null.with.default`` (true): a null of a schema with a default becomes the
  default, when writing and when reading.
* ``schema.content`` (unset): a schema in Kafka Connect's JSON form used for every message
  read; messages are then plain payloads (an envelope's own schema is ignored). Reading
  only, as in Kafka Connect.

Nulls: a null value with no schema is a tombstone (``None`` bytes) and ``None`` bytes read
as a null with no schema. A null value *with* a schema is written as JSON: with the
envelope, ``{"schema":...,"payload":null}`` when the schema is optional, the default
when it has one, otherwise a :class:`~omconnect.errors.DataError`.

A value with no schema is written with ``"schema":null`` (Kafka Connect does not infer a
schema) except a :class:`~omconnect.data.Struct`, which carries its own schema.
"""

from __future__ import annotations

import decimal
import json
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from omconnect.config.definition import ConfigDef
from omconnect.config.types import ConfigType, Importance
from omconnect.config.validators import OneOf, Range
from omconnect.converters.base import Converter, HeaderConverter
from omconnect.converters.checks import check_value, role_prefix
from omconnect.converters.encoders import Encode
from omconnect.converters.json_schema import schema_from_json, schema_to_json
from omconnect.converters.json_values import (
    Decode,
    JsonOptions,
    compile_decoder,
    compile_encoder,
    decode_schemaless,
    dumps_exact,
    encode_schemaless,
    schema_has_numeric_decimal,
)
from omconnect.converters.schema_cache import SchemaCache
from omconnect.data import logical
from omconnect.data.schema import OPTIONAL_STRING_SCHEMA, STRING_SCHEMA, Schema, Type
from omconnect.data.struct import SchemaAndValue, Struct
from omconnect.errors import ConfigError, DataError

__all__ = ["JsonConverter"]

SCHEMAS_ENABLE = "schemas.enable"
SCHEMAS_CACHE_SIZE = "schemas.cache.size"
DECIMAL_FORMAT = "decimal.format"
REPLACE_NULL_WITH_DEFAULT = "replace.null.with.default"
SCHEMA_CONTENT = "schema.content"

_ENVELOPE_START = '{"schema":'
_PAYLOAD_KEY = ',"payload":'
_NO_SCHEMA_HEAD = _ENVELOPE_START + "null" + _PAYLOAD_KEY
"""The envelope head of a value written without a schema."""
_ENVELOPE_ERROR = (
    'JsonConverter with schemas.enable requires "schema" and "payload" fields and may not '
    "contain additional fields. If you are trying to deserialize plain JSON data, set "
    "schemas.enable=false in your converter configuration."
)


def _unsupported(value: Any) -> Any:
    raise TypeError(f"a {type(value).__name__} has no JSON form")


def _make_fast_json() -> Any:
    """Compact JSON text of a value, UTF-8 (no escapes of non-ASCII), NaN refused.

    Uses the C encoder behind :func:`json.dumps` made once: ``JSONEncoder.encode`` builds a
    new one on every call, which costs as much as encoding a small record.
    """
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:  # not CPython: the pure-Python encoder
        return json.JSONEncoder(ensure_ascii=False, separators=(",", ":"),
                                allow_nan=False).encode
    encode_chunks = make(None, _unsupported, json.encoder.encode_basestring,
                         None, ":", ",", False, False, False)

    def fast_json(value: Any) -> str:
        chunks = encode_chunks(value, 0)
        return chunks[0] if len(chunks) == 1 else "".join(chunks)

    return fast_json


_fast_json = _make_fast_json()
_FLOAT_DECODER = json.JSONDecoder()
_DECIMAL_DECODER = json.JSONDecoder(parse_float=decimal.Decimal)
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode


@attrs.frozen(slots=True)
class _Writer:
    """What writing values of one schema needs: the envelope head and the encoder."""

    head: str
    tail: str
    encode: Encode
    exact: bool  # the payload may hold Decimals: write with dumps_exact


@attrs.frozen(slots=True)
class _Reader:
    """What reading values of one schema needs."""

    schema: Schema | None
    decode: Decode
    parser: json.JSONDecoder


class JsonConverter(Converter, HeaderConverter):
    """Converts values to and from JSON, as Kafka Connect's ``JsonConverter`` does.

    Also a :class:`HeaderConverter` (header values in the same JSON form), as in Kafka
    Connect. Entry-point name ``json``; Kafka Connect's class name
    ``org.apache.kafka.connect.json.JsonConverter`` is an alias.
    """

    config_def = (
        ConfigDef()
        .define(SCHEMAS_ENABLE, ConfigType.BOOLEAN, True, importance=Importance.HIGH,
                documentation="Include the schema with each value, in the "
                '{"schema": ..., "payload": ...} envelope, and expect it when reading.')
        .define(SCHEMAS_CACHE_SIZE, ConfigType.INT, 1000, importance=Importance.HIGH,
                validators=[Range(min=1)],
                documentation="The most schemas whose compiled form this converter keeps.")
        .define(DECIMAL_FORMAT, ConfigType.STRING, "BASE64", importance=Importance.LOW,
                validators=[OneOf(("BASE64", "NUMERIC"))],
                documentation="How Decimals are written: BASE64 (bytes, the default) or "
                "NUMERIC (JSON numbers). Both are read.")
        .define(REPLACE_NULL_WITH_DEFAULT, ConfigType.BOOLEAN, True, importance=Importance.LOW,
                documentation="Replace a null by its schema's default value, if it has one, "
                "when writing and reading.")
        .define(SCHEMA_CONTENT, ConfigType.STRING, None, importance=Importance.HIGH,
                documentation="A schema in Kafka Connect's JSON form to read every message "
                "with; messages are then plain payloads. Reading only; needs "
                "schemas.enable=true.")
    )

    def __init__(self) -> None:
        self._schemas_enabled = True
        self._options = JsonOptions()
        self._cache_size = 1000
        self._writers: SchemaCache[_Writer] = SchemaCache(self._cache_size)
        self._readers: OrderedDict[str, _Reader] = OrderedDict()
        # The envelope head ({"schema":S,"payload":) last read, and S's reader.
        self._last_reader: tuple[str, _Reader] | None = None
        self._fixed_reader: _Reader | None = None

    def configure(self, config: Mapping[str, Any], is_key: bool | None = None) -> None:
        """Apply the settings (prefix stripped).

        Args:
            config: The converter's settings.
            is_key: Whether this instance converts record keys; ``None`` when it is
                configured as a header converter.

        Raises:
            ConfigError: A setting is invalid; the message names the key.

        """
        prefix = role_prefix(is_key)
        values = self.config_def.parse(config, what="JSON converter", prefix=prefix)
        self._schemas_enabled = bool(values[SCHEMAS_ENABLE])
        self._options = JsonOptions(
            decimal_numeric=str(values[DECIMAL_FORMAT]).upper() == "NUMERIC",
            replace_null_with_default=bool(values[REPLACE_NULL_WITH_DEFAULT]),
        )
        self._cache_size = int(values[SCHEMAS_CACHE_SIZE])
        self._writers = SchemaCache(self._cache_size)
        self._readers = OrderedDict()
        self._last_reader = None
        self._fixed_reader = None
        content = values[SCHEMA_CONTENT]
        if content:
            try:
                schema_obj = json.loads(content)
                self._fixed_reader = self._compile_reader(schema_obj)
            except (ValueError, DataError) as exc:
                raise ConfigError(f"{prefix}{SCHEMA_CONTENT} is not a valid schema in Kafka "
                                  f"Connect's JSON form: {exc}", key=prefix + SCHEMA_CONTENT
                                  ) from exc

    # -- Connect -> bytes ------------------------------------------------------------
    def from_connect(self, topic: str, schema: Schema | None, value: Any) -> bytes | None:
        """Serialise ``value`` of ``schema`` to JSON bytes (see the module docstring).

        Raises:
            DataError: The value does not match the schema, or has no JSON form.

        """
        try:
            text = self._to_text(schema, value)
        except DataError as exc:
            exc.context.setdefault("topic", topic)
            raise
        if text is None:
            return None
        try:
            return text.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise DataError(f"value holds a string that is not valid Unicode: {exc}",
                            topic=topic) from None

    def from_connect_batch(
        self, topic: str, items: Sequence[tuple[Schema | None, Any]]
    ) -> list[bytes | None]:
        """:meth:`from_connect` for each (schema, value), in order."""
        from_connect = self.from_connect
        return [from_connect(topic, schema, value) for schema, value in items]

    def _to_text(self, schema: Schema | None, value: Any) -> str | None:
        if schema is None:
            if value is None:
                return None
            if not isinstance(value, Struct):
                payload = _dumps(encode_schemaless(value, self._struct_encoder))
                return (_NO_SCHEMA_HEAD + payload + "}"
                        if self._schemas_enabled else payload)
            schema = value.schema
        writer = self._writer(schema)
        if value is not None:
            check_value(schema, value)
        elif not schema.optional and schema.default is None:
            raise DataError(
                f"null value with the required schema {schema}: Kafka Connect's JSON has no "
                "form for it. For a tombstone (a delete), give the record no schema; "
                "otherwise make the schema optional or give it a default"
            )
        payload_json = writer.encode(value)
        text = dumps_exact(payload_json) if writer.exact else _dumps(payload_json)
        return writer.head + text + writer.tail

    def _writer(self, schema: Schema) -> _Writer:
        return self._writers.get(schema) or self._compile_writer(schema)

    def _compile_writer(self, schema: Schema) -> _Writer:
        options = self._options
        encode = compile_encoder(schema, options)
        exact = options.decimal_numeric and schema_has_numeric_decimal(schema)
        if self._schemas_enabled:
            schema_json = schema_to_json(schema, self._encode_default)
            schema_text = dumps_exact(schema_json) if exact else _dumps(schema_json)
            writer = _Writer(_ENVELOPE_START + schema_text + _PAYLOAD_KEY, "}", encode, exact)
        else:
            writer = _Writer("", "", encode, exact)
        self._writers.put(schema, writer)
        return writer

    def _encode_default(self, schema: Schema, value: Any) -> Any:
        return compile_encoder(schema, self._options)(value)

    def _struct_encoder(self, schema: Schema) -> Encode:
        return self._writer(schema).encode

    def serialize_column(self, topic: str, column: Any,
                         schema: Schema | None = None) -> Any:
        """A ``string`` column's JSON at once (:mod:`~omconnect.converters.json_columns`)
        when ``schema`` is ``None`` or a string schema and no item needs escapes, or a
        ``struct`` column's when its schema has flat fields only; the same bytes
        :meth:`from_connect` gives each item. ``None`` (record by record) otherwise, and
        for null items of a required schema or one with a default (the error, or the
        default written instead, is per record).
        """
        if schema is not None and schema.type is Type.STRUCT:
            from omconnect.converters.json_columns import json_struct_column

            writer = self._writer(schema)
            if writer.exact:
                return None
            return json_struct_column(column, schema, writer.head, writer.tail)
        if schema is not None and (schema.type is not Type.STRING or schema.name or (
                column.null_count and (not schema.optional or schema.default is not None))):
            return None  # a null's bytes come from the schema's rules: per record
        from omconnect.converters.json_columns import json_string_column

        if schema is None:  # a null is a tombstone; a string is written without a schema
            head = _NO_SCHEMA_HEAD if self._schemas_enabled else ""
            tail = "}" if self._schemas_enabled else ""
            return json_string_column(column, head, tail, None)
        writer = self._writer(schema)
        if writer.exact:
            return None
        return json_string_column(column, writer.head, writer.tail,
                                  writer.head + "null" + writer.tail)

    def deserialize_column(self, topic: str, column: Any) -> Any:
        """A ``binary`` column of JSON strings read at once
        (:mod:`~omconnect.converters.json_columns`): each item the plain JSON string
        (schemas disabled), or the envelope of a string, an optional string or no schema;
        the column :meth:`to_connect` per item would give ``put_batch``. ``None`` (record
        by record) when an item is anything else.
        """
        from omconnect.converters.json_columns import json_string_values

        if self._fixed_reader is not None:  # a configured schema: read per record
            return None
        if not self._schemas_enabled:
            return json_string_values(column, [""], "", ["null"])
        struct = self._struct_envelopes(column)
        if struct is not None:
            return struct
        # The heads this converter writes for strings (a string, an optional string, no
        # schema), taken from its writers, so reading matches what writing makes.
        heads = [self._writer(STRING_SCHEMA).head, self._writer(OPTIONAL_STRING_SCHEMA).head,
                 _NO_SCHEMA_HEAD]
        return json_string_values(column, heads, "}", [head + "null}" for head in heads[1:]])

    def _struct_envelopes(self, column: Any) -> Any:
        """The struct column of a column whose first item is the envelope of a struct
        schema (:func:`~omconnect.converters.json_columns.json_struct_values`: every item
        must have that envelope's head), or ``None``.
        """
        from omconnect.converters.json_columns import json_struct_values

        valid = column if not column.null_count else column.drop_null()
        if not len(valid):
            return None
        first = valid[0].as_py()
        if type(first) is not bytes or not first.startswith(b'{"schema":{'):
            return None
        try:
            found = self._envelope_head(first.decode("utf-8"))
        except (UnicodeDecodeError, DataError):
            return None
        if found is None:
            return None
        head, reader = found
        if reader.schema is None or reader.schema.type is not Type.STRUCT:
            return None
        return json_struct_values(column, reader.schema, head.encode(), b"}")

    # -- bytes -> Connect ------------------------------------------------------------
    def to_connect(self, topic: str, data: bytes | None) -> SchemaAndValue:
        """Deserialise JSON bytes (see the module docstring).

        Raises:
            DataError: Not JSON, no envelope where one is expected, or a payload that does
                not match its schema; the message says which.

        """
        if data is None:
            return SchemaAndValue(None, None)
        try:
            return self._from_text(_decode_utf8(data))
        except DataError as exc:
            exc.context.setdefault("topic", topic)
            raise

    def to_connect_batch(self, topic: str, data: Sequence[bytes | None]) -> list[SchemaAndValue]:
        """:meth:`to_connect` for each item, in order."""
        if self._fixed_reader is not None or not self._schemas_enabled:
            return [self.to_connect(topic, item) for item in data]
        read_fast = self._read_envelope_fast
        out: list[SchemaAndValue] = []
        append = out.append
        try:
            for item in data:
                if type(item) is bytes and item.startswith(b'{"schema":'):
                    try:
                        text = item.decode("utf-8")
                    except UnicodeDecodeError:
                        text = ""
                    result = read_fast(text) if text else None
                    if result is not None:
                        append(result)
                        continue
                append(self.to_connect(topic, item))
        except DataError as exc:
            exc.context.setdefault("topic", topic)
            raise
        return out

    def _from_text(self, text: str) -> SchemaAndValue:
        if self._fixed_reader is not None:
            return self._read_with_fixed_schema(text, self._fixed_reader)
        if not self._schemas_enabled:
            if not text.strip():
                return SchemaAndValue(None, None)
            return SchemaAndValue(None, _loads(text, _FLOAT_DECODER))
        if text.startswith(_ENVELOPE_START):
            fast = self._read_envelope_fast(text)
            if fast is not None:
                return fast
        envelope = _loads(text, _DECIMAL_DECODER if logical.DECIMAL in text else _FLOAT_DECODER)
        if type(envelope) is not dict or envelope.keys() != {"schema", "payload"}:
            raise DataError(_ENVELOPE_ERROR)
        schema_obj = envelope["schema"]
        if schema_obj is None:
            return SchemaAndValue(None, decode_schemaless(envelope["payload"]))
        reader = self._reader_for(_CANONICAL(schema_obj), schema_obj)
        return SchemaAndValue(reader.schema, reader.decode(envelope["payload"]))

    def _read_envelope_fast(self, text: str) -> SchemaAndValue | None:
        """Read ``{"schema":S,"payload":P}`` as written by Kafka Connect or us, without
        parsing S again when it is the schema of the previous message (one prefix
        comparison of the whole head ``{"schema":S,"payload":``). ``None``: not in
        that exact layout (the caller then parses the whole text).
        """
        last = self._last_reader
        if last is not None and text.startswith(last[0]):
            head, reader = last
        else:
            found = self._envelope_head(text)
            if found is None:
                return None
            head, reader = self._last_reader = found
        start = len(head)
        try:
            payload, end = reader.parser.raw_decode(text, start)
        except json.JSONDecodeError:
            return None
        if text[end:] != "}" and text[end:].strip() != "}":
            return None
        return SchemaAndValue(reader.schema, reader.decode(payload))

    def _envelope_head(self, text: str) -> tuple[str, _Reader] | None:
        """The head ``{"schema":S,"payload":`` of an envelope ``text`` starts with and
        S's reader, or ``None`` when ``text`` does not start that way.

        Raises:
            DataError: S is not a schema.

        """
        try:
            schema_obj, end = _FLOAT_DECODER.raw_decode(text, len(_ENVELOPE_START))
        except json.JSONDecodeError:
            return None
        if not text.startswith(_PAYLOAD_KEY, end):
            return None
        reader = self._reader_for(text[len(_ENVELOPE_START):end], schema_obj)
        return text[:end + len(_PAYLOAD_KEY)], reader

    def _read_with_fixed_schema(self, text: str, reader: _Reader) -> SchemaAndValue:
        if not text.strip():
            return SchemaAndValue(reader.schema, reader.decode(None))
        value = _loads(text, reader.parser)
        if type(value) is dict and value.keys() == {"schema", "payload"}:
            value = value["payload"]
        return SchemaAndValue(reader.schema, reader.decode(value))

    def _reader_for(self, key: str, schema_obj: Any) -> _Reader:
        reader = self._readers.get(key)
        if reader is not None:
            self._readers.move_to_end(key)
            return reader
        reader = self._compile_reader(schema_obj)
        self._readers[key] = reader
        while len(self._readers) > self._cache_size:
            self._readers.popitem(last=False)
        return reader

    def _compile_reader(self, schema_obj: Any) -> _Reader:
        schema = schema_from_json(schema_obj, self._decode_default)
        if schema is None:
            return _Reader(None, decode_schemaless, _FLOAT_DECODER)
        parser = _DECIMAL_DECODER if schema_has_numeric_decimal(schema) else _FLOAT_DECODER
        return _Reader(schema, compile_decoder(schema, self._options), parser)

    def _decode_default(self, schema: Schema, value: Any) -> Any:
        return compile_decoder(schema, self._options, "default")(value)

    # -- HeaderConverter -------------------------------------------------------------
    def from_connect_header(
        self, topic: str, key: str, schema: Schema | None, value: Any
    ) -> bytes | None:
        """Serialise one header value, as :meth:`from_connect`."""
        return self.from_connect(topic, schema, value)

    def to_connect_header(self, topic: str, key: str, data: bytes | None) -> SchemaAndValue:
        """Deserialise one header value, as :meth:`to_connect`."""
        return self.to_connect(topic, data)


def _dumps(value: Any) -> str:
    try:
        return _fast_json(value)  # type: ignore[no-any-return]
    except ValueError:  # a non-finite float: Jackson writes it as a string
        return dumps_exact(value)
    except TypeError as exc:
        raise DataError(f"value has no JSON form: {exc}") from None




def _decode_utf8(data: bytes) -> str:
    try:
        return data.decode("utf-8") if type(data) is bytes else bytes(data).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DataError(f"not JSON: the bytes are not valid UTF-8 ({exc.reason} at byte "
                        f"{exc.start})") from None


def _loads(text: str, parser: json.JSONDecoder) -> Any:
    try:
        return parser.decode(text)
    except json.JSONDecodeError as exc:
        raise DataError(f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
                        ) from None
