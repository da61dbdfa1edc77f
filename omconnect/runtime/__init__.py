"""The runtime: workers that run connectors' tasks on a transport.

Start with :class:`StandaloneHerder` (one worker running its own connectors) or
:class:`DistributedHerder` (a worker of a cluster); both implement :class:`Herder`, the
API the CLI and the REST API use. The worker's settings are :data:`WORKER_CONFIG_DEF`
(and :data:`DISTRIBUTED_CONFIG_DEF` in a cluster), the settings every connector takes
:data:`COMMON_CONFIG_DEF`. See ``docs/runtime.md`` and ``docs/distributed.md``.

Names are imported on first use, so importing one module of the runtime (the Spark
adapter's Python workers import ``worker_config`` and ``record_conversion``) does not load
the herder and everything behind it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from omconnect.runtime.connector_config import (
        COMMON_CONFIG_DEF,
        SINK_CONFIG_DEF,
        ConfigValidation,
        validate_connector_config,
    )
    from omconnect.runtime.distributed.herder import DistributedHerder
    from omconnect.runtime.gc_tuning import WORKER_GC_THRESHOLDS, tune_gc
    from omconnect.runtime.herder import StandaloneHerder
    from omconnect.runtime.herder_api import Herder
    from omconnect.runtime.herder_errors import (
        ConnectorExistsError,
        ConnectorNotFoundError,
        ConnectorStateError,
    )
    from omconnect.runtime.metrics import TaskMetricsSnapshot
    from omconnect.runtime.retry_with_tolerance import Stage, ToleranceExceededError
    from omconnect.runtime.status import (
        ClusterInfo,
        ConnectorInfo,
        ConnectorOffsets,
        ConnectorStatus,
        PluginInfo,
        StateInfo,
        TaskInfo,
        TaskStatus,
        WorkerInfo,
    )
    from omconnect.runtime.worker_config import (
        DISTRIBUTED_CONFIG_DEF,
        WORKER_CONFIG_DEF,
        WorkerConfig,
    )

__all__ = [
    "COMMON_CONFIG_DEF",
    "DISTRIBUTED_CONFIG_DEF",
    "SINK_CONFIG_DEF",
    "WORKER_CONFIG_DEF",
    "WORKER_GC_THRESHOLDS",
    "ClusterInfo",
    "ConfigValidation",
    "ConnectorExistsError",
    "ConnectorInfo",
    "ConnectorNotFoundError",
    "ConnectorOffsets",
    "ConnectorStateError",
    "ConnectorStatus",
    "DistributedHerder",
    "Herder",
    "PluginInfo",
    "Stage",
    "StandaloneHerder",
    "StateInfo",
    "TaskInfo",
    "TaskMetricsSnapshot",
    "TaskStatus",
    "ToleranceExceededError",
    "WorkerConfig",
    "WorkerInfo",
    "tune_gc",
    "validate_connector_config",
]

_HOMES = {
    "COMMON_CONFIG_DEF": "connector_config",
    "ClusterInfo": "status",
    "DISTRIBUTED_CONFIG_DEF": "worker_config",
    "DistributedHerder": "distributed.herder",
    "Herder": "herder_api",
    "WorkerInfo": "status",
    "ConfigValidation": "connector_config",
    "ConnectorExistsError": "herder_errors",
    "ConnectorInfo": "status",
    "ConnectorNotFoundError": "herder_errors",
    "ConnectorOffsets": "status",
    "ConnectorStateError": "herder_errors",
    "ConnectorStatus": "status",
    "PluginInfo": "status",
    "SINK_CONFIG_DEF": "connector_config",
    "Stage": "retry_with_tolerance",
    "StandaloneHerder": "herder",
    "StateInfo": "status",
    "TaskInfo": "status",
    "TaskMetricsSnapshot": "metrics",
    "TaskStatus": "status",
    "ToleranceExceededError": "retry_with_tolerance",
    "WORKER_CONFIG_DEF": "worker_config",
    "WORKER_GC_THRESHOLDS": "gc_tuning",
    "WorkerConfig": "worker_config",
    "tune_gc": "gc_tuning",
    "validate_connector_config": "connector_config",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'omconnect.runtime' has no attribute {name!r}")
    return getattr(importlib.import_module(f"omconnect.runtime.{home}"), name)
