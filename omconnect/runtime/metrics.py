"""Per-task metrics: cheap counters the task thread bumps once per batch.

Each task thread is the only writer of its :class:`TaskMetrics`; readers (the herder, the
CLI's progress line, the REST API's ``/metrics``) take a :meth:`TaskMetrics.snapshot`,
a frozen copy. No lock is taken on the hot path: an ``int`` attribute update is atomic in
CPython, and a snapshot that is one batch stale is fine for monitoring.
"""

from __future__ import annotations

import time
from typing import Any

import attrs

__all__ = ["TaskMetrics", "TaskMetricsSnapshot"]


@attrs.frozen(slots=True, kw_only=True)
class TaskMetricsSnapshot:
    """The metrics of one task at one moment.

    Attributes:
        connector: The connector's name.
        task: The task's number.
        kind: ``"source"`` or ``"sink"``.
        taken_at: When the snapshot was taken (seconds since the epoch).
        started_at: When the task (this run of it) started (seconds since the epoch).
        polled: Records returned by the source task's ``poll`` / read from the transport
            by the sink task's consumer.
        sent: Messages handed to the transport's producer (source).
        acknowledged: Messages the transport acknowledged (source).
        committed: Records whose offsets were committed (source: to the offset store;
            sink: to the consumer group).
        put: Records handed to the sink task's ``put``.
        filtered: Records a transform dropped.
        errors: Records or calls that failed (tolerated or not).
        retries: Retried operations (poll, put, send, conversion).
        dead_lettered: Records written to the dead-letter topic.
        batches: Batches processed.
        batch_size_max: The largest batch seen.
        in_flight: Records sent but not yet acknowledged (source), now.
        lag: Records in assigned partitions not yet consumed (sink), where the transport
            reports offset ranges; ``None`` when unknown. Refreshed at each commit, on
            assignment and, while polls come back empty, at most once a second.
        assigned_partitions: Partitions the consumer group assigned to the task (sink), now.
        offset_commits: Successful offset commits.
        offset_commit_failures: Failed offset commits.
        last_offset_commit_at: When offsets were last committed (epoch seconds) or ``None``.
        columnar: Records moved as Arrow batches, with no per-record object (source: poll
            to send; sink: poll to ``put_batch``).
        columnar_fallback: Records of Arrow batches that went the per-record way instead
            (a transform or converter without a column form, a failed send, a row that
            could not be converted).
        loops: Rounds of the task thread's loop (each polls once, or waits): a task whose
            count moved has looked for work since an earlier snapshot.

    """

    connector: str
    task: int
    kind: str
    taken_at: float
    started_at: float
    polled: int = 0
    sent: int = 0
    acknowledged: int = 0
    committed: int = 0
    put: int = 0
    filtered: int = 0
    errors: int = 0
    retries: int = 0
    dead_lettered: int = 0
    batches: int = 0
    batch_size_max: int = 0
    in_flight: int = 0
    lag: int | None = None
    assigned_partitions: int = 0
    offset_commits: int = 0
    offset_commit_failures: int = 0
    last_offset_commit_at: float | None = None
    columnar: int = 0
    columnar_fallback: int = 0
    loops: int = 0

    @property
    def batch_size_avg(self) -> float:
        """The mean batch size (0.0 before the first batch)."""
        return self.polled / self.batches if self.batches else 0.0

    def as_dict(self) -> dict[str, Any]:
        """The snapshot as a plain dict (with ``batch_size_avg``), for JSON."""
        data = attrs.asdict(self)
        data["batch_size_avg"] = self.batch_size_avg
        return data


class TaskMetrics:
    """The live counters of one task. Written by the task thread only.

    Args:
        connector: The connector's name.
        task: The task's number.
        kind: ``"source"`` or ``"sink"``.

    """

    __slots__ = (
        "acknowledged",
        "assigned_partitions",
        "batch_size_max",
        "batches",
        "columnar",
        "columnar_fallback",
        "committed",
        "connector",
        "dead_lettered",
        "errors",
        "filtered",
        "in_flight",
        "kind",
        "lag",
        "last_offset_commit_at",
        "loops",
        "offset_commit_failures",
        "offset_commits",
        "polled",
        "put",
        "retries",
        "sent",
        "started_at",
        "task",
    )

    def __init__(self, connector: str, task: int, kind: str) -> None:
        self.connector = connector
        self.task = task
        self.kind = kind
        self.started_at = time.time()
        self.polled = 0
        self.sent = 0
        self.acknowledged = 0
        self.committed = 0
        self.put = 0
        self.filtered = 0
        self.errors = 0
        self.retries = 0
        self.dead_lettered = 0
        self.batches = 0
        self.batch_size_max = 0
        self.in_flight = 0
        self.lag: int | None = None
        self.assigned_partitions = 0
        self.offset_commits = 0
        self.offset_commit_failures = 0
        self.last_offset_commit_at: float | None = None
        self.columnar = 0
        self.columnar_fallback = 0
        self.loops = 0

    def record_batch(self, size: int) -> None:
        """Count one batch of ``size`` records read (polled or consumed)."""
        self.polled += size
        self.batches += 1
        if size > self.batch_size_max:
            self.batch_size_max = size

    def record_offset_commit(self, records: int) -> None:
        """Count a successful offset commit covering ``records`` more records."""
        self.committed += records
        self.offset_commits += 1
        self.last_offset_commit_at = time.time()

    def snapshot(self) -> TaskMetricsSnapshot:
        """A frozen copy of the counters, now."""
        return TaskMetricsSnapshot(
            connector=self.connector,
            task=self.task,
            kind=self.kind,
            taken_at=time.time(),
            started_at=self.started_at,
            polled=self.polled,
            sent=self.sent,
            acknowledged=self.acknowledged,
            committed=self.committed,
            put=self.put,
            filtered=self.filtered,
            errors=self.errors,
            retries=self.retries,
            dead_lettered=self.dead_lettered,
            batches=self.batches,
            batch_size_max=self.batch_size_max,
            in_flight=self.in_flight,
            lag=self.lag,
            assigned_partitions=self.assigned_partitions,
            offset_commits=self.offset_commits,
            offset_commit_failures=self.offset_commit_failures,
            last_offset_commit_at=self.last_offset_commit_at,
            columnar=self.columnar,
            columnar_fallback=self.columnar_fallback,
            loops=self.loops,
        )
