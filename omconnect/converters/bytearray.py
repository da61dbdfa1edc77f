"""ByteArrayConverter: bytes pass through unchanged, as Kafka Connect's
``ByteArrayConverter``.

Writing accepts ``bytes``, ``bytearray`` or ``memoryview`` (a schema, if given, must be
BYTES); anything else is a :class:`~omconnect.errors.DataError` naming its type. Reading
gives the bytes with ``OPTIONAL_BYTES_SCHEMA``; ``None`` stays ``None``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from omconnect.converters.base import Converter, HeaderConverter
from omconnect.data.schema import OPTIONAL_BYTES_SCHEMA, Schema, Type
from omconnect.data.struct import SchemaAndValue
from omconnect.errors import DataError

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["ByteArrayConverter"]

_PASSED_AS_IS = frozenset((bytes, type(None)))


class ByteArrayConverter(Converter, HeaderConverter):
    """Passes bytes through.

    Also a :class:`HeaderConverter`. Entry-point name ``bytearray``; Kafka Connect's class
    name ``org.apache.kafka.connect.converters.ByteArrayConverter`` is an alias.
    """

    def configure(self, config: Mapping[str, Any], is_key: bool | None = None) -> None:
        """Nothing to configure."""

    def from_connect(self, topic: str, schema: Schema | None, value: Any) -> bytes | None:
        """``value`` as ``bytes``.

        Raises:
            DataError: The schema is not BYTES, or the value is not bytes-like.

        """
        if schema is not None and schema.type is not Type.BYTES:
            raise DataError(
                f"ByteArrayConverter needs a BYTES schema, got {schema.type.value}; use a "
                "converter for that type (e.g. json or string)", topic=topic)
        if value is None or type(value) is bytes:
            return value
        if isinstance(value, (bytes, bytearray, memoryview)):
            return bytes(value)
        raise DataError(
            f"ByteArrayConverter needs bytes, bytearray or memoryview, got "
            f"{type(value).__name__}; use a converter for that type (e.g. json or string)",
            topic=topic)

    def to_connect(self, topic: str, data: bytes | None) -> SchemaAndValue:
        """``data`` with ``OPTIONAL_BYTES_SCHEMA``."""
        return SchemaAndValue(OPTIONAL_BYTES_SCHEMA, data)

    def to_connect_batch(self, topic: str, data: Sequence[bytes | None]) -> list[SchemaAndValue]:
        """:meth:`to_connect` for each item, in order."""
        return [SchemaAndValue(OPTIONAL_BYTES_SCHEMA, item) for item in data]

    def from_connect_columns(
        self, topic: str, schemas: Sequence[Schema | None], values: Sequence[Any]
    ) -> list[bytes | None]:
        """:meth:`from_connect` for each item; a batch of ``bytes`` (or ``None``) values
        under one BYTES schema (or none) is checked and passed through at C speed.

        Raises:
            DataError: As :meth:`from_connect`.

        """
        n = len(values)
        first = schemas[0] if n else None
        if ((first is None or first.type is Type.BYTES) and schemas.count(first) == n
                and _PASSED_AS_IS.issuperset(map(type, values))):
            return list(values)
        from_connect = self.from_connect
        return [from_connect(topic, schema, value)
                for schema, value in zip(schemas, values, strict=True)]

    def to_connect_columns(
        self, topic: str, data: Sequence[bytes | None]
    ) -> tuple[list[Schema | None], list[Any]]:
        """``OPTIONAL_BYTES_SCHEMA`` for each item, and the items."""
        return [OPTIONAL_BYTES_SCHEMA] * len(data), list(data)

    def serialize_column(self, topic: str, column: pa.Array,
                         schema: Schema | None = None) -> pa.Array | None:
        """A ``binary`` (or ``null``) column as it is; other types need records."""
        import pyarrow as pa

        kind = column.type
        if pa.types.is_binary(kind):
            return column
        if pa.types.is_large_binary(kind) or pa.types.is_binary_view(kind) or \
                pa.types.is_null(kind):
            return column.cast(pa.binary())
        return None

    def deserialize_column(self, topic: str, column: pa.Array) -> pa.Array | None:
        """The bytes as they are."""
        return column

    def from_connect_header(
        self, topic: str, key: str, schema: Schema | None, value: Any
    ) -> bytes | None:
        """Serialise one header value, as :meth:`from_connect`."""
        return self.from_connect(topic, schema, value)

    def to_connect_header(self, topic: str, key: str, data: bytes | None) -> SchemaAndValue:
        """Deserialise one header value, as :meth:`to_connect`."""
        return self.to_connect(topic, data)
