"""Transformers: the records in an object's bytes, per format.

========  ============================  =====================================
format    class                         value
========  ============================  =====================================
jsonl     :class:`JsonLinesTransformer` schemaless JSON value per line
csv       :class:`CsvTransformer`       STRUCT per row (header row -> schema)
avro      :class:`AvroTransformer`      the container file's records
parquet   :class:`ParquetTransformer`   STRUCT per row (needs pyarrow)
bytes     :class:`BytesTransformer`     BYTES chunks of the object
========  ============================  =====================================
"""

from __future__ import annotations

import importlib
from typing import Any

from omconnect.errors import ConfigError
from omconnect.source.transformers.base import KeySource, TransformedRecord, Transformer
from omconnect.source.transformers.compression import (
    COMPRESSIONS,
    compression_for,
    open_decompressed,
    strip_compression,
)

__all__ = [
    "COMPRESSIONS",
    "FORMATS",
    "KeySource",
    "TransformedRecord",
    "Transformer",
    "compression_for",
    "create_transformer",
    "open_decompressed",
    "strip_compression",
    "transformer_class",
]

FORMATS: dict[str, str] = {
    "jsonl": "omconnect.source.transformers.jsonl:JsonLinesTransformer",
    "csv": "omconnect.source.transformers.csv:CsvTransformer",
    "avro": "omconnect.source.transformers.avro:AvroTransformer",
    "parquet": "omconnect.source.transformers.parquet:ParquetTransformer",
    "bytes": "omconnect.source.transformers.bytes:BytesTransformer",
}
"""``input.format`` values and the transformer class each selects (imported on use)."""


def transformer_class(name: str) -> type[Transformer]:
    """The transformer class for format ``name``.

    Raises:
        ConfigError: An unknown format (names ``input.format`` and the known ones).

    """
    path = FORMATS.get(name.lower())
    if path is None:
        raise ConfigError(f"unknown input.format {name!r}; use one of {', '.join(FORMATS)}",
                          key="input.format")
    module, _, attribute = path.partition(":")
    cls: type[Transformer] = getattr(importlib.import_module(module), attribute)
    return cls


def create_transformer(name: str, **options: Any) -> Transformer:
    """A transformer for format ``name`` with its options (see each class).

    Raises:
        ConfigError: An unknown format or a bad option.

    """
    return transformer_class(name)(**options)
