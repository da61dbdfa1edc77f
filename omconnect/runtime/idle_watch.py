"""Telling when a pipeline has nothing left to do (``--stop-when-idle``).

A worker is idle when, for the whole window, no task moved a record: no source polled,
sent or had acknowledged anything and none has records in flight, and no sink read or put
anything and none lags behind where the transport reports lag. Every task must have
started (a task not yet RUNNING is not idle), have failed (a FAILED task will not move
more; the exit code reports it) or belong to a STOPPED connector. A sink connector none
of whose running tasks has a partition assigned yet is still joining its consumer group
or waiting for its topics to be created, so it is not idle either (a ``topics.regex``
that matches no topic keeps it so: stop such a worker yourself). And every running task
must have gone round its loop at least once entirely within the window (its ``loops``
metric moved twice): a task thread held up in a call to the broker, or in the connector,
for longer than the window has not looked for records meanwhile, so it is not idle either.

This is meant for demos, tests and batch runs that read a finite input.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from omconnect.runtime.metrics import TaskMetricsSnapshot

__all__ = ["IdleWatch"]

_SETTLED = frozenset({"RUNNING", "PAUSED", "FAILED", "STOPPED"})


def _activity(snap: TaskMetricsSnapshot) -> tuple[float, ...]:
    # started_at: a restarted task (its counters, loops included, begin again) moved.
    return (snap.polled, snap.sent, snap.acknowledged, snap.put, snap.errors,
            snap.dead_lettered, snap.filtered, snap.started_at)


class IdleWatch:
    """Says when every task has been idle for ``window`` seconds.

    Args:
        window: Seconds without activity before :meth:`update` returns ``True``.

    """

    def __init__(self, window: float) -> None:
        self.window = window
        self._last: dict[tuple[str, int], tuple[float, ...]] = {}
        self._idle_since: float | None = None
        self._loops_at_start: dict[tuple[str, int], int] = {}

    def update(self, now: float, snapshots: Iterable[TaskMetricsSnapshot],
               states: Mapping[tuple[str, int], str]) -> bool:
        """Feed the current metrics; whether the worker has been idle for the window.

        Args:
            now: The current time (any monotonic clock, in seconds).
            snapshots: Every task's metrics.
            states: Every task's state, by (connector, task); a connector without
                tasks may appear with its own state under task ``-1``.

        """
        current = {}
        busy = False
        snapshots_seen = list(snapshots)
        for snap in snapshots_seen:
            key = (snap.connector, snap.task)
            current[key] = activity = _activity(snap)
            if self._last.get(key) != activity:
                busy = True
            if snap.in_flight > 0 or (snap.kind == "sink" and snap.lag):
                busy = True
        if any(state not in _SETTLED for state in states.values()):
            busy = True
        if _joining_sinks(snapshots_seen, states):
            busy = True
        if set(current) != set(self._last):
            busy = True
        self._last = current
        if busy:
            self._idle_since = None
            return False
        if self._idle_since is None:
            self._idle_since = now
            self._loops_at_start = {(s.connector, s.task): s.loops for s in snapshots_seen}
        if now - self._idle_since < self.window:
            return False
        # The round under way when the window opened may have begun before it: a round
        # begun and ended inside the window is the second count after the one seen then.
        return all(snap.loops >= self._loops_at_start.get((snap.connector, snap.task), 0) + 2
                   for snap in snapshots_seen
                   if states.get((snap.connector, snap.task)) == "RUNNING")


def _joining_sinks(snapshots: Iterable[TaskMetricsSnapshot],
                   states: Mapping[tuple[str, int], str]) -> set[str]:
    """Sink connectors whose running tasks all have no partition assigned yet."""
    unassigned: dict[str, bool] = {}
    for snap in snapshots:
        if snap.kind == "sink" and states.get((snap.connector, snap.task)) == "RUNNING":
            unassigned[snap.connector] = (unassigned.get(snap.connector, True)
                                          and snap.assigned_partitions == 0)
    return {name for name, waiting in unassigned.items() if waiting}
