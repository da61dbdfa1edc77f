"""The Connector SPI: connectors, tasks, their contexts and lifecycle states."""

from omconnect.connector.batch_tasks import BatchSinkTask, BatchSourceTask
from omconnect.connector.connector import Connector, SinkConnector, SourceConnector
from omconnect.connector.context import (
    ConnectorContext,
    ErrantRecordReporter,
    OffsetStorageReader,
    SinkTaskContext,
    SourceTaskContext,
    freeze_partition,
)
from omconnect.connector.lifecycle import State
from omconnect.connector.resolution import resolve_connector_class
from omconnect.connector.task import SinkTask, SourceTask, Task

__all__ = [
    "BatchSinkTask",
    "BatchSourceTask",
    "Connector",
    "ConnectorContext",
    "ErrantRecordReporter",
    "OffsetStorageReader",
    "SinkConnector",
    "SinkTask",
    "SinkTaskContext",
    "SourceConnector",
    "SourceTask",
    "SourceTaskContext",
    "State",
    "Task",
    "freeze_partition",
    "resolve_connector_class",
]
