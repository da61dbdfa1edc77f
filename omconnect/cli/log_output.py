"""Log lines for the command line: readable on a terminal, structured otherwise.

Three formats, chosen with ``--log-format`` (default: ``text`` when standard error is a
terminal, ``logfmt`` otherwise):

* ``text`` — ``12:03:04 WARNING [orders-0] message``, for people.
* ``logfmt`` — ``ts=2024-05-01T12:03:04.120Z level=warning logger=... connector=orders
  task=0 msg="..."``, one line per event, for log shippers and ``grep``.
* ``json`` — the same fields as one JSON object per line.

Every record logged on a task's thread carries ``connector`` and ``task`` (taken from the
thread, which the runtime names ``omconnect-task-<connector>-<task>``), so each line says
which task it is about without every log call having to pass them. Secret values of the
running connectors' configs are replaced by ``[hidden]`` in every line
(:class:`~omconnect.config.log_scrubbing.SecretScrubbingFilter`).
"""

from __future__ import annotations

import json
import logging
import sys
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any, TextIO

from omconnect.config.log_scrubbing import SecretScrubbingFilter

__all__ = [
    "FORMATS",
    "TaskContextFilter",
    "configure_logging",
    "format_logfmt",
    "quiet_client_loggers",
    "remove_cli_logging",
]

FORMATS = ("text", "logfmt", "json")
"""The accepted ``--log-format`` values."""

_TASK_THREAD_PREFIX = "omconnect-task-"


class TaskContextFilter(logging.Filter):
    """Adds ``connector`` and ``task`` to records logged on a task's thread (``None``
    elsewhere), unless the record already has them.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        """Annotate ``record``; never drops it."""
        if getattr(record, "connector", None) is None:
            connector, task = _task_of(record.threadName or "")
            record.connector = connector
            record.task = task
        elif not hasattr(record, "task"):
            record.task = None
        return True


def _task_of(thread_name: str) -> tuple[str | None, int | None]:
    if not thread_name.startswith(_TASK_THREAD_PREFIX):
        return None, None
    connector, _, number = thread_name[len(_TASK_THREAD_PREFIX):].rpartition("-")
    if not connector or not number.isdigit():
        return None, None
    return connector, int(number)


def _quote(value: Any) -> str:
    text = value if isinstance(value, str) else str(value)
    if text and not any(c in text for c in ' "=\\\n\t') and text.isprintable():
        return text
    return json.dumps(text, ensure_ascii=False)


def format_logfmt(fields: dict[str, Any]) -> str:
    """``key=value`` pairs separated by spaces; values with spaces, quotes or ``=`` are
    JSON-quoted; ``None`` values are left out.
    """
    return " ".join(f"{key}={_quote(value)}" for key, value in fields.items()
                    if value is not None)


def _timestamp(created: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(created)) + \
        f".{int(created % 1 * 1000):03d}Z"


def _fields(record: logging.LogRecord) -> dict[str, Any]:
    fields: dict[str, Any] = {
        "ts": _timestamp(record.created),
        "level": record.levelname.lower(),
        "logger": record.name,
        "connector": getattr(record, "connector", None),
        "task": getattr(record, "task", None),
        "msg": record.getMessage(),
    }
    for key, value in getattr(record, "fields", {}).items():
        fields.setdefault(key, value)
    if record.exc_text:  # already formatted (and scrubbed, see SecretScrubbingFilter)
        fields["error"] = record.exc_text
    elif record.exc_info and record.exc_info[0] is not None:
        fields["error"] = "".join(logging.Formatter().formatException(record.exc_info))
    return fields


class _LogfmtFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        return format_logfmt(_fields(record))


class _JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        return json.dumps({k: v for k, v in _fields(record).items() if v is not None},
                          ensure_ascii=False, default=str)


class _TextFormatter(logging.Formatter):
    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(where)s%(message)s", "%H:%M:%S")

    def format(self, record: logging.LogRecord) -> str:
        connector = getattr(record, "connector", None)
        task = getattr(record, "task", None)
        if connector is None:
            record.where = ""
        else:
            record.where = f"[{connector}-{task}] " if task is not None else f"[{connector}] "
        extra = getattr(record, "fields", None)
        text = super().format(record)
        if extra:
            text += " " + format_logfmt(extra)
        return text


class _StreamHandler(logging.Handler):
    """Writes formatted lines through ``write`` (which may redraw a progress display)."""

    def __init__(self, write: Callable[[str], None]) -> None:
        super().__init__()
        self._write = write

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self._write(self.format(record) + "\n")
        except Exception:
            self.handleError(record)


class _LockedWriter:
    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._lock = threading.Lock()

    def __call__(self, text: str) -> None:
        with self._lock:
            self._stream.write(text)
            self._stream.flush()


def configure_logging(
    *,
    level: int | str = logging.INFO,
    log_format: str | None = None,
    stream: TextIO | None = None,
    write: Callable[[str], None] | None = None,
) -> str:
    """Send omconnect's logs (and the root logger's) to standard error.

    Args:
        level: The lowest level shown.
        log_format: ``text``, ``logfmt`` or ``json``; default ``text`` on a terminal,
            ``logfmt`` otherwise.
        stream: Where lines go (default ``sys.stderr``).
        write: Instead of writing to ``stream``, hand each line to this (e.g. a progress
            display that redraws itself around log lines).

    Returns:
        The format used.

    """
    out = stream if stream is not None else sys.stderr
    if log_format is None:
        log_format = "text" if _isatty(out) else "logfmt"
    formatter: logging.Formatter
    if log_format == "json":
        formatter = _JsonFormatter()
    elif log_format == "logfmt":
        formatter = _LogfmtFormatter()
    else:
        formatter = _TextFormatter()
    handler = _StreamHandler(write or _LockedWriter(out))
    handler.setFormatter(formatter)
    handler.addFilter(TaskContextFilter())
    handler.addFilter(SecretScrubbingFilter())
    remove_cli_logging()
    handler._omconnect_cli = True  # type: ignore[attr-defined]
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(level)
    return log_format


def quiet_client_loggers(names: Iterable[str], level: int | str) -> None:
    """Show the native client libraries' loggers ``names`` at WARNING and above, unless
    ``level`` (the worker's) is DEBUG: kafka-python wrote 245 of the 276 lines of a
    two-minute worker log at INFO, pika and pulsar-client as much.
    """
    debug = level == logging.DEBUG or str(level).upper() == "DEBUG"
    shown = logging.DEBUG if debug else logging.WARNING
    for name in names:
        logging.getLogger(name).setLevel(shown)


def remove_cli_logging() -> None:
    """Remove the handler :func:`configure_logging` added (for in-process callers)."""
    root = logging.getLogger()
    for old in list(root.handlers):
        if getattr(old, "_omconnect_cli", False):
            root.removeHandler(old)


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
