"""Secret values kept out of log lines.

A connector, a task or a client library may put a config value into an exception message
or a log line (``login failed for admin:hunter2``). The runtime cannot change what they
write, so it tells :data:`KNOWN_SECRETS` the secret values of every connector it starts
(:func:`~omconnect.config.secrets.secret_values` of the resolved config), and a
:class:`SecretScrubbingFilter` on a log handler replaces them with ``[hidden]`` in each
record's message and traceback before the handler formats it.

``omconnect standalone`` puts the filter on its handler. An application that embeds
:class:`~omconnect.runtime.StandaloneHerder` adds it to its own handlers::

    handler.addFilter(SecretScrubbingFilter())

A filter on a *logger* would see only that logger's own records, not those of its
children (``omconnect_file.source``, ``kafka.conn``), so it belongs on the handler.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable

from omconnect.config.secrets import scrub

__all__ = ["KNOWN_SECRETS", "KnownSecrets", "SecretScrubbingFilter"]


class KnownSecrets:
    """The secret values of the configs in use in this process, by owner.

    Thread-safe. An owner is whatever registers them (the herder uses one key per
    connector) and replaces or forgets them as the config changes.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_owner: dict[object, tuple[str, ...]] = {}
        self._all: tuple[str, ...] = ()

    def set(self, owner: object, values: Iterable[str]) -> None:
        """Register ``owner``'s secret values, replacing what it registered before."""
        with self._lock:
            self._by_owner[owner] = tuple(values)
            self._refresh()

    def forget(self, owner: object) -> None:
        """Drop ``owner``'s values (no error if it registered none)."""
        with self._lock:
            if self._by_owner.pop(owner, None) is not None:
                self._refresh()

    def values(self) -> tuple[str, ...]:
        """Every registered value, longest first (so a value containing another is
        replaced whole).
        """
        return self._all

    def _refresh(self) -> None:
        unique = {value for values in self._by_owner.values() for value in values if value}
        self._all = tuple(sorted(unique, key=len, reverse=True))


KNOWN_SECRETS = KnownSecrets()
"""The process-wide registry the runtime fills and :class:`SecretScrubbingFilter` reads."""


class SecretScrubbingFilter(logging.Filter):
    """Replaces known secret values in a record's message and traceback (never drops a
    record).

    Args:
        secrets: Where the values come from (default :data:`KNOWN_SECRETS`).

    """

    def __init__(self, secrets: KnownSecrets | None = None) -> None:
        super().__init__()
        self._secrets = secrets if secrets is not None else KNOWN_SECRETS

    def filter(self, record: logging.LogRecord) -> bool:
        """Scrub ``record`` in place; always keeps it."""
        secrets = self._secrets.values()
        if not secrets:
            return True
        try:
            message = record.getMessage()
        except Exception:  # a malformed log call: the handler reports it when formatting
            return True
        scrubbed = scrub(message, secrets)
        if scrubbed != message:
            record.msg, record.args = scrubbed, None
        if record.exc_info and record.exc_info[0] is not None:
            trace = record.exc_text or logging.Formatter().formatException(record.exc_info)
            scrubbed = scrub(trace, secrets)
            if scrubbed != trace:
                # formatters print exc_text when set; without exc_info they never
                # format the exception again from its (unscrubbed) arguments
                record.exc_text, record.exc_info = scrubbed, None
        elif record.exc_text:
            record.exc_text = scrub(record.exc_text, secrets)
        if record.stack_info:
            record.stack_info = scrub(record.stack_info, secrets)
        return True
