"""A stream a reader can seek in: the object's own, or a spooled copy of its bytes."""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import Iterator
from typing import IO

__all__ = ["seekable_source"]


@contextlib.contextmanager
def seekable_source(stream: IO[bytes]) -> Iterator[IO[bytes]]:
    """``stream`` when it can seek, else a temporary file holding its (remaining) bytes,
    removed afterwards. For readers that jump (a Parquet footer is read first) or read an
    object again (CSV's column reader falls back to the record reader).
    """
    if _seekable(stream):
        yield stream
        return
    with tempfile.TemporaryFile() as spooled:
        shutil.copyfileobj(stream, spooled, 1 << 20)
        spooled.seek(0)
        yield spooled


def _seekable(stream: IO[bytes]) -> bool:
    try:
        return bool(stream.seekable())
    except (AttributeError, ValueError):
        return False
