"""A key/value store kept as a log of writes and read into memory:
:class:`LogKeyValueStore`.

The design the broker transports share (Kafka Connect's ``KafkaBasedLog``): a namespace
is a log (a compacted topic, a stream) where every write is a record keyed by the key and
a delete is a tombstone; the store reads the log into a dict, so the last write of a key
wins, ``get`` answers from the dict and ``scan`` sorts it. This base holds the dict and
the checks; a subclass writes and reads its log:

* :meth:`~LogKeyValueStore._append` writes the (checked) items and returns once the log
  stored them;
* :meth:`~LogKeyValueStore._catch_up` applies what others wrote since it last ran, for a
  store that reads on demand (the default does nothing: a store that reads the log
  continuously, or only at open, applies as it reads);
* :meth:`~LogKeyValueStore._apply` puts one record into the view (call it under
  ``self._lock`` while reading);
* :meth:`~LogKeyValueStore._release` closes the log's clients.
"""

from __future__ import annotations

import abc
import threading
from collections.abc import Iterator, Mapping

from omconnect.transport.spi import KeyValueStore

__all__ = ["LogKeyValueStore", "checked_items"]


def checked_items(items: Mapping[str, bytes | None]) -> dict[str, bytes | None]:
    """``items`` with ``bytes`` values (``None`` deletes the key).

    Raises:
        TypeError: A key is not a ``str`` or a value not bytes-like or ``None``.

    """
    checked: dict[str, bytes | None] = {}
    for key, value in items.items():
        if not isinstance(key, str):
            raise TypeError(f"key/value store keys are str, got {type(key).__name__}: "
                            f"{key!r}")
        if value is not None and not isinstance(value, (bytes, bytearray, memoryview)):
            raise TypeError(f"key/value store values are bytes (or None to delete), got "
                            f"{type(value).__name__} for key {key!r}")
        checked[key] = None if value is None else bytes(value)
    return checked


class LogKeyValueStore(KeyValueStore):
    """The in-memory view of a log of writes (see the module docstring). Thread-safe."""

    def __init__(self) -> None:
        self._values: dict[str, bytes] = {}
        self._lock = threading.RLock()

    # -- for subclasses ---------------------------------------------------------------

    @abc.abstractmethod
    def _append(self, items: dict[str, bytes | None]) -> None:
        """Write ``items`` (checked, not empty) to the log; return once it stored them."""

    def _catch_up(self) -> None:
        """Apply what the log gained since the last call (default: nothing to do)."""

    def _apply(self, key: str, value: bytes | None) -> None:
        """Put one record into the view (``None`` deletes); call with the lock held."""
        if value is None:
            self._values.pop(key, None)
        else:
            self._values[key] = value

    def _release(self) -> None:
        """Close what reads and writes the log (default: nothing)."""

    # -- the KeyValueStore SPI ----------------------------------------------------------

    def get(self, key: str) -> bytes | None:
        """The value stored under ``key``, or ``None``."""
        self._check_open()
        with self._lock:
            self._catch_up()
            return self._values.get(key)

    def put_many(self, items: Mapping[str, bytes | None]) -> None:
        """Write every item; returns once the log stored all of them. A ``None`` value
        deletes the key.

        Raises:
            TypeError: A key is not a ``str`` or a value not bytes or ``None``.
            TransportError: The write failed (some items may be stored).

        """
        self._check_open()
        checked = checked_items(items)
        if checked:
            self._append(checked)

    def scan(self, prefix: str = "") -> Iterator[tuple[str, bytes]]:
        """Every (key, value) whose key starts with ``prefix``, in key order."""
        self._check_open()
        with self._lock:
            self._catch_up()
            found = sorted((k, v) for k, v in self._values.items() if k.startswith(prefix))
        return iter(found)

    def close(self) -> None:
        """Drop the view and release the log's clients. Idempotent."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._values.clear()
        self._release()
