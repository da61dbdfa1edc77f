"""Riding out a transport's retriable errors outside of sends: sink polls and commits.

A consumer whose broker restarts or whose connection drops raises
:class:`~omconnect.errors.RetriableError` from ``poll`` or ``commit``; the consumer keeps
its positions, so the runner tries again after a backoff (300 ms doubling, capped at
``errors.retry.delay.max.ms``) for as long as ``delivery.timeout.ms`` (or a longer
``errors.retry.timeout``; ``-1``: until stopped). A run of failures that lasts longer
fails the task with a :class:`~omconnect.errors.ConnectError` naming the operation and
the last cause. Any success ends the run.
"""

from __future__ import annotations

import logging
import time

from omconnect.errors import ConnectError
from omconnect.runtime.retry_with_tolerance import ErrorPolicy

__all__ = ["TransportRetry"]

_log = logging.getLogger(__name__)


class TransportRetry:
    """Tracks one kind of transport call (e.g. ``poll``) through a run of retriable
    failures. Used from the task's thread only.

    Args:
        operation: What is retried, for messages (``"poll"``, ``"commit"``).
        policy: The connector's error policy (backoff and deadline).
        where: The task, for messages (e.g. ``"lines-out-0"``).
        connector: The connector's name (error context).
        task: The task's number (error context).

    """

    def __init__(self, operation: str, policy: ErrorPolicy, *, where: str, connector: str,
                 task: int) -> None:
        self.operation = operation
        self._policy = policy
        self._where = where
        self._connector = connector
        self._task = task
        self._since: float | None = None
        self._attempt = 0

    @property
    def failing(self) -> bool:
        """Whether the last call failed (a run of failures is going on)."""
        return self._since is not None

    def failed(self, error: BaseException) -> float:
        """Note a retriable failure; the seconds to wait before trying again.

        Raises:
            ConnectError: The failures have lasted longer than the deadline.

        """
        now = time.monotonic()
        if self._since is None:
            self._since = now
            self._attempt = 0
        self._attempt += 1
        delay = self._policy.backoff(self._attempt)
        deadline = self._policy.send_deadline(self._since)
        if now + delay > deadline:
            lasted = now - self._since
            raise ConnectError(
                f"{self.operation} kept failing with retriable transport errors for "
                f"{lasted:.1f} s (delivery.timeout.ms / errors.retry.timeout); last: "
                f"{type(error).__name__}: {error}",
                connector=self._connector, task=self._task) from error
        log = _log.warning if self._attempt == 1 or self._attempt % 10 == 0 else _log.debug
        log("task %s: %s failed (retriable, attempt %d), trying again in %.1f s: %s",
            self._where, self.operation, self._attempt, delay, error)
        return delay

    def succeeded(self) -> None:
        """Note a success: the run of failures (if any) is over."""
        if self._since is not None:
            _log.info("task %s: %s works again after %d failed attempt(s)", self._where,
                      self.operation, self._attempt)
        self._since = None
        self._attempt = 0
