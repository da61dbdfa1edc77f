"""Lifecycle states of connectors and tasks, and the transitions allowed between them."""

from __future__ import annotations

import enum

__all__ = ["State"]


class State(enum.Enum):
    """Where a connector or task is in its life.

    ``UNASSIGNED`` → ``RUNNING`` ⇄ ``PAUSED``; ``RUNNING``/``PAUSED`` → ``STOPPED``
    (restartable) or ``FAILED`` (with a trace); any → ``DESTROYED`` (deleted, final).
    """

    UNASSIGNED = "UNASSIGNED"
    RUNNING = "RUNNING"
    PAUSED = "PAUSED"
    FAILED = "FAILED"
    STOPPED = "STOPPED"
    DESTROYED = "DESTROYED"

    def can_become(self, other: State) -> bool:
        """Whether a transition from this state to ``other`` is allowed."""
        return other in _TRANSITIONS[self]


_TRANSITIONS: dict[State, frozenset[State]] = {
    State.UNASSIGNED: frozenset({State.RUNNING, State.PAUSED, State.STOPPED, State.FAILED,
                                 State.DESTROYED}),
    State.RUNNING: frozenset({State.PAUSED, State.STOPPED, State.FAILED, State.DESTROYED,
                              State.UNASSIGNED}),
    State.PAUSED: frozenset({State.RUNNING, State.STOPPED, State.FAILED, State.DESTROYED,
                             State.UNASSIGNED}),
    State.FAILED: frozenset({State.UNASSIGNED, State.RUNNING, State.STOPPED, State.DESTROYED}),
    State.STOPPED: frozenset({State.UNASSIGNED, State.RUNNING, State.PAUSED, State.DESTROYED}),
    State.DESTROYED: frozenset(),
}
