"""The worker's configuration: which transport, converters, offset flushing, restarts.

One key, ``transport``, picks the queue; moving a pipeline to another queue means changing
that key (and giving that transport's ``<name>.*`` options). Options of other transports
may stay in the file: only the selected transport's are read.

Kafka Connect's worker files load unchanged: keys that only make sense on Kafka Connect
(``bootstrap.servers``, ``offset.storage.file.filename``, ``plugin.path``, ...) are
accepted and ignored, each with a logged note saying so; so are the serializer keys of
Copycat's ``copycat-standalone.properties`` (Kafka Connect's first release), whose
``org.apache.kafka.copycat.*`` class names resolve like the ``org.apache.kafka.connect.*``
ones.
"""

from __future__ import annotations

import logging
import os
import socket
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from omconnect import plugins
from omconnect.config.definition import ConfigDef
from omconnect.config.types import ConfigType, Importance
from omconnect.config.validators import NonEmptyString, OneOf, Range, Regex
from omconnect.converters.task_converters import converter_config_errors
from omconnect.errors import ConfigError
from omconnect.runtime.storage_namespaces import derive_standalone_id, storage_namespaces
from omconnect.transport.opening import TransportSelection, transport_config_errors
from omconnect.transport.spi import Transport

__all__ = [
    "AT_LEAST_ONCE",
    "COPYCAT_ONLY_KEYS",
    "DISTRIBUTED_CONFIG_DEF",
    "EXACTLY_ONCE",
    "KAFKA_CONNECT_ONLY_KEYS",
    "RESTART_POLICIES",
    "WORKER_CONFIG_DEF",
    "WorkerConfig",
    "advertised_host",
]

_log = logging.getLogger(__name__)

AT_LEAST_ONCE = "at-least-once"
EXACTLY_ONCE = "exactly-once"
RESTART_POLICIES = ("none", "on-failure")

