"""The line the file sink writes for a value (without its newline): a string as it is
(UTF-8), bytes as they are, ``None`` as ``null``, booleans as ``true``/``false`` (as Kafka
Connect's Java ``println`` does), anything else as ``str(value)``. Shared by the
record-by-record path (:mod:`omconnect_file.sink`) and the columnar one
(:mod:`omconnect_file.lines`).
"""

from __future__ import annotations

from typing import Any

__all__ = ["line_of"]


def line_of(value: Any) -> bytes:
    """The line (without newline) the sink writes for ``value``."""
    if isinstance(value, str):
        return value.encode("utf-8", "surrogateescape")
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    if value is None:
        return b"null"
    if isinstance(value, bool):
        return b"true" if value else b"false"
    return str(value).encode("utf-8", "surrogateescape")
