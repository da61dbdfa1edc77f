"""Bounded waiting: every wait in the suite has a deadline, so a broken transport fails a
case instead of hanging the run.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TypeVar

__all__ = ["Deadline", "eventually", "run_bounded"]

T = TypeVar("T")


class Deadline:
    """A point in time a wait must not pass.

    Args:
        seconds: How long from now.

    """

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._end = time.monotonic() + seconds

    @property
    def remaining(self) -> float:
        """Seconds left (never negative)."""
        return max(0.0, self._end - time.monotonic())

    @property
    def expired(self) -> bool:
        """Whether the deadline has passed."""
        return time.monotonic() >= self._end

    def wait_for(self, condition: Callable[[], bool], interval: float = 0.05) -> bool:
        """Poll ``condition`` until it holds or the deadline passes; whether it held."""
        while True:
            if condition():
                return True
            if self.expired:
                return False
            time.sleep(min(interval, self.remaining))


def eventually(condition: Callable[[], T], timeout: float = 15.0, what: str = "condition",
               interval: float = 0.02) -> T:
    """Poll ``condition`` until it returns something truthy, and return that.

    Args:
        condition: What to wait for; its truthy result is returned.
        timeout: Seconds before giving up.
        what: Named in the failure (``timed out after 15 s waiting for <what>``).
        interval: Seconds between polls.

    Raises:
        AssertionError: ``condition`` stayed falsy for ``timeout`` seconds.

    """
    deadline = Deadline(timeout)
    while True:
        value = condition()
        if value:
            return value
        if deadline.expired:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(min(interval, deadline.remaining) or interval)


def run_bounded(function: Callable[[], T], seconds: float, what: str) -> T:
    """Run ``function`` on a daemon thread and return its result, or fail when it does
    not return within ``seconds`` (a hang becomes a failure, not a stuck run).

    Raises:
        AssertionError: ``function`` did not return in time.
        BaseException: Whatever ``function`` raised.

    """
    outcome: dict[str, object] = {}

    def target() -> None:
        try:
            outcome["value"] = function()
        except BaseException as exc:
            outcome["error"] = exc

    thread = threading.Thread(target=target, name=f"omconnect-bounded-{what}", daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        raise AssertionError(f"{what} did not return within {seconds:g} s (it hangs)")
    if "error" in outcome:
        raise outcome["error"]  # type: ignore[misc]
    return outcome["value"]  # type: ignore[return-value]
