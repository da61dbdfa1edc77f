"""One lock per connector name, so changes to one connector happen one at a time.

The herder serialises each of its calls, but some requests are read-modify-write across
calls (``PATCH .../config`` reads the config, merges, then writes it): two such requests
on one connector must not interleave, or one change would be lost. Requests on different
connectors do not wait for each other here. Locks exist only while used, so random
names (a fuzzer, a typo) leave nothing behind.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["KeyedLocks"]


class KeyedLocks:
    """Locks by key, created on first use and dropped when nobody holds or waits."""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._locks: dict[str, tuple[threading.Lock, int]] = {}

    @contextmanager
    def hold(self, key: str) -> Iterator[None]:
        """Hold the lock of ``key`` for the ``with`` block."""
        with self._guard:
            lock, users = self._locks.get(key, (threading.Lock(), 0))
            self._locks[key] = (lock, users + 1)
        try:
            with lock:
                yield
        finally:
            with self._guard:
                lock, users = self._locks[key]
                if users == 1:
                    del self._locks[key]
                else:
                    self._locks[key] = (lock, users - 1)

    def __len__(self) -> int:
        with self._guard:
            return len(self._locks)
