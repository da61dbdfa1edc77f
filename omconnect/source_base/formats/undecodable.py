"""Finding the bytes a text reader could not decode, row by row.

Text formats read through ``io.TextIOWrapper(errors=TEXT_ERRORS)``: each byte that does
not decode becomes a lone surrogate (U+DC00 plus the byte, as ``surrogateescape`` does
for bytes from 0x80, but for every byte, so UTF-16 errors are caught too), which no
valid decoding gives, so the rows (lines, CSV records) holding one are reported one by
one and the rows around them are read as usual. A strict wrapper fails a whole decode
chunk (8 KiB) at once: the rows of that chunk before the bad byte would never be given,
and nothing after it read.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterable

__all__ = ["TEXT_ERRORS", "undecodable"]

TEXT_ERRORS = "omconnect-undecodable"
"""The ``errors`` a text reader of records is opened with (registered with
:func:`codecs.register_error` on import)."""

_ESCAPED = re.compile("[\udc00-\udcff]")


def _escape(error: UnicodeError) -> tuple[str, int]:
    if not isinstance(error, UnicodeDecodeError):
        raise error
    bad = error.object[error.start:error.end]
    return "".join(chr(0xDC00 + byte) for byte in bad), error.end


codecs.register_error(TEXT_ERRORS, _escape)


def undecodable(texts: Iterable[str]) -> str | None:
    """The first undecodable byte among ``texts`` as ``0xNN`` (``None``: all decoded)."""
    for text in texts:
        if not text.isascii():
            found = _ESCAPED.search(text)
            if found is not None:
                return f"0x{ord(found.group()) - 0xDC00:02x}"
    return None
