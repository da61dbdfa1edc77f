"""The JSON shapes of requests and responses (Kafka Connect's, where it has one).

They validate request bodies (a wrong shape is a 400 naming the field) and generate the
OpenAPI document. Request values are also held to what every part of the runtime can
store and give back: finite numbers, integers of at most 64 bits, strings without lone
surrogates.
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator

__all__ = [
    "ClusterOut",
    "ConfigBody",
    "ConfigInfos",
    "ConfigValue",
    "ConnectorInfoOut",
    "ConnectorStatusOut",
    "CreateConnectorRequest",
    "ErrorResponse",
    "ExpandedConnector",
    "MessageOut",
    "OffsetEntry",
    "OffsetsBody",
    "OffsetsPatch",
    "PluginOut",
    "ServerInfo",
    "StateOut",
    "TaskInfoOut",
    "TaskStateOut",
    "WorkerOut",
    "check_json",
]

StateName = Literal["UNASSIGNED", "RUNNING", "PAUSED", "FAILED", "STOPPED", "DESTROYED"]
ConnectorType = Literal["source", "sink", "unknown"]
InitialState = Literal["RUNNING", "PAUSED", "STOPPED"]

ConfigValue = str | int | float | bool | list[str] | None
"""A config value as a request may give it (Kafka Connect sends strings)."""

_LONG = 2**63


def check_json(value: Any, where: str = "value") -> Any:
    """``value`` unchanged, if every number and string in it can be stored and returned.

    Raises:
        ValueError: A non-finite number, an integer beyond 64 bits or a lone surrogate,
            naming where.

    """
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        if not -_LONG <= value < _LONG:
            raise ValueError(f"{where}: integers must fit in 64 bits")
    elif isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{where}: numbers must be finite (no NaN or Infinity)")
    elif isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise ValueError(f"{where}: strings must be valid Unicode (a lone surrogate "
                             "was given)") from None
    elif isinstance(value, dict):
        for key, item in value.items():
            check_json(key, where)
            check_json(item, f"{where}.{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            check_json(item, f"{where}[{index}]")
    return value


def _check_body(value: Any) -> Any:
    return check_json(value, "body")


ConfigBody = Annotated[dict[str, ConfigValue], AfterValidator(_check_body)]
"""A connector config as a request body."""


class _Request(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CreateConnectorRequest(_Request):
    """``POST /connectors``: a new connector."""

    name: str = Field(description="The connector's name (unique on this worker).",
                      examples=["lines"])
    config: ConfigBody = Field(
        default_factory=dict, description="Its config; a `name` in it must match.",
        examples=[{"connector.class": "FileStreamSource", "file": "/tmp/in.txt",
                   "topic": "lines"}])
    initial_state: InitialState | None = Field(
        default=None, description="RUNNING (default), PAUSED or STOPPED.")

    @field_validator("name")
    @classmethod
    def _storable(cls, value: Any) -> Any:
        return check_json(value, "body.name")


class OffsetEntry(_Request):
    """One offset: for sources the source partition and offset; for sinks
    ``{"kafka_topic", "kafka_partition"}`` and ``{"kafka_offset"}``.
    """

    partition: dict[str, Any] = Field(examples=[{"filename": "/tmp/in.txt"}])
    offset: dict[str, Any] | None = Field(
        default=None, description="The offset; null resets this partition.",
        examples=[{"position": 120}])

    @field_validator("partition", "offset")
    @classmethod
    def _storable(cls, value: Any) -> Any:
        return check_json(value, "offset entry")


class OffsetsBody(_Request):
    """``GET .../offsets`` answer."""

    offsets: list[OffsetEntry]


class OffsetsPatch(_Request):
    """``PATCH .../offsets`` body: at least one entry (Kafka Connect refuses an empty
    list; ``DELETE .../offsets`` resets them all).
    """

    offsets: list[OffsetEntry] = Field(
        min_length=1, description="The offsets to set; at least one.")


class ErrorResponse(BaseModel):
    """Every error: the HTTP status and what is wrong (and how to fix it)."""

    error_code: int
    message: str
    errors: dict[str, list[str]] | None = Field(
        default=None, description="For an invalid config: the messages per key.")


class MessageOut(BaseModel):
    """A confirmation."""

    message: str


class ConnectorTaskId(BaseModel):
    """A task's id."""

    connector: str
    task: int


class ConnectorInfoOut(BaseModel):
    """A connector: its config (secrets masked) and tasks."""

    name: str
    config: dict[str, str | None]
    tasks: list[ConnectorTaskId]
    type: ConnectorType


class StateOut(BaseModel):
    """A connector's state; ``trace`` only when FAILED."""

    state: StateName
    worker_id: str
    trace: str | None = None
    version: str | None = Field(default=None, description="The plugin's version, while it "
                                "runs here (Kafka Connect 4.1).")


class TaskStateOut(BaseModel):
    """A task's state; ``trace`` only when FAILED."""

    id: int
    state: StateName
    worker_id: str
    trace: str | None = None
    version: str | None = Field(default=None, description="The plugin's version, while it "
                                "runs here (Kafka Connect 4.1).")


class ConnectorStatusOut(BaseModel):
    """A connector's state and its tasks' states."""

    name: str
    connector: StateOut
    tasks: list[TaskStateOut]
    type: ConnectorType


class TaskInfoOut(BaseModel):
    """A task's config (secrets masked)."""

    id: ConnectorTaskId
    config: dict[str, str | None]


