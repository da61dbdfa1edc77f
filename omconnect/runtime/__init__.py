"""The standalone runtime: a worker that runs connectors' tasks on a transport.

Start with :class:`StandaloneHerder` (the API the CLI and the REST API use); the worker's
settings are :data:`WORKER_CONFIG_DEF`, the settings every connector takes
:data:`COMMON_CONFIG_DEF`. See ``docs/runtime.md``.
"""

from omconnect.runtime.connector_config import (
    COMMON_CONFIG_DEF,
    SINK_CONFIG_DEF,
    ConfigValidation,
    validate_connector_config,
)
from omconnect.runtime.gc_tuning import WORKER_GC_THRESHOLDS, tune_gc
from omconnect.runtime.herder import StandaloneHerder
from omconnect.runtime.herder_errors import (
    ConnectorExistsError,
    ConnectorNotFoundError,
    ConnectorStateError,
)
from omconnect.runtime.metrics import TaskMetricsSnapshot
from omconnect.runtime.retry_with_tolerance import Stage, ToleranceExceededError
from omconnect.runtime.status import (
    ConnectorInfo,
    ConnectorOffsets,
    ConnectorStatus,
    PluginInfo,
    StateInfo,
    TaskInfo,
    TaskStatus,
)
from omconnect.runtime.worker_config import WORKER_CONFIG_DEF, WorkerConfig

__all__ = [
    "COMMON_CONFIG_DEF",
    "SINK_CONFIG_DEF",
    "WORKER_CONFIG_DEF",
    "WORKER_GC_THRESHOLDS",
    "ConfigValidation",
    "ConnectorExistsError",
    "ConnectorInfo",
    "ConnectorNotFoundError",
    "ConnectorOffsets",
    "ConnectorStateError",
    "ConnectorStatus",
    "PluginInfo",
    "Stage",
    "StandaloneHerder",
    "StateInfo",
    "TaskInfo",
    "TaskMetricsSnapshot",
    "TaskStatus",
    "ToleranceExceededError",
    "WorkerConfig",
    "tune_gc",
    "validate_connector_config",
]
