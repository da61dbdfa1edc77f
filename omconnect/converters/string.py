"""StringConverter: text in a configurable encoding, as Kafka Connect's ``StringConverter``.

Writing: a string is encoded; any other value is written as its text (``str(value)``,
with booleans as ``true``/``false`` like Java), whatever the schema; ``None`` stays
``None``. Reading: bytes are decoded and given the schema ``OPTIONAL_STRING_SCHEMA``
(``None`` reads as a null string, with that schema too).

Option: ``converter.encoding`` (``UTF-8``): any encoding Python knows (Java names such as
``UTF8`` and ``ISO-8859-1`` work too). Bytes that are not valid in the encoding are a
:class:`~omconnect.errors.DataError` (Kafka Connect would silently replace them).
"""

from __future__ import annotations

import codecs
from collections.abc import Mapping, Sequence
from itertools import repeat
from typing import TYPE_CHECKING, Any

from omconnect.config.definition import ConfigDef
from omconnect.config.types import ConfigType, Importance
from omconnect.converters.base import Converter, HeaderConverter
from omconnect.converters.checks import role_prefix
from omconnect.data.schema import OPTIONAL_STRING_SCHEMA, Schema
from omconnect.data.struct import SchemaAndValue
from omconnect.errors import ConfigError, DataError

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["StringConverter"]

ENCODING = "converter.encoding"


def _encoding_problem(value: Any) -> str | None:
    try:
        codecs.lookup(str(value))
    except LookupError:
        return f"unknown encoding {value!r}; use a name such as UTF-8, UTF-16 or ISO-8859-1"
    return None


class StringConverter(Converter, HeaderConverter):
    """Converts values to and from text.

    Also a :class:`HeaderConverter`. Entry-point name ``string``; Kafka Connect's class
    name ``org.apache.kafka.connect.storage.StringConverter`` is an alias.
    """

    config_def = ConfigDef().define(
        ENCODING, ConfigType.STRING, "UTF-8", importance=Importance.HIGH,
        validators=[_encoding_problem],
        documentation="The character encoding of the bytes, e.g. UTF-8, UTF-16, ISO-8859-1.",
    )

    def __init__(self) -> None:
        self._encoding = "utf-8"

    @property
    def encoding(self) -> str:
        """The Python name of the configured encoding."""
        return self._encoding

    def configure(self, config: Mapping[str, Any], is_key: bool | None = None) -> None:
        """Apply ``converter.encoding``.

        Raises:
            ConfigError: Unknown encoding.

        """
        prefix = role_prefix(is_key)
        values = self.config_def.parse(config, what="string converter", prefix=prefix)
        try:
            self._encoding = codecs.lookup(str(values[ENCODING])).name
        except LookupError:  # pragma: no cover - the validator refused it already
            raise ConfigError(f"unknown encoding {values[ENCODING]!r}",
                              key=prefix + ENCODING) from None

    def from_connect(self, topic: str, schema: Schema | None, value: Any) -> bytes | None:
        """The encoded text of ``value`` (``str(value)`` for a non-string).

        Raises:
            DataError: The text cannot be encoded in the configured encoding.

        """
        if value is None:
            return None
        if type(value) is not str:
            value = _text(value)
        try:
            return value.encode(self._encoding)  # type: ignore[no-any-return]
        except UnicodeEncodeError as exc:
            raise DataError(
                f"cannot encode {exc.object[exc.start:exc.end]!r} in {self._encoding}: "
                f"{exc.reason}; set converter.encoding to one that can (e.g. UTF-8)",
                topic=topic,
            ) from None

    def to_connect(self, topic: str, data: bytes | None) -> SchemaAndValue:
        """The decoded text, with ``OPTIONAL_STRING_SCHEMA``.

        Raises:
            DataError: The bytes are not valid in the configured encoding.

        """
        if data is None:
            return SchemaAndValue(OPTIONAL_STRING_SCHEMA, None)
        try:
            return SchemaAndValue(OPTIONAL_STRING_SCHEMA, bytes(data).decode(self._encoding))
        except UnicodeDecodeError as exc:
            raise DataError(
                f"bytes are not valid {self._encoding}: {exc.reason} at byte {exc.start} "
                f"({bytes(data)[exc.start:exc.end]!r}); set converter.encoding to the "
                "encoding the data was written in",
                topic=topic,
            ) from None

    def from_connect_columns(
        self, topic: str, schemas: Sequence[Schema | None], values: Sequence[Any]
    ) -> list[bytes | None]:
        """:meth:`from_connect` for each item; a batch of strings is encoded in one pass.

        Raises:
            DataError: As :meth:`from_connect`.

        """
        if set(map(type, values)) == {str}:
            try:
                return list(map(str.encode, values, repeat(self._encoding)))
            except UnicodeEncodeError:
                pass  # item by item below, for the error naming the text
        from_connect = self.from_connect
        return [from_connect(topic, schema, value)
                for schema, value in zip(schemas, values, strict=True)]

    def to_connect_columns(
        self, topic: str, data: Sequence[bytes | None]
    ) -> tuple[list[Schema | None], list[Any]]:
        """``OPTIONAL_STRING_SCHEMA`` for each item, and the decoded texts; a batch of
        ``bytes`` is decoded in one pass.

        Raises:
            DataError: As :meth:`to_connect`.

        """
        schemas: list[Schema | None] = [OPTIONAL_STRING_SCHEMA] * len(data)
        if set(map(type, data)) == {bytes}:
            try:
                return schemas, list(map(bytes.decode, data, repeat(self._encoding)))  # type: ignore[arg-type]
            except UnicodeDecodeError:
                pass  # item by item below, for the error naming the bytes
        to_connect = self.to_connect
        return schemas, [to_connect(topic, item).value for item in data]

    def serialize_column(self, topic: str, column: pa.Array,
                         schema: Schema | None = None) -> pa.Array | None:
        """A ``string`` column as UTF-8 bytes (a zero-copy cast) when the encoding is
        UTF-8; other types and encodings need records.
        """
        import pyarrow as pa

        kind = column.type
        if self._encoding != "utf-8":
            return None
        if pa.types.is_string(kind) or pa.types.is_null(kind):
            return column.cast(pa.binary())
        if pa.types.is_large_string(kind) or pa.types.is_string_view(kind):
            return column.cast(pa.string()).cast(pa.binary())
        return None

    def deserialize_column(self, topic: str, column: pa.Array) -> pa.Array | None:
        """UTF-8 bytes as a ``string`` column (validated at C speed).

        Raises:
            DataError: Some bytes are not valid UTF-8.

        """
        import pyarrow as pa

        if self._encoding != "utf-8":
            return None
        try:
            return column.cast(pa.string())
        except pa.ArrowInvalid as exc:
            raise DataError(f"bytes are not valid utf-8: {exc}", topic=topic) from None

    def from_connect_header(
        self, topic: str, key: str, schema: Schema | None, value: Any
    ) -> bytes | None:
        """Serialise one header value, as :meth:`from_connect`."""
        return self.from_connect(topic, schema, value)

    def to_connect_header(self, topic: str, key: str, data: bytes | None) -> SchemaAndValue:
        """Deserialise one header value, as :meth:`to_connect`."""
        return self.to_connect(topic, data)


def _text(value: Any) -> str:
    if value is True:
        return "true"
    if value is False:
        return "false"
    return str(value)
