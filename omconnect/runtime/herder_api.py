"""What every herder offers: :class:`Herder`, the API the REST API and the CLI call.

Two herders implement it: :class:`~omconnect.runtime.herder.StandaloneHerder` (one worker
runs its own connectors) and
:class:`~omconnect.runtime.distributed.herder.DistributedHerder` (the workers of a
cluster share connectors and spread their tasks). Method for method they answer with the
same value objects (:mod:`~omconnect.runtime.status`), raise the same errors
(:mod:`~omconnect.runtime.herder_errors`, :class:`~omconnect.errors.ConfigError`) and may
be called from any thread; see ``docs/runtime.md`` for each method's meaning.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from omconnect.connector.lifecycle import State
from omconnect.runtime.connector_config import ConfigValidation
from omconnect.runtime.metrics import TaskMetricsSnapshot
from omconnect.runtime.status import (
    ClusterInfo,
    ConnectorInfo,
    ConnectorOffsets,
    ConnectorStatus,
    PluginInfo,
    TaskInfo,
    TaskStatus,
)
from omconnect.runtime.worker_config import WorkerConfig

__all__ = ["Herder"]


class Herder(Protocol):
    """The lifecycle API of a worker's connectors (see the module docstring)."""

    config: WorkerConfig

    @property
    def worker_id(self) -> str:
        """This worker's id, as reported in statuses."""

    @property
    def running(self) -> bool:
        """Whether the herder runs connectors (it started and has not stopped)."""

    def answers(self, timeout: float) -> bool:
        """Whether the herder takes a request within ``timeout`` seconds."""

    def open(self) -> None:
        """Open the transport and stores without running anything."""

    def start(self) -> None:
        """Open, then run the connectors."""

    def stop(self) -> None:
        """Stop every connector this worker runs, then close."""

    def cluster(self) -> ClusterInfo:
        """The cluster this worker belongs to, every worker of it with its metrics."""

    def connectors(self) -> list[str]:
        """The names of every connector, sorted."""

    def connector_info(self, name: str) -> ConnectorInfo:
        """A connector's config (as written) and task numbers."""

    def connector_config(self, name: str) -> dict[str, Any]:
        """A connector's config as written."""

    def task_configs(self, name: str) -> list[TaskInfo]:
        """The configs of a connector's tasks, as written."""

    def connector_status(self, name: str) -> ConnectorStatus:
        """A connector's state and its tasks' states, each with the worker running it."""

    def task_status(self, name: str, task: int) -> TaskStatus:
        """One task's state."""

    def metrics(self) -> list[TaskMetricsSnapshot]:
        """A snapshot of the metrics of every task running on this worker."""

    def plugins(self, kinds: list[str] | None = None) -> list[PluginInfo]:
        """The installed plugins."""

    def validate_connector_config(self, config: Mapping[str, Any]) -> ConfigValidation:
        """Validate a connector config completely (nothing is created)."""

    def create_connector(self, config: Mapping[str, Any], *,
                         initial_state: State | str = State.RUNNING,
                         origin: str = ...) -> ConnectorInfo:
        """Validate ``config`` and create the connector."""

    def put_connector_config(self, name: str, config: Mapping[str, Any], *,
                             origin: str | None = None) -> tuple[ConnectorInfo, bool]:
        """Create ``name``, or replace its config and restart it; whether it was created."""

    def patch_connector_config(self, name: str, patch: Mapping[str, Any]) -> ConnectorInfo:
        """Change some keys of a connector's config (``None`` removes one)."""

    def pause_connector(self, name: str) -> None:
        """Pause a connector."""

    def resume_connector(self, name: str) -> None:
        """Resume a paused connector, or start a stopped one."""

    def stop_connector(self, name: str) -> None:
        """Stop a connector and its tasks; keep its config."""

    def restart_connector(self, name: str, *, include_tasks: bool = False,
                          only_failed: bool = False) -> ConnectorStatus:
        """Restart a connector (and, with ``include_tasks``, its tasks)."""

    def restart_task(self, name: str, task: int) -> None:
        """Restart one task."""

    def delete_connector(self, name: str) -> None:
        """Stop and delete a connector (its offsets are kept)."""

    def active_topics(self, name: str) -> list[str]:
        """A connector's active topics."""

    def reset_active_topics(self, name: str) -> None:
        """Forget a connector's active topics."""

    def offsets(self, name: str) -> ConnectorOffsets:
        """A connector's committed offsets."""

    def alter_offsets(self, name: str, offsets: Sequence[Mapping[str, Any]], *,
                      force: bool = False) -> bool:
        """Set some offsets of a stopped connector."""

    def reset_offsets(self, name: str, *, force: bool = False) -> bool:
        """Forget every offset of a stopped connector."""
