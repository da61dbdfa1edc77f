"""Retrying what a transport reports as transient (a broker restarting, a lost connection).

Spark fails a streaming query on the first error its source's driver-side calls raise,
and a local Spark does not retry failed tasks; so calls that may meet a broker restart are
retried here, for a bounded time, when the transport says the error is retriable
(:class:`~omconnect.errors.RetriableError`). Anything else fails at once.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TypeVar

from omconnect.errors import RetriableError

__all__ = ["retrying"]

_log = logging.getLogger(__name__)

T = TypeVar("T")

_FIRST_DELAY_S = 0.1
_MAX_DELAY_S = 5.0


def retrying(action: Callable[[], T], *, what: str, timeout_ms: int) -> T:
    """``action()``, called again after a backoff while it raises a retriable error.

    Args:
        action: What to do.
        what: What it is, for the log (``"listing partitions"``).
        timeout_ms: How long to keep retrying (``retryTimeoutMs``).

    Raises:
        RetriableError: The last retriable error, once ``timeout_ms`` has passed.
        Exception: Any other error of ``action``, at once.

    """
    deadline = time.monotonic() + timeout_ms / 1000
    delay = _FIRST_DELAY_S
    while True:
        try:
            return action()
        except RetriableError as exc:
            if time.monotonic() + delay > deadline:
                raise
            _log.warning("%s failed (%s); retrying in %.1f s", what, exc, delay)
            time.sleep(delay)
            delay = min(delay * 2, _MAX_DELAY_S)
