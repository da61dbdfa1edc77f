"""Connector and task statuses: recording them in the status store as they change, and
reading them back (live from the runners when the herder runs, stored otherwise).
:class:`StatusRecorder`.
"""

from __future__ import annotations

import logging
from typing import Any

from omconnect.connector.lifecycle import State
from omconnect.runtime.config_store import StatusStore
from omconnect.runtime.connector_entry import ConnectorEntry
from omconnect.runtime.status import ConnectorStatus, StateInfo, TaskStatus

__all__ = ["StatusRecorder"]

_log = logging.getLogger(__name__)


class StatusRecorder:
    """Writes and reads one worker's connector and task statuses.

    Args:
        worker_id: The id recorded with every status.

    Attributes:
        store: The status store (``None`` while the herder is closed: recording is then
            a no-op).

    """

    def __init__(self, worker_id: str) -> None:
        self.worker_id = worker_id
        self.store: StatusStore | None = None

    # -- recording ----------------------------------------------------------------------

    def connector(self, entry: ConnectorEntry, state: State, trace: str | None = None) -> None:
        """Record the connector's state (a failure to record is logged, not raised)."""
        try:
            if self.store is not None:
                self.store.put_connector(entry.name, state, self.worker_id,
                                         entry.scrubbed(trace))
        except Exception:
            _log.exception("recording the status of connector %r failed", entry.name)

    def task(self, entry: ConnectorEntry, number: int, state: State,
             trace: str | None = None) -> None:
        """Record one task's state (a failure to record is logged, not raised)."""
        try:
            if self.store is not None:
                self.store.put_task(entry.name, number, state, self.worker_id,
                                    entry.scrubbed(trace))
        except Exception:
            _log.exception("recording the status of task %s-%d failed", entry.name, number)

    def everything(self, entry: ConnectorEntry) -> None:
        """Record the connector's state and each of its running tasks'."""
        self.connector(entry, entry.connector_state, entry.connector_trace)
        for number, runner in entry.tasks.items():
            self.task(entry, number, runner.state, runner.trace)

    # -- reading --------------------------------------------------------------------------

    def live(self, entry: ConnectorEntry) -> ConnectorStatus:
        """The connector's status from its runners (the herder runs it)."""
        tasks = []
        for number in range(len(entry.task_configs)):
            runner = entry.tasks.get(number)
            if runner is None:
                tasks.append(TaskStatus(connector=entry.name, id=number,
                                        state=State.UNASSIGNED, worker_id=self.worker_id))
            else:
                tasks.append(TaskStatus(connector=entry.name, id=number, state=runner.state,
                                        worker_id=self.worker_id,
                                        trace=entry.scrubbed(runner.trace),
                                        version=version_of(runner.task)))
        return ConnectorStatus(
            name=entry.name, type=entry.kind,
            connector=StateInfo(state=entry.connector_state, worker_id=self.worker_id,
                                trace=entry.scrubbed(entry.connector_trace),
                                version=None if entry.runner is None
                                else version_of(entry.runner.connector)),
            tasks=tuple(tasks))

    def stored(self, entry: ConnectorEntry) -> ConnectorStatus:
        """The connector's status as last recorded (the herder does not run it)."""
        assert self.store is not None
        stored = self.store.connector(entry.name) or {}
        state = State.STOPPED if entry.target is State.STOPPED else \
            State(stored.get("state", State.UNASSIGNED.value))
        connector = StateInfo(state=state, worker_id=stored.get("worker_id") or self.worker_id,
                              trace=stored.get("trace"))
        tasks = tuple(
            TaskStatus(connector=entry.name, id=n, state=State(t.get("state", "UNASSIGNED")),
                       worker_id=t.get("worker_id") or self.worker_id, trace=t.get("trace"))
            for n, t in sorted(self.store.tasks(entry.name).items()))
        return ConnectorStatus(name=entry.name, type=entry.kind, connector=connector,
                               tasks=() if entry.target is State.STOPPED else tasks)


def version_of(plugin: Any) -> str | None:
    """A running connector's or task's ``version()``; ``None`` when it raises."""
    try:
        return str(plugin.version())
    except Exception:
        _log.debug("version() of %s raised", type(plugin).__qualname__, exc_info=True)
        return None