WORKER_CONFIG_DEF = (
    ConfigDef()
    .define("transport", ConfigType.STRING, "embedded", importance=Importance.HIGH,
            validators=[NonEmptyString()], group="Transport",
            documentation="The transport (queue) the worker runs on: an entry-point name "
            "(embedded, memory, kafka, rabbitmq, pulsar, redis) or a Python path. Its options "
            "are given as `<transport>.<option>`.")
    .define("key.converter", ConfigType.STRING, "json", importance=Importance.HIGH,
            group="Converters",
            documentation="Converter of record keys, for connectors that do not set their "
            "own; options as `key.converter.<option>`.")
    .define("value.converter", ConfigType.STRING, "json", importance=Importance.HIGH,
            group="Converters",
            documentation="Converter of record values, for connectors that do not set "
            "their own; options as `value.converter.<option>`.")
    .define("header.converter", ConfigType.STRING, "simple", importance=Importance.LOW,
            group="Converters",
            documentation="Converter of header values; options as "
            "`header.converter.<option>`.")
    .define("offset.flush.interval.ms", ConfigType.LONG, 10000, validators=[Range(min=1)],
            importance=Importance.HIGH, group="Offsets",
            documentation="How often source offsets are written to the offset store and "
            "sink positions committed to the consumer group.")
    .define("offset.flush.timeout.ms", ConfigType.LONG, 5000, validators=[Range(min=0)],
            group="Offsets",
            documentation="On stop, the longest a source task waits for the transport to "
            "acknowledge records in flight before committing what was acknowledged.")
    .define("standalone.id", ConfigType.STRING, None, validators=[NonEmptyString()],
            group="Storage",
            documentation="Names this worker's own storage namespaces "
            "(`connect-configs-<id>`, `connect-offsets-<id>`, `connect-status-<id>`). "
            "Default: derived from the host name and the worker config file's absolute "
            "path, so the same file on the same host resumes and any other worker keeps "
            "to itself. Workers given the same id share their connectors on purpose.")
    .define("offset.storage.namespace", ConfigType.STRING, None,
            validators=[NonEmptyString()], group="Offsets",
            documentation="Key/value store namespace of the transport holding source "
            "offsets. Default: `connect-offsets-<standalone.id>`; set it to share offsets "
            "on purpose.")
    .define("config.storage.namespace", ConfigType.STRING, None,
            validators=[NonEmptyString()], group="Storage",
            documentation="Key/value store namespace holding connector configs and target "
            "states, so a restarted worker resumes its connectors. Default: "
            "`connect-configs-<standalone.id>`.")
    .define("status.storage.namespace", ConfigType.STRING, None,
            validators=[NonEmptyString()], group="Storage",
            documentation="Key/value store namespace holding the last known connector and "
            "task states. Default: `connect-status-<standalone.id>`.")
    .define("task.shutdown.graceful.timeout.ms", ConfigType.LONG, 5000,
            validators=[Range(min=0)], importance=Importance.MEDIUM, group="Tasks",
            documentation="How long stopping a task may take; a task still blocked after "
            "it is abandoned (what is safe is committed first).")
    .define("source.max.in.flight.records", ConfigType.INT, 20000,
            validators=[Range(min=1)], group="Tasks",
            documentation="Most records a source task has sent but not yet seen "
            "acknowledged; at the limit it waits instead of polling more.")
    .define("columnar.enable", ConfigType.BOOLEAN, True, group="Tasks",
            documentation="Run tasks that read or write Arrow batches (poll_batch, "
            "put_batch) on the columnar path; false runs them record by record through "
            "poll and put, as any task (for comparing the two, or to rule the columnar "
            "path out).")
    .define("consumer.max.poll.records", ConfigType.INT, 2000, validators=[Range(min=1)],
            group="Tasks",
            documentation="Most records a sink task reads, converts and puts as one batch.")
    .define("topics.regex.refresh.interval.ms", ConfigType.LONG, 30000,
            validators=[Range(min=100)], group="Tasks",
            documentation="How often a sink subscribed with `topics.regex` looks for new "
            "matching topics.")
    .define("topic.creation.enable", ConfigType.BOOLEAN, True, group="Topics",
            documentation="Create topics a source writes to (and dead-letter topics) when "
            "they do not exist.")
    .define("topic.creation.default.partitions", ConfigType.INT, 1,
            validators=[Range(min=1)], group="Topics",
            documentation="Partitions of topics the worker creates; a connector may set "
            "its own.")
    .define("topic.tracking.enable", ConfigType.BOOLEAN, True, group="Topics",
            documentation="Record each connector's active topics (those its tasks produce "
            "to or consume from), shown by `GET /connectors/{name}/topics` (KIP-558).")
    .define("topic.tracking.allow.reset", ConfigType.BOOLEAN, True, group="Topics",
            documentation="Allow `PUT /connectors/{name}/topics/reset` to clear a "
            "connector's active topics.")
    .define("delivery.guarantee", ConfigType.STRING, AT_LEAST_ONCE,
            validators=[OneOf((AT_LEAST_ONCE, EXACTLY_ONCE))], group="Delivery",
            documentation="Default delivery guarantee of connectors that do not declare one.")
    .define("restart.policy", ConfigType.STRING, "none", validators=[OneOf(RESTART_POLICIES)],
            group="Restarts",
            documentation="`on-failure` restarts failed tasks and connectors with "
            "exponential backoff; `none` leaves them FAILED (Kafka Connect's behaviour).")
    .define("restart.backoff.initial.ms", ConfigType.LONG, 1000, validators=[Range(min=0)],
            group="Restarts", documentation="Wait before the first automatic restart.")
    .define("restart.backoff.max.ms", ConfigType.LONG, 60000, validators=[Range(min=0)],
            group="Restarts",
            documentation="Longest wait between automatic restarts (the wait doubles after "
            "each failure up to this); a task that ran this long before failing starts "
            "again from the initial backoff.")
    .define("restart.max.attempts", ConfigType.INT, -1, validators=[Range(min=-1)],
            group="Restarts",
            documentation="Most automatic restarts in a row; -1 for no limit.")
    .define("worker.id", ConfigType.STRING, None, group="Worker",
            documentation="This worker's id in status reports; default `<host>:<pid>`.")
    .define("rest.auth.token", ConfigType.PASSWORD, None, group="REST API",
            documentation="When set, REST API requests must carry `Authorization: Bearer "
            "<token>` (or the basic credentials below, when also set).")
    .define("rest.auth.basic.user", ConfigType.STRING, None, group="REST API",
            documentation="When set (with rest.auth.basic.password), REST API requests "
            "may authenticate with HTTP basic auth as this user.")
    .define("rest.auth.basic.password", ConfigType.PASSWORD, None, group="REST API",
            documentation="The password of rest.auth.basic.user.")
)
"""Every setting of the worker, with defaults and documentation."""

