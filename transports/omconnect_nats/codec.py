"""How an omconnect :class:`~omconnect.transport.Message` travels as a JetStream message.

The payload is the value as it is, so any NATS client reads what omconnect wrote (and
omconnect reads what any client published). What a NATS message has no field for travels
in NATS headers whose names start with ``Omc-``:

* ``Omc-Ts``: the timestamp, milliseconds since the epoch (a message sent without one is
  stamped with its send time). A message without it (published by another client) reads
  back with the time the server stored it.
* ``Omc-Key``: the key, ``t:<text>`` when it is printable ASCII, else ``b:<base64>``;
  absent for no key (``t:`` is the empty key).
* ``Omc-Null: 1``: the value is ``None`` (a tombstone), not an empty payload.
* user headers: as NATS headers when they can be exactly (distinct names that are not
  ``Omc-`` or ``Nats-`` ones, non-empty printable ASCII values without surrounding
  spaces), in their order. Any other header list (repeated names, binary or ``None``
  values) is written exactly as ``Omc-Headers``: base64 of a JSON list of ``[name,
  value]`` pairs, each value ``null`` or base64. Reading prefers ``Omc-Headers``; a
  message from another client gives its NATS headers (but ``Nats-*`` ones) as headers,
  values UTF-8 encoded.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Mapping

from omconnect.transport.messages import Message, WireHeaders, build_message

__all__ = [
    "HEADERS_HEADER",
    "KEY_HEADER",
    "NULL_HEADER",
    "TIMESTAMP_HEADER",
    "decode_fields",
    "decode_key",
    "encode_headers",
    "encode_key",
    "message_headers",
    "to_message",
]

TIMESTAMP_HEADER = "Omc-Ts"
KEY_HEADER = "Omc-Key"
NULL_HEADER = "Omc-Null"
HEADERS_HEADER = "Omc-Headers"
_RESERVED = ("omc-", "nats-")
_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_TEXT = re.compile(rb"[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?")


def encode_key(key: bytes) -> str:
    """The ``Omc-Key`` value of ``key``."""
    if not key or _TEXT.fullmatch(key):
        return "t:" + key.decode("ascii")
    return "b:" + base64.b64encode(key).decode("ascii")


def decode_key(text: str) -> bytes:
    """The key an ``Omc-Key`` value carries."""
    if text.startswith("b:"):
        return base64.b64decode(text[2:])
    return text[2:].encode("ascii") if text.startswith("t:") else text.encode()


def _native(headers: WireHeaders) -> dict[str, str] | None:
    """The headers as NATS headers, or ``None`` when those cannot carry them exactly."""
    native: dict[str, str] = {}
    for name, value in headers:
        if (value is None or name in native or not _TOKEN.fullmatch(name)
                or name.lower().startswith(_RESERVED)
                or not _TEXT.fullmatch(value)):
            return None
        native[name] = value.decode("ascii")
    return native


def encode_headers(headers: WireHeaders, into: dict[str, str]) -> None:
    """Add the NATS headers that carry ``headers`` to ``into`` (see the module docstring)."""
    native = _native(headers)
    if native is not None:
        into.update(native)
        return
    exact = [[name, None if value is None else base64.b64encode(value).decode("ascii")]
             for name, value in headers]
    into[HEADERS_HEADER] = base64.b64encode(
        json.dumps(exact, separators=(",", ":")).encode()).decode("ascii")


def message_headers(key: bytes | None, value: bytes | None, headers: WireHeaders,
                    timestamp: int) -> dict[str, str]:
    """The NATS headers of a message with these fields."""
    out = {TIMESTAMP_HEADER: str(timestamp)}
    if key is not None:
        out[KEY_HEADER] = encode_key(key)
    if value is None:
        out[NULL_HEADER] = "1"
    if headers:
        encode_headers(headers, out)
    return out


def _decode_headers(nats_headers: Mapping[str, str]) -> WireHeaders:
    exact = nats_headers.get(HEADERS_HEADER)
    if exact is not None:
        pairs = json.loads(base64.b64decode(exact))
        return tuple((str(name), None if value is None else base64.b64decode(value))
                     for name, value in pairs)
    return tuple((name, value.encode()) for name, value in nats_headers.items()
                 if not name.lower().startswith(_RESERVED) and name not in
                 ("Status", "Description"))


def decode_fields(data: bytes, nats_headers: Mapping[str, str] | None, stored_ns: int
                  ) -> tuple[bytes | None, bytes | None, WireHeaders, int]:
    """(key, value, headers, timestamp) of a delivered message: its payload, its NATS
    headers and the time the server stored it (nanoseconds, for messages without
    ``Omc-Ts``).
    """
    if not nats_headers:
        return None, data, (), stored_ns // 1_000_000
    stamp = nats_headers.get(TIMESTAMP_HEADER)
    key = nats_headers.get(KEY_HEADER)
    return (None if key is None else decode_key(key),
            None if NULL_HEADER in nats_headers else data,
            _decode_headers(nats_headers),
            int(stamp) if stamp is not None else stored_ns // 1_000_000)


def to_message(topic: str, partition: int, offset: int, data: bytes,
               nats_headers: Mapping[str, str] | None, stored_ns: int) -> Message:
    """The :class:`~omconnect.transport.Message` a delivery carries."""
    key, value, headers, timestamp = decode_fields(data, nats_headers, stored_ns)
    message: Message = build_message(topic, key, value, headers, timestamp, partition,
                                     offset)
    return message
