"""A single background thread that runs the herder's deferred work in order.

Task threads never call into the herder directly (the herder may be waiting for them);
they hand work to the scheduler instead: failure handling, reconfiguration requests,
delayed automatic restarts.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import threading
import time
from collections.abc import Callable

__all__ = ["Scheduler"]

_log = logging.getLogger(__name__)


class Scheduler:
    """Runs callables on one thread, now or after a delay, in due-time order.

    Args:
        name: The thread's name.

    """

    def __init__(self, name: str = "omconnect-herder") -> None:
        self._queue: list[tuple[float, int, Callable[[], None]]] = []
        self._counter = itertools.count()
        self._condition = threading.Condition()
        self._closed = False
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def submit(self, function: Callable[[], None], delay: float = 0.0) -> None:
        """Run ``function`` after ``delay`` seconds (ignored once closed)."""
        with self._condition:
            if self._closed:
                return
            heapq.heappush(self._queue, (time.monotonic() + delay, next(self._counter),
                                         function))
            self._condition.notify()

    def close(self, timeout: float = 5.0) -> None:
        """Drop what is not due yet, let the running call finish, end the thread."""
        with self._condition:
            self._closed = True
            self._queue.clear()
            self._condition.notify()
        if threading.current_thread() is not self._thread:
            self._thread.join(timeout)

    def _run(self) -> None:
        while True:
            with self._condition:
                while not self._closed:
                    if self._queue and self._queue[0][0] <= time.monotonic():
                        break
                    wait = self._queue[0][0] - time.monotonic() if self._queue else None
                    self._condition.wait(wait)
                if self._closed:
                    return
                _, _, function = heapq.heappop(self._queue)
            try:
                function()
            except Exception:
                _log.exception("herder background work failed")
