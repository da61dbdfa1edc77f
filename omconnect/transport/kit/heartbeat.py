"""A thread that keeps a group member alive between polls: :class:`Heartbeat`.

A consumer syncs with its group on each poll; a batch that takes longer than
``session.timeout.ms`` to process would cost it its partitions. The heartbeat thread
stamps the member alive every ``heartbeat.interval.ms`` through a store of its own, as
long as the consumer keeps polling at least every ``max.poll.interval.ms``: a stuck
consumer stops heart-beating and is evicted, and so is one whose process died.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable
from typing import Any

from omconnect.transport.kit.grouping import GroupStore

__all__ = ["Heartbeat"]

_log = logging.getLogger(__name__)


class Heartbeat:
    """Heart-beats one member from a daemon thread.

    Args:
        open_group_store: Opens the group's store for the thread, with a function that
            releases it (called on the thread when it ends).
        member: The member id.
        interval: Seconds between heartbeats.
        alive: Whether the consumer still counts as alive (it is polling, or its last
            poll ended less than ``max.poll.interval.ms`` ago); ``None`` when the
            consumer is gone, which ends the thread.

    """

    def __init__(self, open_group_store: Callable[[], tuple[GroupStore, Callable[[], Any]]],
                 *, member: str, interval: float, alive: Callable[[], bool | None]) -> None:
        self._open = open_group_store
        self._member = member
        self._interval = interval
        self._alive = alive
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True,
                                        name=f"omconnect-heartbeat-{member}")

    def start(self) -> None:
        """Start heart-beating (once)."""
        if not self._thread.is_alive() and not self._stop.is_set():
            self._thread.start()

    def stop(self) -> None:
        """Stop heart-beating. Idempotent."""
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout=1.0)

    def _run(self) -> None:
        opened: tuple[GroupStore, Callable[[], Any]] | None = None
        try:
            while not self._stop.wait(self._interval):
                alive = self._alive()
                if alive is None:
                    return
                if not alive:
                    continue
                try:
                    if opened is None:
                        opened = self._open()
                    opened[0].heartbeat(self._member)
                except Exception:  # the session timeout bounds how long this goes unseen
                    _log.debug("heartbeat of %s failed", self._member, exc_info=True)
        finally:
            if opened is not None:
                with contextlib.suppress(Exception):
                    opened[1]()
