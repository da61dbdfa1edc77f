"""What the herder reports: connector info, states with traces, offsets, plugins.

Each value object has ``to_dict()`` giving Kafka Connect's REST JSON shape, so the REST
API can return them as they are.
"""

from __future__ import annotations

from typing import Any

import attrs

from omconnect.config.definition import ConfigDef
from omconnect.connector.lifecycle import State

__all__ = [
    "ClusterInfo",
    "ConnectorInfo",
    "ConnectorOffsets",
    "ConnectorStatus",
    "PluginInfo",
    "StateInfo",
    "TaskInfo",
    "TaskStatus",
    "WorkerInfo",
]


@attrs.frozen(kw_only=True)
class StateInfo:
    """A state with where it holds and, for FAILED, why.

    Attributes:
        state: The lifecycle state.
        worker_id: The worker running it.
        trace: The failure's trace (FAILED only).
        version: The running connector's version (``None`` when it is not running here).

    """

    state: State
    worker_id: str
    trace: str | None = None
    version: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """``{"state": ..., "worker_id": ..., "trace"?: ..., "version"?: ...}``."""
        data: dict[str, Any] = {"state": self.state.value, "worker_id": self.worker_id}
        if self.trace:
            data["trace"] = self.trace
        if self.version is not None:
            data["version"] = self.version
        return data


@attrs.frozen(kw_only=True)
class TaskStatus:
    """A task's state.

    Attributes:
        connector: The connector's name.
        id: The task's number.
        state: The state.
        worker_id: The worker running it.
        trace: The failure's trace (FAILED only).
        version: The task's version (``None`` when it is not running here).

    """

    connector: str
    id: int
    state: State
    worker_id: str
    trace: str | None = None
    version: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """``{"id": ..., "state": ..., "worker_id": ..., "trace"?: ..., "version"?: ...}``."""
        data: dict[str, Any] = {"id": self.id, "state": self.state.value,
                                "worker_id": self.worker_id}
        if self.trace:
            data["trace"] = self.trace
        if self.version is not None:
            data["version"] = self.version
        return data


