"""The one clock of the kit: :func:`now_ms`, the wall clock in milliseconds.

Message timestamps and group heartbeats use it: the wall clock is the one every process
of a machine shares, so members in different processes can judge each other's liveness.
"""

from __future__ import annotations

import time

__all__ = ["now_ms"]


def now_ms() -> int:
    """Milliseconds since the epoch."""
    return time.time_ns() // 1_000_000
