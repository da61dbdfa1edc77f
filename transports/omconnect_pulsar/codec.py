"""How an omconnect :class:`~omconnect.transport.Message` travels as a Pulsar message.

Pulsar's partition key and properties are strings; omconnect's keys and header values are
bytes, header keys may repeat and header order matters. The mapping keeps every message
exact and stays readable by other Pulsar clients where it can:

* **value**: the payload; ``None`` is Pulsar's null value (a tombstone on compacted
  topics), distinct from an empty payload.
* **key**: the partition key (it decides the partition and, on compacted topics, what is
  compacted). A key that is valid UTF-8 is the partition key as is. Otherwise the
  partition key is its base64 text and the property ``__omc.key`` is ``b64``; an empty
  key (``b""``, which Pulsar cannot tell from none) sets ``__omc.key`` to ``empty``.
* **timestamp**: the event time; a message without one reads back with its publish time.
* **headers**: properties. Headers with distinct keys in key order, UTF-8 values and no
  key starting with ``__omc.`` are plain properties, one each (what any Pulsar client
  shows). Any other header list (repeated keys, ``None`` or binary values, an order that
  is not the key order) is also written exactly, as JSON in the property
  ``__omc.headers``: a list of ``[key, value]`` where value is ``null``, ``"t:<text>"`` or
  ``"b:<base64>"``. Reading prefers ``__omc.headers``; a message from another client
  gives its properties as headers, in key order, values UTF-8 encoded.

Properties starting with ``__omc.`` are reserved for this mapping.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from omconnect.transport.messages import Message, WireHeaders

__all__ = [
    "HEADERS_PROPERTY",
    "KEY_PROPERTY",
    "RESERVED_PREFIX",
    "decode",
    "decode_fields",
    "decode_headers",
    "encode_fields",
    "encode_headers",
    "encode_into",
]

RESERVED_PREFIX = "__omc."
KEY_PROPERTY = "__omc.key"
HEADERS_PROPERTY = "__omc.headers"
_KEY_BASE64 = "b64"
_KEY_EMPTY = "empty"


def _native(headers: WireHeaders) -> dict[str, str] | None:
    """The headers as plain properties, or ``None`` when properties cannot carry them
    exactly (repeated or reserved keys, ``None`` or binary values, not in key order).
    """
    properties: dict[str, str] = {}
    previous = None
    for key, value in headers:
        if value is None or key in properties or key.startswith(RESERVED_PREFIX):
            return None
        if previous is not None and key < previous:
            return None
        try:
            properties[key] = value.decode()
        except UnicodeDecodeError:
            return None
        previous = key
    return properties


def encode_headers(headers: WireHeaders) -> dict[str, str]:
    """The properties that carry ``headers`` (see the module docstring)."""
    native = _native(headers)
    if native is not None:
        return native
    exact: list[list[Any]] = []
    plain: dict[str, str] = {}
    for key, value in headers:
        if value is None:
            exact.append([key, None])
            continue
        try:
            text = value.decode()
        except UnicodeDecodeError:
            exact.append([key, "b:" + base64.b64encode(value).decode()])
            continue
        exact.append([key, "t:" + text])
        if not key.startswith(RESERVED_PREFIX):
            plain.setdefault(key, text)
    plain[HEADERS_PROPERTY] = json.dumps(exact, ensure_ascii=False, separators=(",", ":"))
    return plain


def decode_headers(properties: dict[str, str]) -> WireHeaders:
    """The headers a message's properties carry."""
    exact = properties.get(HEADERS_PROPERTY)
    if exact is not None:
        return tuple((key, _decode_value(value)) for key, value in json.loads(exact))
    return tuple((key, value.encode()) for key, value in sorted(properties.items())
                 if not key.startswith(RESERVED_PREFIX))


def _decode_value(value: str | None) -> bytes | None:
    if value is None:
        return None
    if value.startswith("b:"):
        return base64.b64decode(value[2:])
    return value[2:].encode()


def encode_into(builder: Any, message: Message) -> None:
    """Fill a ``_pulsar.MessageBuilder`` with ``message``'s value, key, timestamp and
    headers.
    """
    encode_fields(builder, message.key, message.value, message.timestamp, message.headers)


def encode_fields(builder: Any, key: bytes | None, value: bytes | None,
                  timestamp: int | None, headers: WireHeaders) -> None:
    """Fill a ``_pulsar.MessageBuilder`` with a value, key, timestamp (ms) and headers."""
    if value is None:
        builder.set_null_value()
    else:
        builder.content(value)
    if key is not None:
        if not key:
            builder.property(KEY_PROPERTY, _KEY_EMPTY)
        else:
            try:
                builder.partition_key(key.decode())
            except UnicodeDecodeError:
                builder.partition_key(base64.b64encode(key).decode())
                builder.property(KEY_PROPERTY, _KEY_BASE64)
    if timestamp:
        builder.event_timestamp(timestamp)
    if headers:
        for name, text in encode_headers(headers).items():
            builder.property(name, text)


def _key(partition_key: Any, marker: str | None) -> bytes | None:
    if marker == _KEY_EMPTY:
        return b""
    if marker == _KEY_BASE64:
        try:
            return base64.b64decode(partition_key)
        except (binascii.Error, ValueError):
            return str(partition_key).encode()
    return partition_key.encode() if partition_key else None


def decode_fields(raw: Any) -> tuple[bytes | None, bytes | None, WireHeaders, int | None]:
    """The key, value, headers and timestamp (ms) of a received ``_pulsar.Message``."""
    properties = raw.properties()
    try:
        partition_key = raw.partition_key()
    except UnicodeDecodeError:  # a binary key another client wrote without base64
        partition_key = ""
    if properties:
        key = _key(partition_key, properties.get(KEY_PROPERTY))
        headers = decode_headers(properties)
    else:
        key = partition_key.encode() if partition_key else None
        headers = ()
    value = None if raw.has_null_value() else raw.data()
    return key, value, headers, raw.event_timestamp() or raw.publish_timestamp() or None


def decode(raw: Any, topic: str, partition: int, offset: int) -> Message:
    """The omconnect message for a received ``_pulsar.Message``.

    Args:
        raw: The received message.
        topic: Its omconnect topic name.
        partition: Its partition (0 for a non-partitioned topic).
        offset: The position the consumer gave it.

    """
    key, value, headers, timestamp = decode_fields(raw)
    return Message(topic, key, value, headers, timestamp, partition, offset)
