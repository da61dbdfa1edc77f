"""SimpleHeaderConverter: header values as UTF-8 text, read back with an inferred type,
as Kafka Connect's ``SimpleHeaderConverter`` (the runtime's default header converter).

A value is written as text by :func:`~omconnect.converters.text_values.format_value`
(``42``, ``true``, ``hello``, ``[1,2]``, ``{"a":1}``, ``2024-05-01``) and read back by
:func:`~omconnect.converters.text_values.parse_value`, which infers the schema from the
text: ``42`` reads as INT8 42, ``hello`` as the STRING ``hello``. The value survives the
round trip; the schema is the inferred one, not the one it was written with (as in Kafka
Connect). Bytes that are not UTF-8 (binary headers from other producers) read as BYTES,
unchanged, where Kafka Connect would garble them into a string.

For header values that must keep their exact schema, use the ``json`` converter as the
header converter (``header.converter=json``): it writes the schema with each value.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from omconnect.converters.base import HeaderConverter
from omconnect.converters.text_values import format_value, parse_value
from omconnect.data.schema import OPTIONAL_BYTES_SCHEMA, Schema
from omconnect.data.struct import SchemaAndValue
from omconnect.errors import DataError

__all__ = ["SimpleHeaderConverter"]


class SimpleHeaderConverter(HeaderConverter):
    """Header values as text, with the type inferred when read.

    Entry-point name ``simple`` (group ``omconnect.converters``); Kafka Connect's class
    name ``org.apache.kafka.connect.storage.SimpleHeaderConverter`` is an alias.
    """

    def configure(self, config: Mapping[str, Any]) -> None:
        """Nothing to configure."""

    def from_connect_header(
        self, topic: str, key: str, schema: Schema | None, value: Any
    ) -> bytes | None:
        """The UTF-8 text of ``value``; ``None`` stays ``None``.

        Raises:
            DataError: The value has no text form (naming the header).

        """
        if value is None:
            return None
        if type(value) is str:
            text = value
        else:
            try:
                text = format_value(value)
            except DataError as exc:
                raise DataError(f"header {key!r}: {exc.message}", topic=topic) from None
        try:
            return text.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise DataError(f"header {key!r} holds text that is not valid Unicode: {exc.reason}",
                            topic=topic) from None

    def to_connect_header(self, topic: str, key: str, data: bytes | None) -> SchemaAndValue:
        """The value written as ``data``, with its inferred schema (BYTES when the bytes
        are not UTF-8 text).
        """
        if data is None:
            return SchemaAndValue(None, None)
        try:
            text = bytes(data).decode("utf-8")
        except UnicodeDecodeError:
            return SchemaAndValue(OPTIONAL_BYTES_SCHEMA, bytes(data))
        return parse_value(text)
