"""How a :class:`~omconnect.transport.Message` travels as an AMQP message.

The body is the message's value, untouched, so non-omconnect consumers read it as it is.
Everything else goes in AMQP headers (``properties.headers``):

* ``omc-key`` (byte array): the key; absent for a ``None`` key.
* ``omc-ts`` (long): the timestamp in milliseconds (AMQP's own ``timestamp`` property,
  also set, has only seconds).
* ``omc-null`` (1): the value is ``None`` (a tombstone), not empty bytes.
* ``omc-h`` (byte array): the omconnect headers, ordered and with repeated keys, which an
  AMQP table cannot hold: per header the key's UTF-8 length (u32), the key, the value's
  length (i32, -1 for ``None``), the value.

Every message is persistent (``delivery_mode=2``).
"""

from __future__ import annotations

import struct
from typing import Any

from omconnect.errors import TransportError
from omconnect.transport.messages import Message, WireHeaders

__all__ = ["amqp_headers", "amqp_table", "decode_headers", "delivered_fields", "encode_headers",
           "to_message"]

KEY = "omc-key"
TIMESTAMP = "omc-ts"
NULL_VALUE = "omc-null"
HEADERS = "omc-h"
STREAM_OFFSET = "x-stream-offset"

_U32 = struct.Struct(">I")
_I32 = struct.Struct(">i")


def encode_headers(headers: WireHeaders) -> bytes:
    """Omconnect headers as one byte string."""
    parts = []
    for key, value in headers:
        encoded = key.encode()
        parts.append(_U32.pack(len(encoded)))
        parts.append(encoded)
        if value is None:
            parts.append(_I32.pack(-1))
        else:
            parts.append(_I32.pack(len(value)))
            parts.append(bytes(value))
    return b"".join(parts)


def decode_headers(data: bytes) -> WireHeaders:
    """The headers :func:`encode_headers` wrote."""
    headers: list[tuple[str, bytes | None]] = []
    position = 0
    try:
        while position < len(data):
            (length,) = _U32.unpack_from(data, position)
            position += 4
            key = data[position:position + length].decode()
            position += length
            (size,) = _I32.unpack_from(data, position)
            position += 4
            if size < 0:
                headers.append((key, None))
            else:
                headers.append((key, data[position:position + size]))
                position += size
    except (struct.error, UnicodeDecodeError) as exc:
        raise TransportError(f"a message's omconnect headers are corrupt: {exc}") from exc
    return tuple(headers)


def amqp_headers(message: Message, timestamp: int) -> dict[str, Any]:
    """The AMQP headers table carrying ``message``'s key, timestamp, tombstone flag and
    headers.
    """
    return amqp_table(message.key, message.value is None, message.headers, timestamp)


def amqp_table(key: bytes | None, tombstone: bool, headers: WireHeaders,
               timestamp: int) -> dict[str, Any]:
    """The AMQP headers table of a message's fields (a row of a batch sent as columns)."""
    table: dict[str, Any] = {TIMESTAMP: timestamp}
    if key is not None:
        table[KEY] = bytes(key)
    if tombstone:
        table[NULL_VALUE] = 1
    if headers:
        table[HEADERS] = encode_headers(headers)
    return table


def to_message(topic: str, partition: int, offset: int, properties: Any, body: bytes
               ) -> Message:
    """The :class:`Message` an AMQP delivery carries (``offset`` assigned by the caller)."""
    key, value, headers, timestamp = delivered_fields(properties, body)
    return Message(topic, key, value, headers, timestamp, partition, offset)


def delivered_fields(properties: Any, body: bytes
                     ) -> tuple[bytes | None, bytes | None, WireHeaders, int | None]:
    """The key, value, headers and timestamp an AMQP delivery carries (what
    :func:`to_message` makes a message of, and a polled batch its row).
    """
    table = properties.headers or {}
    key = table.get(KEY)
    if isinstance(key, str):  # a non-omconnect producer may send text
        key = key.encode()
    timestamp = table.get(TIMESTAMP)
    if isinstance(timestamp, int):
        timestamp = int(timestamp)  # pika decodes AMQP longs to its own int subclass
    else:
        stamp = properties.timestamp
        timestamp = int(stamp) * 1000 if isinstance(stamp, int) else None
    raw = table.get(HEADERS)
    headers = decode_headers(raw) if isinstance(raw, bytes) and raw else ()
    value = None if table.get(NULL_VALUE) else body
    return key, value, headers, timestamp
