"""Raw bytes: an object as a sequence of BYTES records of at most ``bytes.chunk.size``.

Each chunk is one record (the last may be shorter; an empty object has none), so an
object of any size streams through in bounded memory and a consumer reassembles it by
concatenating the chunks of one key in order. ``number`` is the 1-based chunk number;
``skip`` seeks past skipped chunks when the stream allows it.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import IO, Any

from omconnect.data.schema import BYTES_SCHEMA
from omconnect.data.struct import SchemaAndValue
from omconnect.source_base.formats.base import ParsedRecord, RecordFormat, record

__all__ = ["DEFAULT_CHUNK_SIZE", "BytesFormat"]

DEFAULT_CHUNK_SIZE = 512 * 1024
"""Default chunk size: under the common 1 MB message limit of brokers."""


class BytesFormat(RecordFormat):
    """Reads objects as raw byte chunks (``input.format=bytes``).

    Args:
        chunk_size: The most bytes per record (``bytes.chunk.size``).
        **options: ``key_source`` (``object`` or ``none``), as for :class:`RecordFormat`.

    """

    name = "bytes"
    supports_key_field = False

    def __init__(self, *, chunk_size: int = DEFAULT_CHUNK_SIZE, **options: Any) -> None:
        super().__init__(**options)
        if chunk_size < 1:
            raise ValueError(f"chunk size must be at least 1, got {chunk_size}")
        self.chunk_size = chunk_size

    def _read(self, stream: IO[bytes], object_name: str, skip: int) -> Iterator[ParsedRecord]:
        size = self.chunk_size
        number = 1
        if skip:
            try:
                seekable = stream.seekable()
            except (AttributeError, ValueError):
                seekable = False
            if seekable:
                stream.seek(skip * size, io.SEEK_CUR)
            else:
                for _ in range(skip):
                    if len(stream.read(size)) < size:
                        return
            number += skip
        key = self.object_key(object_name)
        read = stream.read
        while True:
            chunk = read(size)
            while chunk and len(chunk) < size:  # short reads happen on pipes and sockets
                more = read(size - len(chunk))
                if not more:
                    break
                chunk += more
            if not chunk:
                return
            yield record(number, key, SchemaAndValue(BYTES_SCHEMA, chunk))
            number += 1
