"""``GET /summary``: one JSON document with every connector's and task's state and counts,
what the dashboard (``GET /ui``) and ``omconnect status`` show.

Counts are totals since the task (this run of it) started; rates come from two summaries
(``records`` over ``taken_at``). A source task's ``records`` are the records the transport
acknowledged; a sink task's, the records handed to ``put``.
"""

from __future__ import annotations

import time
from typing import Any

from omconnect.errors import ConnectError
from omconnect.runtime.herder_api import Herder
from omconnect.runtime.metrics import TaskMetricsSnapshot

__all__ = ["summary"]


def _task_counts(snapshot: TaskMetricsSnapshot | None) -> dict[str, Any]:
    if snapshot is None:
        return {"records": 0, "errors": 0, "dead_lettered": 0, "lag": None}
    records = snapshot.acknowledged if snapshot.kind == "source" else snapshot.put
    return {"records": records, "errors": snapshot.errors,
            "dead_lettered": snapshot.dead_lettered, "lag": snapshot.lag}


def summary(herder: Herder) -> dict[str, Any]:
    """The worker's connectors, their tasks, states and counts, now."""
    metrics = {(m.connector, m.task): m for m in herder.metrics()}
    connectors = []
    for name in sorted(herder.connectors()):
        try:
            status = herder.connector_status(name)
        except ConnectError:  # deleted meanwhile
            continue
        tasks = []
        for task in status.tasks:
            tasks.append({"id": task.id, "state": task.state.value,
                          "worker_id": task.worker_id,
                          **_task_counts(metrics.get((name, task.id)))})
        lags = [t["lag"] for t in tasks if t["lag"] is not None]
        entry: dict[str, Any] = {
            "name": name, "type": status.type, "state": status.connector.state.value,
            "worker_id": status.connector.worker_id,
            "records": sum(t["records"] for t in tasks),
            "errors": sum(t["errors"] for t in tasks),
            "dead_lettered": sum(t["dead_lettered"] for t in tasks),
            "lag": sum(lags) if lags else None, "tasks": tasks}
        if status.connector.trace:
            entry["trace"] = status.connector.trace
        connectors.append(entry)
    return {"worker_id": herder.worker_id, "transport": herder.config.transport_name,
            "taken_at": time.time(), "connectors": connectors}
