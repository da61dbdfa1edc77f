from __future__ import annotations

import threading

import pytest
from source_helpers import FakeClock

from omconnect.source_base import Backoff, BackoffConfig


def test_delays_double_then_cap_at_five_seconds() -> None:
    backoff = Backoff(BackoffConfig(initial_delay=0.1, max_delay=5.0))
    delays = [backoff.next_delay() for _ in range(10)]
    assert delays == pytest.approx([0.1, 0.2, 0.4, 0.8, 1.6, 3.2, 5.0, 5.0, 5.0, 5.0])
    assert backoff.attempts == 10


def test_reset_starts_again_from_the_initial_delay() -> None:
    backoff = Backoff(BackoffConfig(initial_delay=0.25, max_delay=2.0))
    backoff.next_delay()
    backoff.next_delay()
    backoff.reset()
    assert backoff.next_delay() == 0.25


def test_huge_attempt_counts_stay_at_the_cap() -> None:
    config = BackoffConfig(initial_delay=0.1, max_delay=5.0, multiplier=10.0)
    assert config.delay(10_000) == 5.0


def test_delay_waits_on_the_clock_and_reports_completion() -> None:
    clock = FakeClock()
    backoff = Backoff(BackoffConfig(initial_delay=1.0, max_delay=4.0), clock=clock)
    assert backoff.delay() is True
    assert backoff.delay() is True
    assert clock.waits == [1.0, 2.0]


def test_delay_cut_short_by_stop_reports_it() -> None:
    stop = threading.Event()
    stop.set()
    backoff = Backoff(BackoffConfig(initial_delay=5.0, max_delay=5.0), stop=stop)
    # The real clock: an already-set event returns at once instead of sleeping 5 s.
    assert backoff.delay() is False
    assert backoff.stopped


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"initial_delay": 0}, "initial_delay must be positive"),
        ({"max_delay": -1.0}, "max_delay must be positive"),
        ({"multiplier": 0.5}, "multiplier must be at least 1"),
        ({"initial_delay": 6.0, "max_delay": 5.0}, "exceeds max_delay"),
    ],
)
def test_bad_profiles_are_refused(kwargs: dict[str, float], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        BackoffConfig(**kwargs)