@attrs.frozen(kw_only=True)
class ConnectorStatus:
    """A connector's state and its tasks' states.

    Attributes:
        name: The connector's name.
        type: ``"source"`` or ``"sink"``.
        connector: The connector's own state.
        tasks: Its tasks' states, by task number.

    """

    name: str
    type: str
    connector: StateInfo
    tasks: tuple[TaskStatus, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """Kafka Connect's ``GET /connectors/{name}/status`` shape."""
        return {"name": self.name, "connector": self.connector.to_dict(),
                "tasks": [task.to_dict() for task in self.tasks], "type": self.type}


@attrs.frozen(kw_only=True)
class TaskInfo:
    """A task's config.

    Attributes:
        connector: The connector's name.
        id: The task's number.
        config: The config the connector produced for it.

    """

    connector: str
    id: int
    config: dict[str, Any]

    def to_dict(self, *, masked: bool = True) -> dict[str, Any]:
        """Kafka Connect's ``GET /connectors/{name}/tasks`` item shape (secrets masked)."""
        config = ConfigDef.masked(self.config) if masked else self.config
        return {"id": {"connector": self.connector, "task": self.id},
                "config": {k: _text(v) for k, v in config.items()}}


@attrs.frozen(kw_only=True)
class ConnectorInfo:
    """A connector: its config and tasks.

    Attributes:
        name: The connector's name.
        type: ``"source"``, ``"sink"`` or ``"unknown"``.
        config: Its config as given.
        tasks: Its task numbers.

    """

    name: str
    type: str
    config: dict[str, Any]
    tasks: tuple[int, ...] = ()

    def to_dict(self, *, masked: bool = True) -> dict[str, Any]:
        """Kafka Connect's ``GET /connectors/{name}`` shape (secrets masked)."""
        config = ConfigDef.masked(self.config) if masked else self.config
        return {"name": self.name, "config": {k: _text(v) for k, v in config.items()},
                "tasks": [{"connector": self.name, "task": t} for t in self.tasks],
                "type": self.type}


@attrs.frozen(kw_only=True)
class ConnectorOffsets:
    """A connector's offsets.

    Attributes:
        name: The connector's name.
        type: ``"source"`` or ``"sink"``.
        offsets: ``{"partition": {...}, "offset": {...}}`` entries. Source: the source
            partitions and offsets. Sink: ``{"kafka_topic": t, "kafka_partition": p}`` and
            ``{"kafka_offset": next offset to read}`` (Kafka Connect's names).

    """

    name: str
    type: str
    offsets: tuple[dict[str, Any], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """Kafka Connect's ``GET /connectors/{name}/offsets`` shape."""
        return {"offsets": [dict(entry) for entry in self.offsets]}


@attrs.frozen(kw_only=True)
class PluginInfo:
    """An installed plugin.

    Attributes:
        kind: ``connector``, ``transport``, ``converter``, ``transform`` or ``predicate``.
        name: Its entry-point name.
        class_name: Its class (``module.Class``), or the entry point's target when it
            could not be loaded.
        type: For connectors ``source``/``sink``; otherwise the kind.
        version: Its version, or ``None`` when it could not be loaded.
        problem: Why it could not be loaded (e.g. a missing extra), else ``None``.

    """

    kind: str
    name: str
    class_name: str
    type: str
    version: str | None
    problem: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """Kafka Connect's ``GET /connector-plugins`` item shape plus ``name``/``kind``."""
        data: dict[str, Any] = {"class": self.class_name, "type": self.type,
                                "version": self.version, "name": self.name, "kind": self.kind}
        if self.problem:
            data["problem"] = self.problem
        return data


@attrs.frozen(kw_only=True)
class WorkerInfo:
    """A worker of the cluster, with its rebalance metrics.

    Attributes:
        id: Its ``worker.id``.
        url: Its REST API (``None`` when it serves none).
        state: ``alive`` (holds membership slots), ``departed`` (its connectors and
            tasks wait for it, up to ``scheduled.rebalance.max.delay.ms``) or ``standby``
            (alive but holding no slot: more workers than ``cluster.slots``).
        leader: Whether it computes the cluster's assignments.
        connectors: Connector instances assigned to it.
        tasks: Tasks assigned to it.
        rebalances: Assignments it carried out since it started.
        rebalance_seconds: Time it spent rebalancing (work of the cluster not running on
            a live worker) since it started.
        rebalancing: Whether a rebalance is under way as it last saw the cluster.
        generation: The assignment it last carried out.

    """

    id: str
    url: str | None = None
    state: str = "alive"
    leader: bool = False
    connectors: int = 0
    tasks: int = 0
    rebalances: int = 0
    rebalance_seconds: float = 0.0
    rebalancing: bool = False
    generation: int = 0

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape of ``GET /workers`` items."""
        return {"id": self.id, "url": self.url, "state": self.state, "leader": self.leader,
                "connectors": self.connectors, "tasks": self.tasks,
                "rebalances": self.rebalances,
                "rebalance_seconds": round(self.rebalance_seconds, 3),
                "rebalancing": self.rebalancing, "generation": self.generation}


@attrs.frozen(kw_only=True)
class ClusterInfo:
    """The cluster a worker belongs to.

    Attributes:
        mode: ``standalone`` or ``distributed``.
        group_id: The cluster's ``group.id`` (``None`` for a standalone worker).
        worker_id: The worker answering.
        leader: The leader's worker id (a standalone worker is its own).
        generation: The assignment in force (0 for a standalone worker).
        workers: Every worker known, this one included, by id.

    """

    mode: str
    group_id: str | None
    worker_id: str
    leader: str | None
    generation: int = 0
    workers: tuple[WorkerInfo, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape of ``GET /workers``."""
        return {"mode": self.mode, "group_id": self.group_id, "worker_id": self.worker_id,
                "leader": self.leader, "generation": self.generation,
                "workers": [w.to_dict() for w in self.workers]}

    def me(self) -> WorkerInfo | None:
        """The answering worker's entry."""
        return next((w for w in self.workers if w.id == self.worker_id), None)


def _text(value: Any) -> Any:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        return ",".join(str(v) for v in value)
    return value if isinstance(value, str) or value is None else str(value)
