"""omconnect: a messaging-agnostic connector SDK with pluggable transports.

Connector authors import what they need from here::

    from omconnect import SourceConnector, SourceTask, SourceRecord, ConfigDef, ConfigType
"""

from omconnect.config import ConfigDef, ConfigType, Importance, Password
from omconnect.connector import (
    Connector,
    ConnectorContext,
    SinkConnector,
    SinkTask,
    SinkTaskContext,
    SourceConnector,
    SourceTask,
    SourceTaskContext,
    State,
    Task,
)
from omconnect.data import (
    Field,
    Header,
    Headers,
    Schema,
    SchemaAndValue,
    SchemaBuilder,
    Struct,
    Type,
)
from omconnect.errors import (
    ConfigError,
    ConnectError,
    DataError,
    RetriableError,
    TransportError,
)
from omconnect.records import RecordMetadata, SinkRecord, SourceRecord, TopicPartition

__version__ = "0.1.0"

__all__ = [
    "ConfigDef",
    "ConfigError",
    "ConfigType",
    "ConnectError",
    "Connector",
    "ConnectorContext",
    "DataError",
    "Field",
    "Header",
    "Headers",
    "Importance",
    "Password",
    "RecordMetadata",
    "RetriableError",
    "Schema",
    "SchemaAndValue",
    "SchemaBuilder",
    "SinkConnector",
    "SinkRecord",
    "SinkTask",
    "SinkTaskContext",
    "SourceConnector",
    "SourceRecord",
    "SourceTask",
    "SourceTaskContext",
    "State",
    "Struct",
    "Task",
    "TopicPartition",
    "TransportError",
    "Type",
    "__version__",
]