class ExpandedConnector(BaseModel):
    """``GET /connectors?expand=...``: what was asked for, per connector."""

    status: ConnectorStatusOut | None = None
    info: ConnectorInfoOut | None = None


class PluginOut(BaseModel):
    """An installed plugin (Kafka Connect's shape plus name and kind)."""

    model_config = ConfigDict(populate_by_name=True)

    class_: str = Field(alias="class")
    type: str
    version: str | None
    name: str
    kind: str
    problem: str | None = None


class ConfigKeyInfo(BaseModel):
    """A declared config key."""

    name: str
    type: str
    required: bool
    default_value: str | None
    importance: str
    documentation: str
    group: str | None
    width: str
    display_name: str
    dependents: list[str]
    order: int


class ConfigValueInfo(BaseModel):
    """A config value and its problems."""

    name: str
    value: str | None
    recommended_values: list[str]
    errors: list[str]
    visible: bool


class ConfigInfo(BaseModel):
    """One key of a validation: its definition (null for an undeclared key) and value."""

    definition: ConfigKeyInfo | None
    value: ConfigValueInfo


class ConfigInfos(BaseModel):
    """Kafka Connect's validation result."""

    name: str
    error_count: int
    groups: list[str]
    configs: list[ConfigInfo]


class ServerInfo(BaseModel):
    """``GET /``: what is serving."""

    version: str
    commit: str
    kafka_cluster_id: str = Field(
        description="Named as in Kafka Connect; here `<transport>:<config namespace>`: "
        "workers with the same one share connectors.")
    worker_id: str
    transport: str
    mode: str = Field(description="`standalone`, or `distributed` for a worker of a cluster.")
    group_id: str | None = Field(
        default=None, description="The cluster's `group.id` (distributed workers).")


class WorkerOut(BaseModel):
    """A worker of the cluster (``GET /workers``)."""

    id: str
    url: str | None = Field(description="Its REST API, as it advertised it.")
    state: str = Field(description="`alive` (holds membership slots) or `departed` (its "
                       "connectors and tasks wait for it, up to "
                       "scheduled.rebalance.max.delay.ms).")
    leader: bool = Field(description="Whether it computes the cluster's assignments.")
    connectors: int = Field(description="Connector instances assigned to it.")
    tasks: int = Field(description="Tasks assigned to it.")
    rebalances: int = Field(description="Assignments it carried out since it started.")
    rebalance_seconds: float = Field(description="Seconds it saw the cluster rebalancing "
                                     "(work not running on a live worker) since it started.")
    rebalancing: bool = Field(description="Whether it saw a rebalance under way.")
    generation: int = Field(description="The assignment it last carried out.")


class ClusterOut(BaseModel):
    """``GET /workers``: the cluster and its workers."""

    mode: str = Field(description="`standalone` (a cluster of one) or `distributed`.")
    group_id: str | None
    worker_id: str = Field(description="The worker answering.")
    leader: str | None
    generation: int = Field(description="The assignment in force.")
    workers: list[WorkerOut]


class WorkerHealth(BaseModel):
    """``GET /health``: whether the worker is up and its herder answers (KIP-1017)."""

    status: str = Field(description="`healthy`, `starting` (not started, or stopped) or "
                        "`unhealthy` (the herder did not answer in time).")
    message: str


class ActiveTopicsOut(BaseModel):
    """A connector's active topics (inside ``{"<name>": {...}}``, as Kafka Connect)."""

    topics: list[str]


class SummaryTaskOut(BaseModel):
    """One task in ``GET /summary``."""

    id: int
    state: StateName
    worker_id: str
    records: int = Field(description="Records the transport acknowledged (source) or "
                         "handed to put (sink), since the task started.")
    errors: int
    dead_lettered: int
    lag: int | None = Field(description="Records not yet consumed (sink), where known.")


class SummaryConnectorOut(BaseModel):
    """One connector in ``GET /summary``: its state and its tasks' counts summed."""

    name: str
    type: str
    state: StateName
    worker_id: str
    records: int
    errors: int
    dead_lettered: int
    lag: int | None
    trace: str | None = None
    tasks: list[SummaryTaskOut]


class SummaryWorkerOut(WorkerOut):
    """A worker in ``GET /summary``."""

    reachable: bool = Field(description="Whether it answered for its tasks' counts (when "
                            "not, they show 0).")


class SummaryOut(BaseModel):
    """``GET /summary``: what the dashboard and ``omconnect status`` show."""

    worker_id: str
    transport: str
    mode: str = Field(default="standalone", description="`standalone` or `distributed`.")
    group_id: str | None = None
    leader: str | None = Field(default=None, description="The cluster's leader.")
    taken_at: float = Field(description="When it was taken (epoch seconds); rates come "
                            "from two summaries.")
    connectors: list[SummaryConnectorOut]
    workers: list[SummaryWorkerOut] = Field(default_factory=list, description="The "
                                            "cluster's workers (a standalone one: itself).")


class LoggerLevel(BaseModel):
    """A logger's level (``GET /admin/loggers``), in Kafka Connect's names."""

    level: str
    last_modified: int | None = Field(default=None, description="When this API last set "
                                      "it (epoch milliseconds); absent otherwise.")


class LoggerLevelIn(_Request):
    """``PUT /admin/loggers/{logger}``'s body."""

    level: str = Field(description="OFF, FATAL, ERROR, WARN, INFO, DEBUG or TRACE.")