DISTRIBUTED_CONFIG_DEF = (
    ConfigDef()
    .define("group.id", ConfigType.STRING, importance=Importance.HIGH, group="Cluster",
            validators=[NonEmptyString(), Regex(r"[A-Za-z0-9._-]{1,200}",
                                                "letters, digits, '.', '_' and '-'")],
            documentation="The cluster this worker joins: every worker started with the "
            "same group.id on one transport shares the cluster's connectors, which are "
            "spread over them. Names the cluster's consumer group and, unless set, its "
            "storage namespaces (`connect-configs-<group.id>`, `connect-status-<group.id>`, "
            "`connect-offsets-<group.id>`).")
    .define("scheduled.rebalance.max.delay.ms", ConfigType.LONG, 300_000,
            validators=[Range(min=0)], importance=Importance.MEDIUM, group="Cluster",
            documentation="How long the connectors and tasks of a worker that left the "
            "cluster (or died) wait for it to come back before they move to the other "
            "workers; a worker that comes back in time (same worker.id) gets them back. 0: "
            "move them at once.")
    .define("cluster.slots", ConfigType.INT, 16, validators=[Range(min=1, max=1024)],
            group="Cluster",
            documentation="Partitions of the cluster's membership topic: each live worker "
            "holds some, so this bounds how many workers take work (more workers stand by "
            "until one leaves). Fixed when the first worker creates the topic.")
    .define("rest.host.name", ConfigType.STRING, "127.0.0.1", group="Cluster",
            validators=[NonEmptyString()],
            documentation="Address the worker's REST API listens on.")
    .define("rest.port", ConfigType.INT, 8083, validators=[Range(min=0, max=65535)],
            group="Cluster",
            documentation="Port of the worker's REST API (0: any free port).")
    .define("rest.advertised.host.name", ConfigType.STRING, None, group="Cluster",
            validators=[NonEmptyString()],
            documentation="Host name the other workers and `omconnect status` reach this "
            "worker's REST API at. Default: rest.host.name, or the host name when that is "
            "0.0.0.0 or ::.")
    .define("rest.advertised.port", ConfigType.INT, None,
            validators=[Range(min=1, max=65535)], group="Cluster",
            documentation="Port advertised to the other workers. Default: the port the "
            "REST API listens on.")
    .define("cluster.write.timeout.ms", ConfigType.LONG, 30_000, validators=[Range(min=1)],
            group="Cluster",
            documentation="How long a change made through this worker (create, update, "
            "pause, delete...) waits for its record to come back through the cluster's "
            "config log, where every worker reads it in the same order; past it the "
            "request fails with 500 and the change may still apply.")
)
"""The settings of a distributed worker besides :data:`WORKER_CONFIG_DEF`'s."""

_STANDALONE_ONLY_KEYS = ("standalone.id",)

COPYCAT_ONLY_KEYS: frozenset[str] = frozenset({
    "key.serializer",
    "value.serializer",
    "key.deserializer",
    "value.deserializer",
})
"""Worker keys of Copycat's ``copycat-standalone.properties``, gone from Kafka Connect;
accepted and ignored with a note, so those files run unchanged."""

