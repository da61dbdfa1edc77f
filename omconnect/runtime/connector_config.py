"""The settings every connector takes, and validation of a whole connector config.

A connector config is validated in one pass before anything starts: its ``${env:...}`` /
``${file:...}`` references, the common keys below, the connector's own ``validate()``, the
converters' and transforms' options, and the delivery guarantee against the transport's
capabilities. Every problem is reported at once, each naming its key.

Configs are kept *as written*: the runtime stores and shows the references, and resolves
them (:func:`resolve_connector_config`) only to validate a config and to start a connector,
so a resolved secret never reaches the config store, the REST API or a validation report.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

import attrs

from omconnect.config.definition import ConfigDef, ConfigKey
from omconnect.config.providers import ResolvedConfig, resolve_references
from omconnect.config.secrets import scrub, secret_values
from omconnect.config.types import ConfigType, Importance
from omconnect.config.validators import NonEmptyString, OneOf, Range
from omconnect.connector.connector import Connector, SinkConnector, SourceConnector
from omconnect.connector.resolution import resolve_connector_class
from omconnect.converters.task_converters import converter_config_errors
from omconnect.errors import ConfigError, ConnectError, PluginError
from omconnect.runtime.restart_policy import RestartPolicy
from omconnect.runtime.retry_with_tolerance import DEFAULT_DELIVERY_TIMEOUT_MS, ErrorPolicy
from omconnect.runtime.worker_config import AT_LEAST_ONCE, EXACTLY_ONCE, RESTART_POLICIES
from omconnect.transport.capabilities import Capabilities

__all__ = [
    "COMMON_CONFIG_DEF",
    "SINK_CONFIG_DEF",
    "ConfigValidation",
    "ConnectorSettings",
    "connector_kind",
    "key_definition",
    "load_connector_class",
    "resolve_connector_config",
    "validate_connector_config",
    "written_config",
]

_NOT_SLASH = re.compile(r"[^/\\\x00-\x1f]+")


def _name_validator(value: Any) -> str | None:
    if value is None:
        return None
    if not _NOT_SLASH.fullmatch(str(value)):
        return "must not contain '/', '\\' or control characters"
    return None


COMMON_CONFIG_DEF = (
    ConfigDef()
    .define("name", ConfigType.STRING, importance=Importance.HIGH, group="Common",
            validators=[NonEmptyString(), _name_validator],
            documentation="Unique name of the connector.")
    .define("connector.class", ConfigType.STRING, importance=Importance.HIGH, group="Common",
            validators=[NonEmptyString()],
            documentation="The connector: an entry-point name, a Kafka Connect short name "
            "(FileStreamSource) or a Python path (package.module:Class).")
    .define("tasks.max", ConfigType.INT, 1, validators=[Range(min=1)],
            importance=Importance.HIGH, group="Common",
            documentation="Most tasks the connector may run.")
    .define("key.converter", ConfigType.STRING, None, group="Converters",
            documentation="Overrides the worker's key converter; options as "
            "`key.converter.<option>`.")
    .define("value.converter", ConfigType.STRING, None, group="Converters",
            documentation="Overrides the worker's value converter; options as "
            "`value.converter.<option>`.")
    .define("header.converter", ConfigType.STRING, None, group="Converters",
            documentation="Overrides the worker's header converter.")
    .define("transforms", ConfigType.LIST, [], group="Transforms",
            documentation="Aliases of the transforms to apply in order; each configured "
            "as `transforms.<alias>.type` and `transforms.<alias>.<option>`.")
    .define("predicates", ConfigType.LIST, [], group="Transforms",
            documentation="Aliases of predicates, configured as `predicates.<alias>.type` "
            "and options.")
    .define("errors.tolerance", ConfigType.STRING, "none", validators=[OneOf(("none", "all"))],
            importance=Importance.MEDIUM, group="Error handling",
            documentation="`none`: a record that fails conversion, transformation or "
            "delivery fails the task. `all`: it is skipped (and dead-lettered if "
            "configured).")
    .define("errors.retry.timeout", ConfigType.LONG, 0, validators=[Range(min=-1)],
            group="Error handling",
            documentation="How long (ms) a retriable failure is retried before it counts as "
            "failed; 0 no retry, -1 forever. For `poll`/`put`, 0 means retry until stopped "
            "(as Kafka Connect).")
    .define("delivery.timeout.ms", ConfigType.LONG, DEFAULT_DELIVERY_TIMEOUT_MS,
            validators=[Range(min=-1)],
            group="Error handling",
            documentation="Sources: how long (ms) messages the transport refused with a "
            "retriable error (a lost connection, a broker restarting) are sent again, with "
            "the errors.retry backoff, before the failure counts per errors.tolerance; as "
            "Kafka's producer delivery.timeout.ms. Sinks: how long a consumer poll or "
            "commit failing with retriable errors is retried before the task fails. -1: "
            "until stopped. A longer errors.retry.timeout extends it.")
    .define("errors.retry.delay.max.ms", ConfigType.LONG, 60000, validators=[Range(min=1)],
            group="Error handling",
            documentation="Longest wait between retries (the wait doubles from 300 ms).")
    .define("errors.log.enable", ConfigType.BOOLEAN, False, group="Error handling",
            documentation="Log each failed record with the stage and error.")
    .define("errors.log.include.messages", ConfigType.BOOLEAN, False, group="Error handling",
            documentation="Include the record's key, value and headers in those log lines "
            "(fields that look secret are masked).")
    .define("errors.deadletterqueue.topic.name", ConfigType.STRING, "",
            group="Error handling",
            documentation="Topic receiving records that failed with errors.tolerance=all "
            "(sink and source connectors); empty for none.")
    .define("errors.deadletterqueue.context.headers.enable", ConfigType.BOOLEAN, False,
            group="Error handling",
            documentation="Add `__connect.errors.*` headers describing the failure to "
            "dead-lettered records.")
    .define("errors.deadletterqueue.topic.partitions", ConfigType.INT, 1,
            validators=[Range(min=1)], group="Error handling",
            documentation="Partitions of the dead-letter topic when the worker creates it.")
    .define("delivery.guarantee", ConfigType.STRING, None,
            validators=[OneOf((AT_LEAST_ONCE, EXACTLY_ONCE))], group="Delivery",
            documentation="at-least-once or exactly-once; default the worker's. "
            "exactly-once is refused at start when the transport or connector cannot "
            "provide it.")
    .define("topic.creation.default.partitions", ConfigType.INT, None,
            validators=[Range(min=1)], group="Topics",
            documentation="Partitions of topics created for this source; default the "
            "worker's.")
    .define("restart.policy", ConfigType.STRING, None, validators=[OneOf(RESTART_POLICIES)],
            group="Restarts", documentation="Overrides the worker's restart.policy.")
    .define("restart.backoff.initial.ms", ConfigType.LONG, None, validators=[Range(min=0)],
            group="Restarts", documentation="Overrides the worker's restart.backoff.initial.ms.")
    .define("restart.backoff.max.ms", ConfigType.LONG, None, validators=[Range(min=0)],
            group="Restarts", documentation="Overrides the worker's restart.backoff.max.ms.")
    .define("restart.max.attempts", ConfigType.INT, None, validators=[Range(min=-1)],
            group="Restarts", documentation="Overrides the worker's restart.max.attempts.")
)
"""Settings every connector takes."""

SINK_CONFIG_DEF = (
    ConfigDef()
    .define("topics", ConfigType.LIST, None, importance=Importance.HIGH, group="Sink",
            documentation="Topics to read (sink connectors); or set topics.regex.")
    .define("topics.regex", ConfigType.STRING, None, importance=Importance.HIGH, group="Sink",
            documentation="Regular expression of the topics to read (sink connectors); "
            "matching topics created later are picked up.")
    .define("consumer.override.max.poll.records", ConfigType.INT, None,
            validators=[Range(min=1)], group="Sink",
            documentation="Overrides the worker's consumer.max.poll.records.")
    .define("consumer.override.group.id", ConfigType.STRING, None,
            validators=[NonEmptyString()], group="Sink",
            documentation="The consumer group of the sink's tasks, where their positions "
            "are committed. Default: `connect-<standalone.id>-<name>` on a standalone "
            "worker (its own, like its storage namespaces), `connect-<name>` on a "
            "distributed worker (shared by the cluster, as Kafka Connect's).")
)
"""Settings every sink connector takes besides the common ones."""


def connector_kind(connector_class: type[Connector]) -> str:
    """``"source"`` or ``"sink"`` for a connector class."""
    if issubclass(connector_class, SourceConnector):
        return "source"
    if issubclass(connector_class, SinkConnector):
        return "sink"
    return "unknown"


def load_connector_class(name: str) -> type[Connector]:
    """The connector class ``name`` resolves to (entry point, alias or Python path).

    Raises:
        ConfigError: Unknown or invalid class, with ``key="connector.class"`` and the
            known names.

    """
    try:
        loaded = resolve_connector_class(name)
    except PluginError as exc:
        raise ConfigError(f"{exc}; fix the value of connector.class",
                          errors={"connector.class": [str(exc)]},
                          key="connector.class") from exc
    return loaded


def written_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """``config`` as written, with string keys: a
    :class:`~omconnect.config.providers.ResolvedConfig` (e.g. from ``load_config_file``)
    gives back its references, so what is stored or shown never holds resolved secrets.
    """
    if isinstance(config, ResolvedConfig):
        config = config.as_written()
    return {str(k): v for k, v in config.items()}


def resolve_connector_config(
    config: Mapping[str, Any],
    *,
    environ: Mapping[str, str] | None = None,
    base_dir: str | os.PathLike[str] | None = None,
) -> ResolvedConfig:
    """``config`` with its ``${env:...}`` / ``${file:...}`` references resolved now.

    Args:
        config: A connector config as written.
        environ: The environment for ``${env:...}`` (default: ``os.environ``).
        base_dir: Where relative ``${file:...}`` paths start (default: the working
            directory).

    Raises:
        ConfigError: A reference cannot be resolved; per key, the reference and why.

    """
    resolved, errors = resolve_references(written_config(config), environ=environ,
                                          base_dir=base_dir)
    if errors:
        name = config.get("name")
        what = f"references in connector {name!r} configuration" if name \
            else "references in the connector configuration"
        raise ConfigError.from_errors(errors, what=what)
    return resolved


@attrs.frozen(kw_only=True)
class ConfigValidation:
    """The outcome of validating a connector config.

    Attributes:
        connector_class: The ``connector.class`` as given.
        kind: ``"source"``, ``"sink"`` or ``"unknown"`` (class not resolved).
        errors: Messages per key (every checked key; ``[]`` when fine).
        definitions: The declared keys: common, sink (for sinks) and the connector's own.
        values: The config as written (``${...}`` references not resolved).

    Messages never contain a secret value of the config (they are scrubbed, see
    :mod:`omconnect.config.secrets`), and :meth:`to_dict` masks secret values.
    """

    connector_class: str
    kind: str
    errors: dict[str, list[str]]
    definitions: list[ConfigKey]
    values: dict[str, Any]

    @property
    def error_count(self) -> int:
        """How many messages there are in total."""
        return sum(len(messages) for messages in self.errors.values())

    @property
    def ok(self) -> bool:
        """Whether the config is valid."""
        return self.error_count == 0

    def raise_if_invalid(self) -> None:
        """Raise when the config is invalid.

        Raises:
            ConfigError: Listing every message per key.

        """
        if not self.ok:
            name = self.values.get("name")
            what = f"connector {name!r} configuration" if name else "connector configuration"
            raise ConfigError.from_errors(self.errors, what=what)

    def to_dict(self) -> dict[str, Any]:
        """Kafka Connect's validation response shape
        (``PUT /connector-plugins/{type}/config/validate``); values as written, secret
        ones (declared ``PASSWORD`` or named like a secret) masked.
        """
        groups: list[str] = []
        configs: list[dict[str, Any]] = []
        for key in self.definitions:
            if key.group and key.group not in groups:
                groups.append(key.group)
            configs.append({
                "definition": key_definition(key, len(configs)),
                "value": {
                    "name": key.name,
                    "value": _shown(key.name, key, self.values.get(key.name)),
                    "recommended_values": [],
                    "errors": list(self.errors.get(key.name, [])),
                    "visible": True,
                },
            })
        declared = {key.name for key in self.definitions}
        for name, messages in self.errors.items():
            if name not in declared and messages:
                configs.append({"definition": None, "value": {
                    "name": name, "value": _shown(name, None, self.values.get(name)),
                    "recommended_values": [], "errors": list(messages), "visible": True}})
        return {"name": self.connector_class, "error_count": self.error_count,
                "groups": groups, "configs": configs}


def key_definition(key: ConfigKey, order: int) -> dict[str, Any]:
    """A declared key in Kafka Connect's ``ConfigKeyInfo`` shape (validation responses,
    ``GET /connector-plugins/{plugin}/config``).
    """
    return {
        "name": key.name,
        "type": key.type.name,
        "required": key.required,
        "default_value": None if key.required or key.default is None else str(key.default),
        "importance": key.importance.name,
        "documentation": key.documentation,
        "group": key.group,
        "width": "NONE",
        "display_name": key.display_name or key.name,
        "dependents": [],
        "order": order,
    }


def _shown(name: str, key: ConfigKey | None, value: Any) -> Any:
    if value is None:
        return None
    masked = ConfigDef.masked({name: value}, ConfigDef([key]) if key else None)
    return str(masked[name])


def _merge(into: dict[str, list[str]], more: Mapping[str, list[str]]) -> None:
    for key, messages in more.items():
        bucket = into.setdefault(key, [])
        bucket.extend(m for m in messages if m not in bucket)


def validate_connector_config(
    config: Mapping[str, Any],
    *,
    worker_values: Mapping[str, Any] | None = None,
    capabilities: Capabilities | None = None,
    transport_name: str = "the transport",
    environ: Mapping[str, str] | None = None,
    base_dir: str | os.PathLike[str] | None = None,
) -> ConfigValidation:
    """Validate a connector config completely, before anything starts.

    Its references are resolved first (as starting the connector would); one that cannot
    be resolved is an error of its key naming the reference, and the rest is validated
    with the resolved values.

    Args:
        config: The connector config as written (a ``ResolvedConfig`` counts as its
            references).
        worker_values: The worker's parsed settings (for defaults such as the delivery
            guarantee); ``None`` to use the worker defaults.
        capabilities: The transport's capabilities, to check an exactly-once guarantee;
            ``None`` skips that check.
        transport_name: The transport's name, for messages.
        environ: The environment for ``${env:...}`` (default: ``os.environ``).
        base_dir: Where relative ``${file:...}`` paths start (default: the working
            directory).

    Returns:
        Every problem found, per key (messages scrubbed of the config's secret values).

    """
    from omconnect.runtime.transform_setup import transform_config_errors

    written = written_config(config)
    values, reference_errors = resolve_references(written, environ=environ,
                                                  base_dir=base_dir)
    errors = COMMON_CONFIG_DEF.validate(values)
    definitions = list(COMMON_CONFIG_DEF)
    class_name = str(values.get("connector.class") or "")
    kind = "unknown"
    connector: Connector | None = None
    if class_name.strip():
        try:
            connector_class = load_connector_class(class_name.strip())
        except ConfigError as exc:
            errors["connector.class"] = [str(exc)]
        else:
            kind = connector_kind(connector_class)
            try:
                connector = connector_class()
                own_def = connector.config_def()
                definitions += [k for k in own_def if k.name not in COMMON_CONFIG_DEF]
                _merge(errors, connector.validate(values))
            except ConnectError as exc:
                _merge(errors, _errors_of(exc, "connector.class"))
            except Exception as exc:
                errors.setdefault("connector.class", []).append(
                    f"{class_name} failed to validate its config: {type(exc).__name__}: {exc}")
    if kind == "sink":
        definitions += list(SINK_CONFIG_DEF)
        _merge(errors, SINK_CONFIG_DEF.validate(values))
        _merge(errors, _sink_topic_errors(values))
    _merge(errors, converter_config_errors(values))
    _merge(errors, transform_config_errors(values))
    if connector is not None:
        _merge(errors, _delivery_errors(values, connector, worker_values, capabilities,
                                        transport_name))
    errors.update(reference_errors)  # other messages about such a key would be misleading
    declared = ConfigDef(list({key.name: key for key in definitions}.values()))
    secrets = secret_values(written, declared, environ=environ, base_dir=base_dir)
    if secrets:
        errors = {key: [scrub(m, secrets) for m in messages]
                  for key, messages in errors.items()}
    return ConfigValidation(connector_class=class_name, kind=kind, errors=errors,
                            definitions=definitions, values=written)


def _errors_of(exc: ConnectError, fallback_key: str) -> dict[str, list[str]]:
    if isinstance(exc, ConfigError) and exc.errors:
        return exc.errors
    key = exc.context.get("key") or fallback_key
    return {str(key): [exc.message]}


def _sink_topic_errors(values: Mapping[str, Any]) -> dict[str, list[str]]:
    errors: dict[str, list[str]] = {}
    topics = ConfigType.LIST.parse(values.get("topics")) if values.get("topics") else []
    regex = str(values.get("topics.regex") or "").strip()
    if topics and regex:
        errors["topics"] = ["set either topics or topics.regex, not both"]
    elif not topics and not regex:
        errors["topics"] = ["a sink connector needs topics (a comma-separated list) or "
                            "topics.regex; set one of them"]
    if regex:
        try:
            re.compile(regex)
        except re.error as exc:
            errors["topics.regex"] = [f"not a valid regular expression ({exc}); fix the "
                                      "value of topics.regex"]
    dlq = str(values.get("errors.deadletterqueue.topic.name") or "").strip()
    if dlq and (dlq in topics or (regex and _matches(regex, dlq))):
        errors["errors.deadletterqueue.topic.name"] = [
            f"the dead-letter topic {dlq!r} is also a topic this sink reads (it would read "
            "its own failures); choose another topic"]
    return errors


def _matches(regex: str, topic: str) -> bool:
    try:
        return re.fullmatch(regex, topic) is not None
    except re.error:
        return False


def _delivery_errors(
    values: Mapping[str, Any],
    connector: Connector,
    worker_values: Mapping[str, Any] | None,
    capabilities: Capabilities | None,
    transport_name: str,
) -> dict[str, list[str]]:
    guarantee = values.get("delivery.guarantee") or (worker_values or {}).get(
        "delivery.guarantee") or AT_LEAST_ONCE
    if str(guarantee).lower() != EXACTLY_ONCE:
        return {}
    problems: list[str] = []
    class_name = f"{type(connector).__module__}.{type(connector).__qualname__}"
    supports = getattr(connector, "exactly_once_support", lambda: False)
    if not supports():
        problems.append(f"connector {class_name} does not support exactly-once delivery "
                        "(its exactly_once_support() returns False)")
    if capabilities is not None:
        needed = "transactions" if isinstance(connector, SourceConnector) else "replayable"
        if not getattr(capabilities, needed):
            problems.append(
                f"transport {transport_name!r} cannot provide exactly-once for a "
                f"{connector_kind(type(connector))} connector: it lacks the {needed!r} "
                "capability")
        elif isinstance(connector, SourceConnector):
            problems.append(
                f"exactly-once source delivery needs transactional sends, which the "
                f"omconnect transport SPI does not expose yet (transport {transport_name!r})")
    if not problems:
        return {}
    fix = "; use delivery.guarantee=at-least-once or another transport/connector"
    return {"delivery.guarantee": [p + fix for p in problems]}


@attrs.frozen(kw_only=True)
class ConnectorSettings:
    """A connector's parsed settings, as the runtime uses them.

    Attributes:
        name: The connector's name.
        kind: ``"source"`` or ``"sink"``.
        values: The config: common (and sink) keys parsed, the rest as given.
        errors: The ``errors.*`` policy.
        restart: The restart policy (its own over the worker's).
        delivery_guarantee: ``at-least-once`` or ``exactly-once``.
        topic_partitions: Partitions of topics created for it.
        max_poll_records: Records per sink batch.
        group: The consumer group of its sink tasks.

    """

    name: str
    kind: str
    values: dict[str, Any]
    errors: ErrorPolicy
    restart: RestartPolicy
    delivery_guarantee: str
    topic_partitions: int
    max_poll_records: int
    group: str

    @classmethod
    def parse(cls, config: Mapping[str, Any], kind: str,
              worker: Mapping[str, Any], *, group: str | None = None) -> ConnectorSettings:
        """Parse a validated connector config.

        Args:
            config: The connector config (already validated).
            kind: ``"source"`` or ``"sink"``.
            worker: The worker's parsed settings (defaults).
            group: The consumer group of its sink tasks (the worker decides it: see
                :meth:`~omconnect.runtime.worker_config.WorkerConfig.sink_group`);
                default ``connect-<name>``.

        """
        definition = COMMON_CONFIG_DEF.merge(SINK_CONFIG_DEF) if kind == "sink" \
            else COMMON_CONFIG_DEF
        values = definition.parse(config, what="connector configuration")
        return cls(
            name=str(values["name"]),
            kind=kind,
            values=values,
            errors=ErrorPolicy.from_config(values),
            restart=RestartPolicy.from_config(values, worker),
            delivery_guarantee=str(values.get("delivery.guarantee")
                                   or worker["delivery.guarantee"]).lower(),
            topic_partitions=int(values.get("topic.creation.default.partitions")
                                 or worker["topic.creation.default.partitions"]),
            max_poll_records=int(values.get("consumer.override.max.poll.records")
                                 or worker["consumer.max.poll.records"]),
            group=group or f"connect-{values['name']}",
        )

    @property
    def tasks_max(self) -> int:
        """``tasks.max``."""
        return int(self.values["tasks.max"])

    @property
    def topics(self) -> list[str]:
        """``topics`` of a sink (empty when it uses ``topics.regex``)."""
        return list(self.values.get("topics") or [])

    @property
    def topics_regex(self) -> str | None:
        """``topics.regex`` of a sink, or ``None``."""
        regex = self.values.get("topics.regex")
        return str(regex).strip() or None if regex else None
