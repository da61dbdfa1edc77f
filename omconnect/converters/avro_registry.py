"""Avro writer schemas by fingerprint, for the single-object encoding.

Avro's single-object encoding frames each message as::

    C3 01 | 8-byte CRC-64-AVRO fingerprint (little-endian) | Avro binary body

The fingerprint is of the writer schema's *parsing canonical form*, so any Avro library
can name the schema, but only a reader that holds the schema can decode the body. This
module keeps those schemas: one registry per process (:data:`DEFAULT_REGISTRY`), filled
by every AvroConverter that writes, read by every AvroConverter that reads.

The parsing canonical form leaves out logical types and custom properties, so Connect
schemas that differ only there share a fingerprint: INT8, INT16, INT32, Date and Time are
all Avro ``int``; INT64 and Timestamp ``long``; BYTES and Decimals of any scale ``bytes``.
The bytes cannot say which was written. So schemas are registered per *subject*, as with
Confluent's TopicNameStrategy: ``<topic>-key`` or ``<topic>-value``. A reader asks for the
fingerprint under its own subject first and falls back to the last schema registered with
that fingerprint under any subject. Within one subject, two schemas that share a
fingerprint (an evolution that only changed a logical type) are told apart by nothing:
the one registered last wins.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from fastavro import parse_schema
from fastavro.schema import fingerprint, to_parsing_canonical_form

from omconnect.errors import DataError

__all__ = [
    "DEFAULT_REGISTRY",
    "MARKER",
    "SchemaRegistry",
    "avro_fingerprint",
    "load_schema_file",
    "subject_of",
]

MARKER = b"\xc3\x01"
"""The two bytes that open every single-object encoded message."""


def avro_fingerprint(avro_schema: Any) -> bytes:
    """The 8-byte CRC-64-AVRO fingerprint of ``avro_schema`` (little-endian, as in the
    single-object encoding).

    Raises:
        DataError: ``avro_schema`` is not a valid Avro schema.

    """
    try:
        parsed = parse_schema(avro_schema)
        return bytes.fromhex(fingerprint(to_parsing_canonical_form(parsed), "CRC-64-AVRO"))
    except Exception as exc:  # fastavro raises several unrelated types for bad schemas
        raise DataError(f"invalid Avro schema: {exc}") from exc


def subject_of(topic: str, is_key: bool) -> str:
    """The subject a topic's keys or values are registered under (``orders-value``)."""
    return f"{topic}-{'key' if is_key else 'value'}"


def load_schema_file(path: str | Path) -> Any:
    """The Avro schema in an ``.avsc`` file (JSON).

    Raises:
        OSError: The file cannot be read.
        DataError: It is not JSON.

    """
    text = Path(path).read_text(encoding="utf-8")
    try:
        return json.loads(text)
    except ValueError as exc:
        raise DataError(f"{path} is not JSON: {exc}") from None


class SchemaRegistry:
    """Avro writer schemas by subject and fingerprint. Thread-safe; lives for the process.

    This is not a Confluent Schema Registry client: schemas are known only to the
    process that registered them.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_subject: dict[tuple[str, bytes], Any] = {}
        self._latest: dict[bytes, Any] = {}

    def register(self, avro_schema: Any, subject: str | None = None) -> bytes:
        """Remember ``avro_schema`` (a JSON-able Avro schema), under ``subject`` if given,
        and return its fingerprint.

        Raises:
            DataError: Not a valid Avro schema.

        """
        key = avro_fingerprint(avro_schema)
        with self._lock:
            if subject is not None:
                self._by_subject[(subject, key)] = avro_schema
            self._latest[key] = avro_schema
        return key

    def get(self, key: bytes, subject: str | None = None) -> Any | None:
        """The schema with fingerprint ``key``: the one registered under ``subject`` if
        any, else the last one registered; ``None`` when unknown.
        """
        with self._lock:
            if subject is not None:
                found = self._by_subject.get((subject, key))
                if found is not None:
                    return found
            return self._latest.get(key)

    def __len__(self) -> int:
        with self._lock:
            return len(self._latest)


DEFAULT_REGISTRY = SchemaRegistry()
"""The process's registry, shared by every AvroConverter."""
