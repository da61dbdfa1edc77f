"""A worker's rebalance metrics: :class:`RebalanceMetrics`.

Kafka Connect's worker rebalance metrics (``completed-rebalances-total``,
``rebalancing``, ``time-spent-in-rebalance``) as this cluster defines them: a
*rebalance* is an assignment this worker carried out (each new generation), and the
cluster is *rebalancing* while some connector or task that should run is not running on
a live worker (it waits for a departed worker, is being moved, or is new and not yet
placed). Time is counted while this worker sees the cluster rebalancing.
"""

from __future__ import annotations

import threading
import time

import attrs

__all__ = ["RebalanceMetrics", "RebalanceSnapshot"]


@attrs.frozen(kw_only=True)
class RebalanceSnapshot:
    """The metrics at one moment (see :class:`RebalanceMetrics`)."""

    rebalances: int
    rebalance_seconds: float
    rebalancing: bool
    generation: int
    connectors: int
    tasks: int


class RebalanceMetrics:
    """Counted by the herder's thread, read from any thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.rebalances = 0
        self.generation = 0
        self.connectors = 0
        self.tasks = 0
        self._seconds = 0.0
        self._since: float | None = None

    def applied(self, generation: int, connectors: int, tasks: int) -> None:
        """This worker carried out assignment ``generation``."""
        with self._lock:
            self.rebalances += 1
            self.generation = generation
            self.connectors, self.tasks = connectors, tasks

    def rebalancing(self, now_rebalancing: bool, now: float | None = None) -> bool:
        """Record whether the cluster is rebalancing; returns whether that changed."""
        now = time.monotonic() if now is None else now
        with self._lock:
            if now_rebalancing == (self._since is not None):
                return False
            if now_rebalancing:
                self._since = now
            else:
                assert self._since is not None
                self._seconds += now - self._since
                self._since = None
            return True

    def snapshot(self, now: float | None = None) -> RebalanceSnapshot:
        """The metrics now."""
        now = time.monotonic() if now is None else now
        with self._lock:
            running = 0.0 if self._since is None else now - self._since
            return RebalanceSnapshot(
                rebalances=self.rebalances, rebalance_seconds=self._seconds + running,
                rebalancing=self._since is not None, generation=self.generation,
                connectors=self.connectors, tasks=self.tasks)
