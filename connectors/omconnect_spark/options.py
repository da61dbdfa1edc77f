"""The options of the ``omconnect`` data source, checked before a query starts.

Spark hands a data source its options in a case-insensitive map whose keys are stored in
lower case (``dict(options)`` shows ``startingoffsets``). The adapter reads that map as
it is and restores each key's spelling: its own options (``startingOffsets``, ...), the
selected transport's options (``embedded.path``, spelled as that transport's
``config_def`` spells them) and converter options (``value.converter.*``, lower case as
every converter option is). Native client options passed through a transport (for
example ``kafka.consumer.*``) keep the lower case Spark gives them.

Everything wrong with the options is reported at once, in one
:class:`~omconnect.errors.ConfigError` whose lines name each option and its fix: an
unknown transport, a transport option it rejects, malformed ``startingOffsets`` JSON,
missing ``topics``, an option that looks like a misspelt one.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping
from typing import Any, Literal

import attrs

from omconnect import plugins
from omconnect.config import ConfigDef, ConfigType, Importance, NonEmptyString, Range
from omconnect.errors import ConfigError, PluginError
from omconnect.records import TopicPartition
from omconnect.runtime.record_conversion import converter_config_errors
from omconnect.runtime.worker_config import WorkerConfig
from omconnect.transport.spi import Transport

__all__ = [
    "EARLIEST",
    "LATEST",
    "READ_CONFIG_DEF",
    "WRITE_CONFIG_DEF",
    "Decoding",
    "OffsetSpec",
    "ReadOptions",
    "TransportSettings",
    "WriteOptions",
    "parse_offset_spec",
]

EARLIEST = -2
"""In an offsets JSON, the earliest offset still kept (as in Spark's Kafka source)."""
LATEST = -1
"""In an offsets JSON, the offset the next message will get (as in Spark's Kafka source)."""

_OFFSETS_EXAMPLE = '{"orders":{"0":23,"1":-2}}'

READ_CONFIG_DEF = (
    ConfigDef()
    .define("transport", ConfigType.STRING, "embedded", importance=Importance.HIGH,
            validators=[NonEmptyString()],
            documentation="The transport to read: embedded, memory, kafka, rabbitmq, pulsar "
            "or a Python path; its options are given as `<transport>.<option>`.")
    .define("topics", ConfigType.LIST, importance=Importance.HIGH,
            documentation="Comma-separated topics to read.")
    .define("startingOffsets", ConfigType.STRING, None, importance=Importance.HIGH,
            documentation="Where a new query starts: earliest, latest or JSON per partition "
            f"such as {_OFFSETS_EXAMPLE} (-2 earliest, -1 latest). Default: latest for "
            "streaming, earliest for batch. A restarted query resumes from its checkpoint.")
    .define("endingOffsets", ConfigType.STRING, "latest",
            documentation="Batch reads only: where reading stops (exclusive): latest or "
            "JSON per partition (-1 latest).")
    .define("maxRecordsPerTrigger", ConfigType.LONG, None, validators=[Range(min=1)],
            documentation="Most records one micro-batch reads, shared among partitions in "
            "proportion to their backlog (Spark's ReadMaxRows).")
    .define("maxRecordsPerPartition", ConfigType.LONG, None, validators=[Range(min=1)],
            documentation="Split a partition's offset range into Spark partitions of at "
            "most this many records (more parallelism for few, large partitions).")
    .define("failOnDataLoss", ConfigType.BOOLEAN, True,
            documentation="Fail when records a query should read are gone (deleted topic, "
            "retention) or never arrive within readTimeoutMs; false logs a warning and "
            "skips them.")
    .define("groupId", ConfigType.STRING, None,
            documentation="Consumer group of a non-replayable transport, which reads in a "
            "group and commits on Spark's commit; default omconnect-spark-<topics>.")
    .define("groupPollTimeoutMs", ConfigType.LONG, 2_000, validators=[Range(min=1)],
            documentation="Non-replayable transports: how long the driver waits for the "
            "first record of a micro-batch; a Trigger.AvailableNow query ends after a poll "
            "this long brings nothing.")
    .define("readTimeoutMs", ConfigType.LONG, 120_000, validators=[Range(min=1)],
            documentation="How long reading an offset range waits for a record it expects.")
    .define("retryTimeoutMs", ConfigType.LONG, 60_000, validators=[Range(min=0)],
            documentation="How long a call to the transport is retried while it fails with "
            "a retriable error (a broker restarting) before the query fails.")
    .define("fetchMaxRecords", ConfigType.INT, 10_000, validators=[Range(min=1)],
            documentation="Records per poll of the transport and per Arrow batch handed to "
            "Spark.")
    .define("key.converter", ConfigType.STRING, None,
            documentation="Decode keys with this omconnect converter (string, json, avro, "
            "...; options as key.converter.<option>); unset: raw bytes.")
    .define("value.converter", ConfigType.STRING, None,
            documentation="Decode values with this omconnect converter (string, json, "
            "avro, ...; options as value.converter.<option>); unset: raw bytes.")
    .define("key.schema", ConfigType.STRING, None,
            documentation="The decoded key's fields as a Spark DDL column list "
            "('id BIGINT, name STRING') or StructType JSON; needed with a converter that "
            "yields structured values (json, avro).")
    .define("value.schema", ConfigType.STRING, None,
            documentation="The decoded value's fields as a Spark DDL column list or "
            "StructType JSON; needed with a converter that yields structured values.")
)
"""Options of ``spark.read`` / ``spark.readStream`` (besides ``<transport>.*``)."""

WRITE_CONFIG_DEF = (
    ConfigDef()
    .define("transport", ConfigType.STRING, "embedded", importance=Importance.HIGH,
            validators=[NonEmptyString()],
            documentation="The transport to write to; its options as `<transport>.<option>`.")
    .define("topic", ConfigType.STRING, None, importance=Importance.HIGH,
            documentation="Topic of rows without a `topic` column (or with a null one).")
    .define("idempotentWrites", ConfigType.BOOLEAN, True,
            documentation="Streaming writes: skip a (query, batch, partition) whose "
            "messages were all acknowledged before (a retried task or a replayed batch), "
            "using markers in the transport's key/value store.")
    .define("sendBatchSize", ConfigType.INT, 5_000, validators=[Range(min=1)],
            documentation="Messages per send to the transport.")
    .define("retryTimeoutMs", ConfigType.LONG, 60_000, validators=[Range(min=0)],
            documentation="How long opening a producer and reading or storing markers is "
            "retried while it fails with a retriable error (a broker restarting).")
    .define("writeMarkersNamespace", ConfigType.STRING, "omconnect-spark-writes",
            validators=[NonEmptyString()],
            documentation="Key/value store namespace holding the idempotent-write markers.")
)
"""Options of ``df.write`` / ``df.writeStream`` (besides ``<transport>.*``)."""

_SPARK_OWN_OPTIONS = frozenset({
    "path", "paths", "checkpointlocation", "queryname", "__path", "mode",
})
"""Keys Spark itself may put among a source's or sink's options."""

_CONVERTER_ROLES = ("key.converter", "value.converter")


@attrs.frozen(kw_only=True)
class TransportSettings:
    """Which transport to open and with what, as a worker configuration would say it.

    Picklable: readers and writers carry it to Spark's executors, which open their own
    clients from it.

    Attributes:
        name: The transport's name (``transport`` option).
        options: Its options without the ``<name>.`` prefix, keys spelled as the
            transport defines them.

    """

    name: str
    options: Mapping[str, Any]

    def worker_settings(self) -> dict[str, Any]:
        """The settings a worker configuration would hold for this transport."""
        return {"transport": self.name, **{f"{self.name}.{k}": v for k, v in self.options.items()}}

    def open(self) -> Transport:
        """A new instance of the transport, opened exactly as the standalone runtime does
        (:meth:`omconnect.runtime.worker_config.WorkerConfig.open_transport`).

        Raises:
            ConfigError: The transport or one of its options is invalid.

        """
        return WorkerConfig.parse(self.worker_settings()).open_transport()


@attrs.frozen(kw_only=True)
class OffsetSpec:
    """Where reading starts or stops.

    Attributes:
        kind: ``earliest``, ``latest`` or ``specific``.
        offsets: For ``specific``: an offset per partition, :data:`EARLIEST` (-2) and
            :data:`LATEST` (-1) allowed; partitions not listed use ``default``.
        default: What unlisted partitions of a ``specific`` spec use.

    """

    kind: Literal["earliest", "latest", "specific"]
    offsets: Mapping[TopicPartition, int] = attrs.field(factory=dict)
    default: int = EARLIEST

    def wanted(self, partition: TopicPartition) -> int:
        """The offset asked for ``partition``: a position, EARLIEST or LATEST."""
        if self.kind == "earliest":
            return EARLIEST
        if self.kind == "latest":
            return LATEST
        return self.offsets.get(partition, self.default)


def parse_offset_spec(
    text: str, *, option: str, topics: tuple[str, ...], default: int
) -> OffsetSpec:
    """Parse ``startingOffsets`` / ``endingOffsets``.

    Args:
        text: ``earliest``, ``latest`` or JSON such as ``{"orders":{"0":23,"1":-2}}``.
        option: The option's name, for messages.
        topics: The topics read; the JSON may only name these.
        default: What partitions the JSON does not list use (EARLIEST or LATEST).

    Raises:
        ConfigError: The text is neither keyword nor valid offsets JSON (naming
            ``option`` and showing the expected form).

    """
    stripped = text.strip()
    if stripped.lower() in ("earliest", "latest"):
        return OffsetSpec(kind=stripped.lower())  # type: ignore[arg-type]
    fix = f"write earliest, latest or JSON such as {_OFFSETS_EXAMPLE} (-2 earliest, -1 latest)"
    try:
        parsed = json.loads(stripped)
    except ValueError as exc:
        raise ConfigError(f"{option} is neither earliest, latest nor valid JSON ({exc}); {fix}",
                          key=option) from None
    if not isinstance(parsed, dict) or not parsed:
        raise ConfigError(f"{option} JSON must be a non-empty object of topics; {fix}",
                          key=option)
    offsets: dict[TopicPartition, int] = {}
    for topic, partitions in parsed.items():
        if topic not in topics:
            raise ConfigError(f"{option} names topic {topic!r}, which is not among topics "
                              f"{list(topics)}; add it to topics or remove it", key=option)
        if not isinstance(partitions, dict):
            raise ConfigError(f"{option}: topic {topic!r} must map partition numbers to "
                              f"offsets, got {partitions!r}; {fix}", key=option)
        for number, offset in partitions.items():
            if not (isinstance(number, str) and number.isdigit()):
                raise ConfigError(f"{option}: partition {number!r} of {topic!r} is not a "
                                  f"partition number; {fix}", key=option)
            if isinstance(offset, bool) or not isinstance(offset, int) or offset < EARLIEST:
                raise ConfigError(f"{option}: offset {offset!r} of {topic}-{number} must be "
                                  f"an integer >= 0, -2 (earliest) or -1 (latest)",
                                  key=option)
            offsets[TopicPartition(topic, int(number))] = offset
    return OffsetSpec(kind="specific", offsets=offsets, default=default)


@attrs.frozen(kw_only=True)
class Decoding:
    """How a key or value column is decoded.

    Attributes:
        role: ``key.converter`` or ``value.converter``.
        converter: The converter's name, or ``None`` for raw bytes.
        options: The converter's options (``<role>.*``, prefix removed).
        output: ``binary`` (raw bytes), ``string`` (text) or ``struct`` (fields of
            ``schema``).
        schema: For ``struct``: the Spark type of the column, as DDL.

    """

    role: str
    converter: str | None = None
    options: Mapping[str, Any] = attrs.field(factory=dict)
    output: Literal["binary", "string", "struct"] = "binary"
    schema: str | None = None

    @property
    def spark_type(self) -> str:
        """The column's Spark type, as DDL."""
        if self.output == "struct":
            assert self.schema is not None
            return self.schema
        return self.output.upper()


@attrs.frozen(kw_only=True)
class ReadOptions:
    """Parsed read options (see :data:`READ_CONFIG_DEF` for each one's meaning).

    Build with :meth:`parse`. Picklable.
    """

    transport: TransportSettings
    topics: tuple[str, ...]
    starting: OffsetSpec | None
    ending: OffsetSpec
    ending_given: bool
    max_records_per_trigger: int | None
    max_records_per_partition: int | None
    fail_on_data_loss: bool
    group_id: str
    group_poll_timeout_ms: int
    read_timeout_ms: int
    retry_timeout_ms: int
    fetch_max_records: int
    key: Decoding
    value: Decoding

    @classmethod
    def parse(cls, options: Mapping[str, Any]) -> ReadOptions:
        """Check and parse the options Spark gave the data source.

        Raises:
            ConfigError: Listing every bad option, each named with its fix.

        """
        known, transport, errors = _split(options, READ_CONFIG_DEF)
        for key, problems in READ_CONFIG_DEF.validate(known).items():
            errors.setdefault(key, []).extend(problems)
        topics: tuple[str, ...] = ()
        if not errors.get("topics"):
            topics = tuple(dict.fromkeys(READ_CONFIG_DEF.key("topics").type.parse(
                known["topics"])))
            if not topics:
                errors["topics"] = ["no topic given; set topics to a comma-separated list "
                                    "of topics, e.g. .option('topics', 'orders')"]
        specs: dict[str, OffsetSpec] = {}
        for option, default in (("startingOffsets", EARLIEST), ("endingOffsets", LATEST)):
            text = known.get(option)
            if text is None or errors.get(option) or not topics:
                continue
            try:
                specs[option] = parse_offset_spec(str(text), option=option, topics=topics,
                                                  default=default)
            except ConfigError as exc:
                errors.setdefault(option, []).append(exc.message)
        decodings: dict[str, Decoding] = {}
        for role in _CONVERTER_ROLES:
            try:
                decodings[role] = _decoding(role, known, options)
            except ConfigError as exc:
                errors.setdefault(str(exc.context.get("key") or role), []).append(exc.message)
        if any(errors.values()):
            raise ConfigError.from_errors(errors, what="omconnect data source options")
        values = READ_CONFIG_DEF.parse(known)
        starting = specs.get("startingOffsets")
        ending = specs.get("endingOffsets", OffsetSpec(kind="latest"))
        group_id = values["groupId"] or "omconnect-spark-" + "-".join(topics)
        return cls(transport=transport, topics=topics, starting=starting, ending=ending,
                   ending_given="endingOffsets" in specs,
                   max_records_per_trigger=values["maxRecordsPerTrigger"],
                   max_records_per_partition=values["maxRecordsPerPartition"],
                   fail_on_data_loss=values["failOnDataLoss"], group_id=group_id,
                   group_poll_timeout_ms=values["groupPollTimeoutMs"],
                   read_timeout_ms=values["readTimeoutMs"],
                   retry_timeout_ms=values["retryTimeoutMs"],
                   fetch_max_records=values["fetchMaxRecords"],
                   key=decodings["key.converter"], value=decodings["value.converter"])

    def check_batch(self) -> None:
        """Refuse offsets a batch read cannot use (as Spark's Kafka source does).

        Raises:
            ConfigError: ``startingOffsets`` is latest (-1 for a partition) or
                ``endingOffsets`` is earliest (-2 for a partition).

        """
        starting, ending = self.starting, self.ending
        if starting is not None and (starting.kind == "latest"
                                     or LATEST in starting.offsets.values()):
            raise ConfigError("startingOffsets latest (-1) is not allowed in a batch read, "
                              "which would read nothing; use earliest or offsets",
                              key="startingOffsets")
        if ending.kind == "earliest" or EARLIEST in ending.offsets.values():
            raise ConfigError("endingOffsets earliest (-2) is not allowed in a batch read, "
                              "which would read nothing; use latest or offsets",
                              key="endingOffsets")

    def spark_schema(self) -> str:
        """The DDL of the columns a read yields."""
        return (f"key {self.key.spark_type}, value {self.value.spark_type}, topic STRING, "
                "partition INT, offset BIGINT, timestamp TIMESTAMP, "
                "headers ARRAY<STRUCT<key: STRING, value: BINARY>>")


@attrs.frozen(kw_only=True)
class WriteOptions:
    """Parsed write options (see :data:`WRITE_CONFIG_DEF`). Picklable."""

    transport: TransportSettings
    topic: str | None
    idempotent_writes: bool
    send_batch_size: int
    markers_namespace: str
    retry_timeout_ms: int

    @classmethod
    def parse(cls, options: Mapping[str, Any]) -> WriteOptions:
        """Check and parse the options Spark gave the sink.

        Raises:
            ConfigError: Listing every bad option, each named with its fix.

        """
        known, transport, errors = _split(options, WRITE_CONFIG_DEF)
        for key, problems in WRITE_CONFIG_DEF.validate(known).items():
            errors.setdefault(key, []).extend(problems)
        if any(errors.values()):
            raise ConfigError.from_errors(errors, what="omconnect data source options")
        values = WRITE_CONFIG_DEF.parse(known)
        return cls(transport=transport, topic=values["topic"] or None,
                   idempotent_writes=values["idempotentWrites"],
                   send_batch_size=values["sendBatchSize"],
                   markers_namespace=values["writeMarkersNamespace"],
                   retry_timeout_ms=values["retryTimeoutMs"])


def _split(
    options: Mapping[str, Any], definition: ConfigDef
) -> tuple[dict[str, Any], TransportSettings, dict[str, list[str]]]:
    """Sort Spark's options into the data source's own (spelled as ``definition`` spells
    them, converter options included), the transport's, and problems found on the way.
    """
    errors: dict[str, list[str]] = {}
    spelled = {name.lower(): name for name in definition.names()}
    raw = {str(k).lower(): v for k, v in options.items()}
    name = str(raw.get("transport") or "embedded").strip()
    transport_class = _transport_class(name)
    prefix = name.lower() + "."
    transport_spelled = ({key.name.lower(): key.name for key in transport_class.config_def}
                         if transport_class is not None else {})
    other_prefixes = tuple(f"{other.lower()}." for other in plugins.available(plugins.TRANSPORTS)
                           if other.lower() != name.lower())
    known: dict[str, Any] = {}
    transport_options: dict[str, Any] = {}
    for key, value in raw.items():
        if key in spelled:
            known[spelled[key]] = value
        elif key.startswith(prefix):
            option = key[len(prefix):]
            close = ([] if option in transport_spelled else difflib.get_close_matches(
                option, list(transport_spelled), n=1, cutoff=0.8))
            if close:
                errors.setdefault(key, []).append(
                    f"unknown option of transport {name}; did you mean "
                    f"{name}.{transport_spelled[close[0]]}?")
            transport_options[transport_spelled.get(option, option)] = value
        elif key in _CONVERTER_ROLES or key.startswith(
                tuple(role + "." for role in _CONVERTER_ROLES)):
            if "key.converter" in definition:
                known[key] = value
            else:
                errors.setdefault(key, []).append(
                    "converters apply to reads only; encode the column in Spark instead "
                    "(e.g. to_json) and remove this option")
        elif key in _SPARK_OWN_OPTIONS or key.startswith(other_prefixes):
            continue
        else:
            close = difflib.get_close_matches(key, list(spelled), n=1, cutoff=0.75)
            if close:
                errors.setdefault(key, []).append(
                    f"unknown option; did you mean {spelled[close[0]]}?")
    settings = TransportSettings(name=name, options=transport_options)
    try:
        WorkerConfig.parse(settings.worker_settings())
    except ConfigError as exc:
        for key, problems in (exc.errors or {str(exc.context.get("key") or "transport"):
                                            [exc.message]}).items():
            errors.setdefault(key, []).extend(problems)
    return known, settings, errors


def _transport_class(name: str) -> type[Transport] | None:
    try:
        loaded = plugins.load(plugins.TRANSPORTS, name)
    except PluginError:
        return None  # WorkerConfig.parse reports it, with its did-you-mean
    return loaded if isinstance(loaded, type) and issubclass(loaded, Transport) else None


def _decoding(role: str, known: Mapping[str, Any], options: Mapping[str, Any]) -> Decoding:
    """The decoding of ``role`` (``key.converter`` / ``value.converter``)."""
    side = role.split(".")[0]
    schema_option = f"{side}.schema"
    name = known.get(role)
    schema_text = known.get(schema_option)
    if not name:
        if schema_text:
            raise ConfigError(f"{schema_option} needs {role} (the converter that decodes "
                              f"the {side}), e.g. {role}=json", key=schema_option)
        return Decoding(role=role)
    name = str(name).strip()
    converter_options = {k[len(role) + 1:]: v for k, v in known.items()
                         if k.startswith(role + ".")}
    problems = converter_config_errors({role: name, **{f"{role}.{k}": v for k, v in
                                                       converter_options.items()}})
    problems = {k: v for k, v in problems.items() if v}
    if problems:
        key, messages = next(iter(problems.items()))
        raise ConfigError("; ".join(messages), key=key)
    output = _converter_output(name)
    if output == "struct":
        if not schema_text:
            raise ConfigError(f"{schema_option} is needed with {role}={name}: give the "
                              f"{side}'s fields as Spark DDL, e.g. "
                              f"'id BIGINT, name STRING'", key=schema_option)
        return Decoding(role=role, converter=name, options=converter_options,
                        output="struct", schema=_struct_ddl(str(schema_text), schema_option))
    if schema_text:
        raise ConfigError(f"{schema_option} does not apply to {role}={name}, which yields "
                          f"{output}; remove it", key=schema_option)
    return Decoding(role=role, converter=name, options=converter_options, output=output)


def _converter_output(name: str) -> Literal["binary", "string", "struct"]:
    """What a converter's values become as a column."""
    from omconnect.converters.bytearray import ByteArrayConverter
    from omconnect.converters.string import StringConverter

    loaded = plugins.load(plugins.CONVERTERS, name)
    if isinstance(loaded, type) and issubclass(loaded, StringConverter):
        return "string"
    if isinstance(loaded, type) and issubclass(loaded, ByteArrayConverter):
        return "binary"
    return "struct"


def _struct_ddl(text: str, option: str) -> str:
    """``text`` (a DDL column list or StructType JSON) as a ``STRUCT<...>`` DDL type."""
    stripped = text.strip()
    if stripped.startswith("{"):
        from pyspark.sql.types import StructType

        try:
            struct = StructType.fromJson(json.loads(stripped))
        except (ValueError, KeyError, TypeError) as exc:
            raise ConfigError(f"{option} is not a valid StructType JSON ({exc}); give a DDL "
                              "column list such as 'id BIGINT, name STRING' instead",
                              key=option) from None
        return struct.simpleString()
    if stripped.lower().startswith("struct<"):
        return stripped
    return f"STRUCT<{stripped}>"

