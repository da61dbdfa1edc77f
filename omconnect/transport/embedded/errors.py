"""sqlite3 errors as omconnect errors: busy or locked databases, a full disk and WAL-index
contention are retriable; everything else (I/O errors, corruption, a read-only file) is
fatal. SQLite's own message and result-code name are kept.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from omconnect.errors import ConnectError, RetriableTransportError, TransportError

__all__ = ["translate", "translated_errors"]

# Primary result codes worth retrying: the lock is held by another process (BUSY),
# a table is locked by this process (LOCKED), the disk is full (FULL: space may be
# freed), WAL-index contention (PROTOCOL).
_RETRIABLE_CODES = {5, 6, 13, 15}


def translate(exc: BaseException, action: str, **context: Any) -> ConnectError:
    """The omconnect error for a sqlite3 error raised while doing ``action``, chained to
    it (an omconnect error is returned as it is).

    Busy or locked databases, a full disk and WAL-index contention are retriable;
    everything else (I/O errors, corruption, a read-only file) is fatal. SQLite's own
    message and result-code name are kept.
    """
    if isinstance(exc, ConnectError):
        return exc
    code = getattr(exc, "sqlite_errorcode", None)
    name = getattr(exc, "sqlite_errorname", None) or type(exc).__name__
    message = f"embedded transport: {action} failed: {exc} ({name})"
    retriable = (code is not None and code & 0xFF in _RETRIABLE_CODES) or (
        code is None and isinstance(exc, sqlite3.Error) and "locked" in str(exc))
    error = (RetriableTransportError if retriable else TransportError)(message, **context)
    error.__cause__ = exc
    return error


@contextmanager
def translated_errors(action: str, **context: Any) -> Iterator[None]:
    """Translate sqlite3 errors raised inside the block (see :func:`translate`)."""
    try:
        yield
    except sqlite3.Error as exc:
        raise translate(exc, action, **context) from exc