KAFKA_CONNECT_ONLY_KEYS: frozenset[str] = frozenset({
    "bootstrap.servers",
    "offset.storage.file.filename",
    "plugin.path",
    "plugin.discovery",
    "group.id",
    "offset.storage.topic",
    "config.storage.topic",
    "status.storage.topic",
    "offset.storage.replication.factor",
    "config.storage.replication.factor",
    "status.storage.replication.factor",
    "offset.storage.partitions",
    "status.storage.partitions",
    "listeners",
    "rest.host.name",
    "rest.port",
    "rest.advertised.host.name",
    "rest.advertised.port",
    "rest.advertised.listener",
    "connector.client.config.override.policy",
    "internal.key.converter",
    "internal.value.converter",
    "internal.key.converter.schemas.enable",
    "internal.value.converter.schemas.enable",
    "exactly.once.source.support",
    "config.providers",
    "scheduled.rebalance.max.delay.ms",
    "session.timeout.ms",
    "heartbeat.interval.ms",
    "security.protocol",
    "client.id",
    "task.shutdown.graceful.timeout.ms.internal",
})
"""Kafka Connect worker keys that have no meaning here: accepted with a logged note."""

_KAFKA_CONNECT_ONLY_PREFIXES = ("ssl.", "sasl.", "admin.", "metrics.", "metric.",
                                "config.providers.", "rest.", "listeners.", "exactly.once.")
_PASS_THROUGH_PREFIXES = ("key.converter.", "value.converter.", "header.converter.",
                          "producer.", "consumer.")


def _default_worker_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def advertised_host(values: Mapping[str, Any]) -> str:
    """The host name a distributed worker's REST API is reached at by the others."""
    host = str(values.get("rest.advertised.host.name") or values["rest.host.name"])
    return socket.gethostname() if host in ("0.0.0.0", "::", "") else host


def _advertised_worker_id(values: Mapping[str, Any]) -> str | None:
    """A distributed worker's default id, ``<advertised host>:<port>`` as Kafka Connect's
    (stable across restarts, so a worker that comes back is recognised); ``None`` (the
    ``<host>:<pid>`` default) when the port is chosen at start (``rest.port=0``).
    """
    port = values.get("rest.advertised.port") or values.get("rest.port")
    return f"{advertised_host(values)}:{port}" if port else None


def _strip(config: Mapping[str, Any], prefix: str) -> dict[str, Any]:
    return {k[len(prefix):]: v for k, v in config.items() if k.startswith(prefix)}


