"""The Converter SPI: between connector values (schema + value) and transport bytes."""

from __future__ import annotations

import abc
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from omconnect.config.definition import ConfigDef
from omconnect.data.schema import Schema
from omconnect.data.struct import SchemaAndValue

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["Converter", "HeaderConverter"]


class Converter(abc.ABC):
    """Turns keys or values into bytes for the transport, and back.

    One instance converts either keys or values (``is_key`` in :meth:`configure`).
    Instances are used by one task thread. The batch methods are what the runtime calls;
    their defaults loop over the single-value methods, and a converter may override them
    for speed.

    The runtime calls the *column* forms, :meth:`from_connect_columns` and
    :meth:`to_connect_columns`: parallel lists of schemas and values instead of a
    tuple or :class:`SchemaAndValue` per item. Their defaults go through the batch
    methods; a converter whose output needs no per-item object (ByteArray, String, JSON)
    overrides them and saves about half a microsecond per record.
    """

    config_def: ConfigDef = ConfigDef()

    def configure(self, config: Mapping[str, Any], is_key: bool) -> None:
        """Configure from the ``key.converter.*``/``value.converter.*`` settings (prefix
        stripped).
        """

    @abc.abstractmethod
    def from_connect(self, topic: str, schema: Schema | None, value: Any) -> bytes | None:
        """Serialise ``value`` of ``schema``; ``None`` stays ``None`` (a tombstone).

        Raises:
            DataError: The value does not match the schema or cannot be serialised.

        """

    @abc.abstractmethod
    def to_connect(self, topic: str, data: bytes | None) -> SchemaAndValue:
        """Deserialise ``data``; ``None`` gives a null value.

        Raises:
            DataError: The bytes are not valid for this converter.

        """

    def from_connect_batch(
        self, topic: str, items: Sequence[tuple[Schema | None, Any]]
    ) -> list[bytes | None]:
        """:meth:`from_connect` for each (schema, value), in order."""
        return [self.from_connect(topic, schema, value) for schema, value in items]

    def to_connect_batch(self, topic: str, data: Sequence[bytes | None]) -> list[SchemaAndValue]:
        """:meth:`to_connect` for each item, in order."""
        return [self.to_connect(topic, item) for item in data]

    def from_connect_columns(
        self, topic: str, schemas: Sequence[Schema | None], values: Sequence[Any]
    ) -> list[bytes | None]:
        """:meth:`from_connect` for each ``(schemas[i], values[i])``, in order.

        Args:
            topic: The topic of every item.
            schemas: The schema of each value (the same length as ``values``).
            values: The values.

        Raises:
            DataError: An item cannot be serialised (which one is not said: the runtime
                then converts item by item to find it).

        """
        return self.from_connect_batch(topic, list(zip(schemas, values, strict=True)))

    def to_connect_columns(
        self, topic: str, data: Sequence[bytes | None]
    ) -> tuple[Sequence[Schema | None], Sequence[Any]]:
        """:meth:`to_connect` for each item, as two parallel sequences.

        Returns:
            ``(schemas, values)``: the schema and the value read from each item, in order.

        Raises:
            DataError: An item cannot be read (the runtime then reads item by item).

        """
        pairs = self.to_connect_batch(topic, data)
        return [p.schema for p in pairs], [p.value for p in pairs]


    def serialize_column(self, topic: str, column: pa.Array,
                         schema: Schema | None = None) -> pa.Array | None:
        """A whole Arrow column as ``binary`` at once, for the columnar path; ``None`` when
        this converter has no column form for ``column``'s type (the runtime then converts
        the batch record by record). Must give exactly the bytes :meth:`from_connect`
        would give for each item with ``schema``: the column's Connect schema, as the
        source batch gave it (its ``key_schema`` or ``value_schema``; ``None`` when it
        gave none).

        Raises:
            DataError: An item cannot be serialised (the runtime then converts record by
                record to find it).

        """
        return None

    def deserialize_column(self, topic: str, column: pa.Array) -> pa.Array | None:
        """A ``binary`` column read at once, for the columnar path (what ``put_batch``
        gets as keys or values); ``None`` when this converter has no column form.

        Raises:
            DataError: An item cannot be read (the runtime then reads record by record,
                so the failing ones are tolerated or reported one by one).

        """
        return None


class HeaderConverter(abc.ABC):
    """Turns header values into bytes and back."""

    def configure(self, config: Mapping[str, Any]) -> None:
        """Configure from the ``header.converter.*`` settings (prefix stripped)."""

    @abc.abstractmethod
    def from_connect_header(
        self, topic: str, key: str, schema: Schema | None, value: Any
    ) -> bytes | None:
        """Serialise one header value."""

    @abc.abstractmethod
    def to_connect_header(self, topic: str, key: str, data: bytes | None) -> SchemaAndValue:
        """Deserialise one header value."""
