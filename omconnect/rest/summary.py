"""``GET /summary``: one JSON document with every connector's and task's state and counts,
what the dashboard (``GET /ui``) and ``omconnect status`` show.

Counts are totals since the task (this run of it) started; rates come from two summaries
(``records`` over ``taken_at``). A source task's ``records`` are the records the transport
acknowledged; a sink task's, the records handed to ``put``.

In a cluster, counts live in the worker running each task: the worker answering asks
every other live worker for its own (``GET /summary?scope=worker``, with this worker's
credentials, each at most :data:`PEER_TIMEOUT_S`) and merges them; a worker that does
not answer in time is marked ``reachable: false`` and its tasks' counts are 0. The
document also lists the cluster's workers with their rebalance metrics.
"""

from __future__ import annotations

import json
import logging
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from omconnect.errors import ConnectError
from omconnect.rest.auth import RestAuth
from omconnect.runtime.herder_api import Herder
from omconnect.runtime.metrics import TaskMetricsSnapshot
from omconnect.runtime.status import ClusterInfo

__all__ = ["PEER_TIMEOUT_S", "summary"]

_log = logging.getLogger(__name__)

PEER_TIMEOUT_S = 2.0
"""How long the summary waits for another worker's counts."""

_NO_COUNTS = {"records": 0, "errors": 0, "dead_lettered": 0, "lag": None}


def _task_counts(snapshot: TaskMetricsSnapshot | None) -> dict[str, Any]:
    if snapshot is None:
        return dict(_NO_COUNTS)
    records = snapshot.acknowledged if snapshot.kind == "source" else snapshot.put
    return {"records": records, "errors": snapshot.errors,
            "dead_lettered": snapshot.dead_lettered, "lag": snapshot.lag}


def summary(herder: Herder, *, scope: str = "cluster") -> dict[str, Any]:
    """The connectors, their tasks, states and counts, now; with ``scope="worker"`` the
    counts of this worker's tasks only (what other workers ask for).
    """
    counts = {(m.connector, m.task): _task_counts(m) for m in herder.metrics()}
    cluster = herder.cluster()
    reachable: dict[str, bool] = {}
    if scope == "cluster" and cluster.mode == "distributed":
        for peer, found in _peer_counts(herder, cluster).items():
            reachable[peer] = found is not None
            for key, value in (found or {}).items():
                counts.setdefault(key, value)
    connectors = []
    for name in sorted(herder.connectors()):
        try:
            status = herder.connector_status(name)
        except ConnectError:  # deleted meanwhile
            continue
        tasks = []
        for task in status.tasks:
            mine = task.worker_id == herder.worker_id or scope == "cluster"
            tasks.append({"id": task.id, "state": task.state.value,
                          "worker_id": task.worker_id,
                          **(counts.get((name, task.id), _NO_COUNTS) if mine
                             else _NO_COUNTS)})
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
    workers = []
    for member in cluster.workers:
        item = member.to_dict()
        item["reachable"] = reachable.get(member.id, member.state == "alive")
        workers.append(item)
    return {"worker_id": herder.worker_id, "transport": herder.config.transport_name,
            "mode": cluster.mode, "group_id": cluster.group_id, "leader": cluster.leader,
            "taken_at": time.time(), "connectors": connectors, "workers": workers}


def _peer_counts(herder: Herder, cluster: ClusterInfo
                 ) -> dict[str, dict[tuple[str, int], dict[str, Any]] | None]:
    """Each other live worker's task counts (``None``: it did not answer in time)."""
    peers = [w for w in cluster.workers
             if w.id != herder.worker_id and w.state == "alive" and w.url]
    if not peers:
        return {}
    authorization = RestAuth.from_worker_config(herder.config.values).authorization()

    def fetch(url: str, worker: str) -> dict[tuple[str, int], dict[str, Any]] | None:
        request = urllib.request.Request(f"{url}/summary?scope=worker")
        if authorization:
            request.add_header("Authorization", authorization)
        try:
            with urllib.request.urlopen(request, timeout=PEER_TIMEOUT_S) as response:
                document = json.loads(response.read())
        except (OSError, ValueError) as exc:
            _log.debug("summary: worker %s at %s did not answer: %s", worker, url, exc)
            return None
        found = {}
        for connector in document.get("connectors", []):
            for task in connector.get("tasks", []):
                if task.get("worker_id") == worker:
                    found[(connector["name"], int(task["id"]))] = {
                        k: task.get(k) for k in _NO_COUNTS}
        return found

    with ThreadPoolExecutor(max_workers=min(8, len(peers))) as pool:
        futures = {w.id: pool.submit(fetch, str(w.url), w.id) for w in peers}
        return {worker: future.result() for worker, future in futures.items()}
