"""The leader's step: :class:`Leadership` turns the cluster's state into the next
assignment record, when one is due.

A worker leads while the config log says it is slot 0's latest claimant (in its current
session) and the transport's group still gives it slot 0. It keeps what only the leader
needs: since when each departed worker has been gone (its work waits
``scheduled.rebalance.max.delay.ms`` from then; a new leader starts that wait anew) and
the assignment it published and has not read back yet (it plans the next one only
after, so two of its own never build on the same generation).
"""

from __future__ import annotations

from typing import Any

from omconnect.runtime.distributed.assignor import next_assignment
from omconnect.runtime.distributed.cluster_state import ClusterState

__all__ = ["Leadership"]


class Leadership:
    """The leader's side of one worker (see the module docstring).

    Args:
        worker: This worker's id.
        session: This worker process's session.
        delay_s: ``scheduled.rebalance.max.delay.ms`` in seconds.
        timeout_s: How long a published assignment may take to be read back before the
            leader plans again without it.

    """

    def __init__(self, worker: str, session: str, *, delay_s: float,
                 timeout_s: float) -> None:
        self.worker = worker
        self.session = session
        self.delay_s = delay_s
        self.timeout_s = timeout_s
        self.departed_since: dict[str, float] = {}
        self.published: tuple[int, float] | None = None
        self.recheck_at: float | None = None
        """When a departed worker's wait ends (monotonic seconds), if one runs."""

    def step(self, state: ClusterState, slots: frozenset[int], now: float
             ) -> dict[str, Any] | None:
        """The assignment record to append now, if this worker leads and one is due
        (call with the state's lock held).
        """
        if state.leader != (self.worker, self.session) or 0 not in slots:
            self.departed_since.clear()
            self.published = self.recheck_at = None
            return None
        current = state.assignment
        if self.published is not None:
            generation, at = self.published
            if current.generation < generation and now - at < self.timeout_s:
                return None
            self.published = None
        alive = {w: (m.session, m.url) for w, m in state.alive.items()}
        for worker in list(self.departed_since):
            if worker in alive or worker not in current.workers:
                del self.departed_since[worker]
        for worker in current.workers:
            if worker not in alive:
                self.departed_since.setdefault(worker, now)
        connectors, tasks = state.work()
        plan = next_assignment(current=current, alive=alive, connectors=connectors,
                               tasks=tasks, released=dict(state.released),
                               departed_since=self.departed_since, now=now,
                               delay_s=self.delay_s)
        self.recheck_at = plan.recheck_at
        if plan.workers is None:
            return None
        generation = current.generation + 1
        self.published = (generation, now)
        return {"kind": "assignment", "leader": self.worker, "session": self.session,
                "generation": generation,
                "workers": {w: s.to_json() for w, s in plan.workers.items()}}
