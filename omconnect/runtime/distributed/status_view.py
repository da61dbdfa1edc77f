"""A connector's status as any worker of the cluster answers it: :func:`cluster_status`.

A connector's instance and each task are placed by the assignment; the worker running
one records its state in the cluster's status store, which every worker reads. What one
worker reports for an item:

* its own live state, when the item runs here;
* the state recorded by the worker the assignment places it on, when that worker is alive
  and the record is that worker's (a record of an earlier owner is stale);
* ``UNASSIGNED`` otherwise: while a rebalance places or moves it, or while it waits for
  a departed worker (``scheduled.rebalance.max.delay.ms``), naming the worker it is
  assigned to, if any.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from omconnect.connector.lifecycle import State
from omconnect.runtime.config_store import StatusStore
from omconnect.runtime.connector_entry import ConnectorEntry
from omconnect.runtime.distributed.assignment import Assignment
from omconnect.runtime.distributed.cluster_state import ConnectorState
from omconnect.runtime.status import ConnectorStatus, StateInfo, TaskStatus
from omconnect.runtime.status_records import version_of

__all__ = ["cluster_status"]


def cluster_status(
    state: ConnectorState,
    *,
    kind: str,
    assignment: Assignment,
    alive: Mapping[str, str],
    me: str,
    local: ConnectorEntry | None,
    store: StatusStore | None,
) -> ConnectorStatus:
    """The status of ``state``'s connector (see the module docstring).

    Args:
        state: The connector as the config log says.
        kind: ``source``, ``sink`` or ``unknown``.
        assignment: The assignment in force.
        alive: Live workers and their sessions.
        me: This worker's id.
        local: What runs of it on this worker, if anything.
        store: The cluster's status store.

    """
    name = state.name
    if state.target is State.STOPPED:
        return ConnectorStatus(name=name, type=kind,
                               connector=StateInfo(state=State.STOPPED, worker_id=me))
    stored_tasks = store.tasks(name) if store is not None else {}
    owner = assignment.owner_of_connector(name)
    connector = _item(owner, me, assignment, alive, local_state=_local_connector(local),
                      stored=store.connector(name) if store is not None else None)
    tasks = []
    for number in range(len(state.task_configs)):
        runner = local.tasks.get(number) if local is not None else None
        local_task = None if runner is None else StateInfo(
            state=runner.state, worker_id=me, trace=local.scrubbed(runner.trace)
            if local is not None else runner.trace, version=version_of(runner.task))
        info = _item(assignment.owner_of_task((name, number)), me, assignment, alive,
                     local_state=local_task, stored=stored_tasks.get(number))
        tasks.append(TaskStatus(connector=name, id=number, state=info.state,
                                worker_id=info.worker_id, trace=info.trace,
                                version=info.version))
    return ConnectorStatus(name=name, type=kind, connector=connector, tasks=tuple(tasks))


def _local_connector(local: ConnectorEntry | None) -> StateInfo | None:
    if local is None or (local.runner is None and local.trace is None):
        return None
    return StateInfo(state=local.connector_state, worker_id="",
                     trace=local.scrubbed(local.connector_trace),
                     version=None if local.runner is None else version_of(local.runner.connector))


def _item(owner: str | None, me: str, assignment: Assignment, alive: Mapping[str, str],
          *, local_state: StateInfo | None, stored: Mapping[str, Any] | None) -> StateInfo:
    if owner is None:
        return StateInfo(state=State.UNASSIGNED, worker_id=me)
    share = assignment.workers[owner]
    if alive.get(owner) != share.session:
        return StateInfo(state=State.UNASSIGNED, worker_id=owner)
    if owner == me:
        if local_state is None:
            return StateInfo(state=State.UNASSIGNED, worker_id=me)
        return StateInfo(state=local_state.state, worker_id=me, trace=local_state.trace,
                         version=local_state.version)
    if not stored or stored.get("worker_id") != owner:
        return StateInfo(state=State.UNASSIGNED, worker_id=owner)
    return StateInfo(state=State(stored.get("state", "UNASSIGNED")), worker_id=owner,
                     trace=stored.get("trace"))
