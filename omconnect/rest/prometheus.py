"""``GET /metrics``: the runtime's per-task metrics in Prometheus' text exposition format.

Every task counter is a ``counter`` named ``omconnect_task_<metric>_total``; levels are
gauges; connector and task states are state sets (one sample per state, 1 for the
current one), so ``omconnect_task_state{state="FAILED"} == 1`` alerts on a failed task.
Labels: ``connector`` and ``task`` (the task's number). A task that is not running has
no task metrics (its counters restart from 0 when it starts again, which Prometheus'
``rate()`` handles as a counter reset).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import attrs

from omconnect.connector.lifecycle import State
from omconnect.errors import ConnectError
from omconnect.runtime.herder_api import Herder
from omconnect.runtime.metrics import TaskMetricsSnapshot

__all__ = ["CONTENT_TYPE", "TASK_METRICS", "WORKER_METRICS", "render_metrics"]

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
"""The content type of the text exposition format."""


@attrs.frozen
class _Metric:
    field: str
    name: str
    kind: str
    help: str


TASK_METRICS: tuple[_Metric, ...] = (
    _Metric("polled", "omconnect_task_polled_total", "counter",
            "Records returned by the source task's poll, or read by the sink task's "
            "consumer."),
    _Metric("sent", "omconnect_task_sent_total", "counter",
            "Messages handed to the transport's producer (source tasks)."),
    _Metric("acknowledged", "omconnect_task_acknowledged_total", "counter",
            "Messages the transport acknowledged (source tasks)."),
    _Metric("committed", "omconnect_task_committed_total", "counter",
            "Records whose offsets were committed."),
    _Metric("put", "omconnect_task_put_total", "counter",
            "Records handed to the sink task's put (sink tasks)."),
    _Metric("filtered", "omconnect_task_filtered_total", "counter",
            "Records a transform dropped."),
    _Metric("errors", "omconnect_task_errors_total", "counter",
            "Records or calls that failed, tolerated or not."),
    _Metric("retries", "omconnect_task_retries_total", "counter",
            "Retried operations (poll, put, send, conversion)."),
    _Metric("dead_lettered", "omconnect_task_dead_lettered_total", "counter",
            "Records written to the dead-letter topic."),
    _Metric("batches", "omconnect_task_batches_total", "counter", "Batches processed."),
    _Metric("columnar", "omconnect_task_columnar_records_total", "counter",
            "Records moved as Arrow batches, with no per-record object."),
    _Metric("columnar_fallback", "omconnect_task_columnar_fallback_records_total", "counter",
            "Records of Arrow batches that went the per-record way instead."),
    _Metric("loops", "omconnect_task_loops_total", "counter",
            "Rounds of the task thread's loop (each polls once, or waits); a count that "
            "stops moving is a task held up in a call."),
    _Metric("offset_commits", "omconnect_task_offset_commits_total", "counter",
            "Successful offset commits."),
    _Metric("offset_commit_failures", "omconnect_task_offset_commit_failures_total",
            "counter", "Failed offset commits."),
    _Metric("batch_size_max", "omconnect_task_batch_size_max", "gauge",
            "The largest batch seen."),
    _Metric("in_flight", "omconnect_task_in_flight_records", "gauge",
            "Records sent but not yet acknowledged (source tasks)."),
    _Metric("lag", "omconnect_task_lag_records", "gauge",
            "Records in the assigned partitions not yet consumed (sink tasks, where the "
            "transport reports offset ranges)."),
    _Metric("assigned_partitions", "omconnect_task_assigned_partitions", "gauge",
            "Partitions the consumer group assigned to the task (sink tasks)."),
    _Metric("started_at", "omconnect_task_start_time_seconds", "gauge",
            "When this run of the task started, in seconds since the epoch."),
    _Metric("last_offset_commit_at", "omconnect_task_last_offset_commit_time_seconds",
            "gauge", "When the task last committed offsets, in seconds since the epoch."),
)
"""The exported task metrics: snapshot field, metric name, type, help."""

_STATES = tuple(state.value for state in State)


WORKER_METRICS: tuple[_Metric, ...] = (
    _Metric("rebalances", "omconnect_worker_rebalances_total", "counter",
            "Assignments this worker carried out since it started (0 standalone)."),
    _Metric("rebalance_seconds", "omconnect_worker_rebalance_seconds_total", "counter",
            "Seconds this worker saw its cluster rebalancing (work not running on a live "
            "worker) since it started."),
    _Metric("rebalancing", "omconnect_worker_rebalancing", "gauge",
            "1 while this worker sees a rebalance under way."),
    _Metric("connectors", "omconnect_worker_assigned_connectors", "gauge",
            "Connector instances assigned to this worker."),
    _Metric("tasks", "omconnect_worker_assigned_tasks", "gauge",
            "Tasks assigned to this worker."),
    _Metric("leader", "omconnect_worker_leader", "gauge",
            "1 when this worker computes its cluster's assignments."),
)
"""The exported worker metrics (label ``worker``): field of
:class:`~omconnect.runtime.status.WorkerInfo`, metric name, type, help."""


def render_metrics(herder: Herder) -> str:
    """The herder's metrics and states in the text exposition format: this worker's
    own (in a cluster, every worker exports what it runs; scrape them all).
    """
    snapshots = herder.metrics()
    lines: list[str] = []
    lines += _worker(herder)
    lines += _state_sets(herder)
    for metric in TASK_METRICS:
        lines += _family(metric, snapshots)
    return "\n".join(lines) + "\n"


def _worker(herder: Herder) -> list[str]:
    me = herder.cluster().me()
    lines: list[str] = []
    for metric in WORKER_METRICS:
        lines += [f"# HELP {metric.name} {metric.help}", f"# TYPE {metric.name} {metric.kind}"]
        if me is not None:
            value = getattr(me, metric.field)
            lines.append(f"{metric.name}{_labels(worker=herder.worker_id)} "
                         f"{_number(int(value) if isinstance(value, bool) else value)}")
    return lines


def _family(metric: _Metric, snapshots: Sequence[TaskMetricsSnapshot]) -> list[str]:
    lines = [f"# HELP {metric.name} {metric.help}", f"# TYPE {metric.name} {metric.kind}"]
    for snapshot in snapshots:
        value = getattr(snapshot, metric.field)
        if value is None:
            continue
        labels = _labels(connector=snapshot.connector, task=str(snapshot.task))
        lines.append(f"{metric.name}{labels} {_number(value)}")
    return lines


def _state_sets(herder: Herder) -> list[str]:
    connectors: list[str] = [
        "# HELP omconnect_connector_state The connector's state (1 for the current one).",
        "# TYPE omconnect_connector_state gauge"]
    tasks: list[str] = [
        "# HELP omconnect_task_state The task's state (1 for the current one).",
        "# TYPE omconnect_task_state gauge"]
    only_mine = herder.config.distributed  # each worker exports what it runs
    for name in herder.connectors():
        try:
            status = herder.connector_status(name)
        except ConnectError:
            continue  # deleted meanwhile
        if not only_mine or status.connector.worker_id == herder.worker_id:
            connectors += _one_of(status.connector.state, connector=name)
        for task in status.tasks:
            if not only_mine or task.worker_id == herder.worker_id:
                tasks += _one_of(task.state, connector=name, task=str(task.id))
    return connectors + tasks


def _one_of(current: State, **labels: str) -> Iterable[str]:
    name = "omconnect_task_state" if "task" in labels else "omconnect_connector_state"
    for state in _STATES:
        yield f"{name}{_labels(**labels, state=state)} {int(state == current.value)}"


def _labels(**labels: str) -> str:
    return "{" + ",".join(f'{k}="{_escape(v)}"' for k, v in labels.items()) + "}"


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _number(value: float) -> str:
    if isinstance(value, int):
        return str(value)
    return repr(float(value))
