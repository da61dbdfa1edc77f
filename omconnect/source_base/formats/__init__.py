"""Record formats: the records in an object's bytes, per format.

========  ============================  =====================================
format    class                         value
========  ============================  =====================================
jsonl     :class:`JsonLinesFormat` schemaless JSON value per line
csv       :class:`CsvFormat`       STRUCT per row (header row -> schema)
avro      :class:`AvroFormat`      the container file's records
parquet   :class:`ParquetFormat`   STRUCT per row (needs pyarrow)
bytes     :class:`BytesFormat`     BYTES chunks of the object
========  ============================  =====================================
"""

from __future__ import annotations

import importlib
from typing import Any

from omconnect.errors import ConfigError
from omconnect.source_base.formats.base import (
    KeySource,
    ParsedBatch,
    ParsedRecord,
    RecordFormat,
)
from omconnect.source_base.formats.compression import (
    COMPRESSIONS,
    compression_for,
    open_decompressed,
    strip_compression,
)

__all__ = [
    "COMPRESSIONS",
    "FORMATS",
    "KeySource",
    "ParsedBatch",
    "ParsedRecord",
    "RecordFormat",
    "compression_for",
    "create_format",
    "format_class",
    "open_decompressed",
    "strip_compression",
]

FORMATS: dict[str, str] = {
    "jsonl": "omconnect.source_base.formats.jsonl:JsonLinesFormat",
    "csv": "omconnect.source_base.formats.csv:CsvFormat",
    "avro": "omconnect.source_base.formats.avro:AvroFormat",
    "parquet": "omconnect.source_base.formats.parquet:ParquetFormat",
    "bytes": "omconnect.source_base.formats.bytes:BytesFormat",
}
"""``input.format`` values and the record format class each selects (imported on use)."""


def format_class(name: str) -> type[RecordFormat]:
    """The record format class for format ``name``.

    Raises:
        ConfigError: An unknown format (names ``input.format`` and the known ones).

    """
    path = FORMATS.get(name.lower())
    if path is None:
        raise ConfigError(f"unknown input.format {name!r}; use one of {', '.join(FORMATS)}",
                          key="input.format")
    module, _, attribute = path.partition(":")
    cls: type[RecordFormat] = getattr(importlib.import_module(module), attribute)
    return cls


def create_format(name: str, **options: Any) -> RecordFormat:
    """A record format for format ``name`` with its options (see each class).

    Raises:
        ConfigError: An unknown format or a bad option.

    """
    return format_class(name)(**options)
