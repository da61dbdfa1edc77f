"""Backoff: exponential delays, capped, that a stop request cuts short.

A source that finds nothing to read should not ask its storage again at once. The base
(:class:`~omconnect.source_base.IteratorSourceTask`) uses a :class:`Backoff` between empty
reads of the iterator; an author may use another one inside the iterator, e.g. between
retries of a recoverable storage error. Every wait goes through a :class:`Clock` and is
cut short when the task is asked to stop, so a stopping task never sleeps out a delay.
"""

from __future__ import annotations

import threading
import time
from typing import Protocol

import attrs

__all__ = ["MAX_IDLE_DELAY", "SYSTEM_CLOCK", "Backoff", "BackoffConfig", "Clock", "SystemClock"]

MAX_IDLE_DELAY = 5.0
"""The longest idle delay, in seconds, the base waits between empty reads."""


class Clock(Protocol):
    """Time as the source base sees it: a monotonic clock and an interruptible wait.

    Tests inject a fake clock to assert delays without sleeping.
    """

    def now(self) -> float:
        """Seconds on a monotonic clock."""
        ...

    def wait(self, stop: threading.Event, seconds: float) -> bool:
        """Wait up to ``seconds`` or until ``stop`` is set.

        Returns:
            Whether ``stop`` is set (the wait was cut short, or stop was already set).

        """
        ...


class SystemClock:
    """The real clock: :func:`time.monotonic` and :meth:`threading.Event.wait`."""

    def now(self) -> float:
        """Seconds on :func:`time.monotonic`."""
        return time.monotonic()

    def wait(self, stop: threading.Event, seconds: float) -> bool:
        """Wait up to ``seconds`` or until ``stop`` is set; whether it is set."""
        return stop.wait(seconds) if seconds > 0 else stop.is_set()


SYSTEM_CLOCK = SystemClock()
"""The shared real clock."""


def _positive(instance: object, attribute: attrs.Attribute[float], value: float) -> None:
    if not value > 0:
        raise ValueError(f"backoff {attribute.name} must be positive, got {value!r}")


@attrs.frozen(kw_only=True)
class BackoffConfig:
    """The delay profile of a :class:`Backoff`.

    The n-th consecutive delay (from 0) is ``min(max_delay, initial_delay * multiplier**n)``.

    Attributes:
        initial_delay: The first delay, in seconds.
        max_delay: The cap, in seconds (the base's idle backoff never exceeds
            :data:`MAX_IDLE_DELAY`).
        multiplier: How much each delay grows over the previous one (at least 1).

    """

    initial_delay: float = attrs.field(default=0.1, validator=_positive)
    max_delay: float = attrs.field(default=MAX_IDLE_DELAY, validator=_positive)
    multiplier: float = attrs.field(default=2.0)

    def __attrs_post_init__(self) -> None:
        if self.multiplier < 1:
            raise ValueError(f"backoff multiplier must be at least 1, got {self.multiplier!r}")
        if self.initial_delay > self.max_delay:
            raise ValueError(
                f"backoff initial_delay ({self.initial_delay}) exceeds max_delay "
                f"({self.max_delay})"
            )

    def delay(self, attempt: int) -> float:
        """The delay before attempt ``attempt`` (0 for the first delay), in seconds."""
        # Past ~64 doublings every delay is the cap; keep the power small.
        return min(self.max_delay, self.initial_delay * self.multiplier ** min(attempt, 64))


class Backoff:
    """Consecutive delays that grow exponentially up to a cap; :meth:`reset` on success.

    Not thread-safe: one thread calls :meth:`next_delay`, :meth:`delay` and :meth:`reset`;
    any thread may set the ``stop`` event to cut a :meth:`delay` short.

    Subclass and override :meth:`next_delay` for another delay profile (e.g. jitter).

    Args:
        config: The delay profile.
        stop: Set when the task stops; cuts waits short. A private event by default.
        clock: Where waits happen (a fake one in tests).

    """

    def __init__(
        self,
        config: BackoffConfig | None = None,
        *,
        stop: threading.Event | None = None,
        clock: Clock = SYSTEM_CLOCK,
    ) -> None:
        self.config = config or BackoffConfig()
        self._stop = stop if stop is not None else threading.Event()
        self._clock = clock
        self._attempts = 0

    @property
    def attempts(self) -> int:
        """Delays handed out since the last :meth:`reset`."""
        return self._attempts

    @property
    def stopped(self) -> bool:
        """Whether the stop event is set."""
        return self._stop.is_set()

    def next_delay(self) -> float:
        """The next delay in seconds (and count it)."""
        delay = self.config.delay(self._attempts)
        self._attempts += 1
        return delay

    def reset(self) -> None:
        """Start again from the initial delay (call after a success)."""
        self._attempts = 0

    def delay(self) -> bool:
        """Wait out the next delay, unless the task stops first.

        Returns:
            ``True`` when the full delay passed, ``False`` when stop cut it short (the
            caller should then return promptly).

        """
        return not self._clock.wait(self._stop, self.next_delay())