@attrs.frozen(kw_only=True)
class WorkerConfig:
    """A parsed, validated worker configuration. Build it with :meth:`parse`.

    Attributes:
        values: Every declared key parsed to its type (defaults filled in), plus the
            undeclared keys as given.
        transport_class: The selected transport's class.
        transport_options: Its options, the ``<transport>.`` prefix removed.
        notes: What was accepted but ignored, one sentence each (also logged).
        distributed: Whether this is a distributed worker's config (with ``group.id``).

    """

    values: dict[str, Any]
    transport_class: type[Transport]
    transport_options: dict[str, Any]
    notes: tuple[str, ...] = ()
    distributed: bool = False

    @classmethod
    def parse(cls, config: Mapping[str, Any] | None = None, *,
              origin: str | Path | None = None, distributed: bool = False) -> WorkerConfig:
        """Validate and parse a worker configuration.

        Args:
            config: The settings (strings from a file, or typed values).
            origin: The file the settings came from; with the host name it identifies
                a standalone worker when ``standalone.id`` is not set (see
                :mod:`~omconnect.runtime.storage_namespaces`).
            distributed: Parse a distributed worker's config: :data:`DISTRIBUTED_CONFIG_DEF`
                too, ``group.id`` required, ``standalone.id`` refused, storage namespaces
                named by ``group.id``.

        Raises:
            ConfigError: Listing every bad key, each named as written (transport options
                as ``<transport>.<option>``), with the fix.

        """
        raw = {str(k): v for k, v in (config or {}).items()}
        definition = WORKER_CONFIG_DEF.merge(DISTRIBUTED_CONFIG_DEF) if distributed \
            else WORKER_CONFIG_DEF
        errors = definition.validate(raw)
        if distributed:
            for key in _STANDALONE_ONLY_KEYS:
                if raw.get(key) is not None:
                    errors.setdefault(key, []).append(
                        "is a standalone worker's setting; a distributed worker's storage "
                        "namespaces are named by group.id (remove it, or set the "
                        "*.storage.namespace keys)")
        selection, transport_errors = transport_config_errors(raw)
        for key, problems in transport_errors.items():
            errors.setdefault(key, []).extend(problems)
        for key, problems in converter_config_errors({}, raw).items():
            errors.setdefault(key, []).extend(problems)
        if any(errors.values()):
            raise ConfigError.from_errors(errors, what="worker configuration")
        assert selection is not None
        values = definition.parse(raw, what="worker configuration")
        if distributed:
            values.update(storage_namespaces(values, str(values["group.id"])))
            if not values.get("worker.id"):
                values["worker.id"] = _advertised_worker_id(values)
        else:
            if not values.get("standalone.id"):
                values["standalone.id"] = derive_standalone_id(origin)
            values.update(storage_namespaces(values, str(values["standalone.id"])))
        if not values.get("worker.id"):
            values["worker.id"] = _default_worker_id()
        notes = tuple(_notes(raw, selection.name, definition, distributed))
        for note in notes:
            _log.info("worker configuration: %s", note)
        return cls(values=values, transport_class=selection.transport_class,
                   transport_options=selection.options, notes=notes,
                   distributed=distributed)

    @property
    def transport_name(self) -> str:
        """The selected transport's name, as configured."""
        return str(self.values["transport"])

    @property
    def worker_id(self) -> str:
        """This worker's id in status reports."""
        return str(self.values["worker.id"])

    def sink_group(self, connector: str, config: Mapping[str, Any] | None = None) -> str:
        """The consumer group of sink connector ``connector``'s tasks: the config's
        ``consumer.override.group.id`` when set; else ``connect-<connector>`` on a
        distributed worker (the cluster shares it, as Kafka Connect's workers do) and
        ``connect-<standalone.id>-<connector>`` on a standalone one (its own, as its
        storage namespaces are: two standalone workers never share sink positions
        unless told to).
        """
        override = str((config or {}).get("consumer.override.group.id") or "").strip()
        if override:
            return override
        if self.distributed:
            return f"connect-{connector}"
        return f"connect-{self.values['standalone.id']}-{connector}"

    def open_transport(self) -> Transport:
        """A new instance of the selected transport, with its options
        (:meth:`omconnect.transport.opening.TransportSelection.open`).
        """
        return TransportSelection(name=self.transport_name, transport_class=self.transport_class,
                                  options=self.transport_options).open()

    def prefixed(self, prefix: str) -> dict[str, Any]:
        """The settings starting with ``prefix``, prefix removed (e.g. ``"producer."``)."""
        return _strip(self.values, prefix)

    def __getitem__(self, key: str) -> Any:
        return self.values[key]


def _notes(raw: Mapping[str, Any], transport_name: str, definition: ConfigDef,
           distributed: bool) -> list[str]:
    declared = set(definition.names())
    cluster_keys = {k for k in DISTRIBUTED_CONFIG_DEF.names() if not k.startswith("rest.")}
    transports = set(plugins.available(plugins.TRANSPORTS)) | {transport_name}
    notes: list[str] = []
    for key in sorted(raw):
        if key in declared or key.startswith(_PASS_THROUGH_PREFIXES):
            continue
        if any(key.startswith(name + ".") for name in transports):
            if not key.startswith(transport_name + "."):
                notes.append(f"{key} is an option of another transport; ignored while "
                             f"transport={transport_name}")
            continue
        if not distributed and key in cluster_keys:
            notes.append(f"{key} is a distributed worker's setting; a standalone worker "
                         "never joins a cluster (run omconnect distributed for that); "
                         "ignored")
            continue
        if key in COPYCAT_ONLY_KEYS:
            notes.append(f"{key} is a setting of Kafka Connect's first release (Copycat) "
                         "with no meaning here; ignored")
            continue
        if key in KAFKA_CONNECT_ONLY_KEYS or key.startswith(_KAFKA_CONNECT_ONLY_PREFIXES):
            notes.append(f"{key} is a Kafka Connect worker setting with no meaning here; "
                         "ignored")
            continue
        close = WORKER_CONFIG_DEF.suggest(key)
        hint = f"; did you mean {close}?" if close else ""
        notes.append(f"{key} is not a worker setting; ignored{hint}")
    return notes
