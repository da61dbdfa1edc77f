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
import logging
import re
from collections.abc import Mapping
from typing import Any

import attrs

from omconnect import plugins
from omconnect.config import ConfigDef, ConfigType, Importance, NonEmptyString, OneOf, Range
from omconnect.errors import ConfigError, PluginError
from omconnect.transport.opening import open_transport, transport_config_errors
from omconnect.transport.spi import Transport
from omconnect_spark.decoding import Decoding, decoding_of
from omconnect_spark.offset_specs import (
    EARLIEST,
    LATEST,
    OFFSETS_EXAMPLE,
    OffsetSpec,
    ending_spec,
    parse_offset_spec,
    starting_spec,
)
from omconnect_spark.topic_selection import TopicSelection, parse_assign

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
    "parse_duration_ms",
    "parse_offset_spec",
]

_log = logging.getLogger(__name__)

READ_CONFIG_DEF = (
    ConfigDef()
    .define("transport", ConfigType.STRING, "embedded", importance=Importance.HIGH,
            validators=[NonEmptyString()],
            documentation="The transport to read: embedded, memory, kafka, rabbitmq, pulsar, redis "
            "or a Python path; its options are given as `<transport>.<option>`.")
    .define("subscribe", ConfigType.LIST, None, importance=Importance.HIGH,
            documentation="Comma-separated topics to read (Spark's Kafka source name; "
            "`topics` is the same). One of subscribe, subscribePattern, assign.")
    .define("topics", ConfigType.LIST, None, importance=Importance.HIGH,
            documentation="The same as subscribe.")
    .define("subscribePattern", ConfigType.STRING, None, importance=Importance.HIGH,
            documentation="Read every topic whose whole name matches this regular "
            "expression; looked up again at every trigger (needs a transport that lists "
            "topics).")
    .define("assign", ConfigType.STRING, None, importance=Importance.HIGH,
            documentation='Read exactly these partitions: JSON such as {"orders":[0,1]}.')
    .define("missingTopics", ConfigType.STRING, "fail",
            validators=[OneOf(("fail", "wait"))],
            documentation="A topic of subscribe that does not exist: fail (an error naming "
            "it) or wait (streams: its partitions join the query once it exists).")
    .define("startingOffsets", ConfigType.STRING, None, importance=Importance.HIGH,
            documentation="Where a new query starts: earliest, latest or JSON per partition "
            f"such as {OFFSETS_EXAMPLE} (-2 earliest, -1 latest). Default: latest for "
            "streaming, earliest for batch. A restarted query resumes from its checkpoint.")
    .define("startingTimestamp", ConfigType.LONG, None, validators=[Range(min=0)],
            documentation="Start every partition at the earliest record whose timestamp "
            "(ms since the epoch) is at or after this; takes precedence over "
            "startingOffsetsByTimestamp and startingOffsets.")
    .define("startingOffsetsByTimestamp", ConfigType.STRING, None,
            documentation='A timestamp per partition, JSON such as {"orders":{"0":'
            '1700000000000}}; partitions not listed start at the latest offset (streams) '
            "or the earliest (batch). Takes precedence over startingOffsets.")
    .define("startingOffsetsByTimestampStrategy", ConfigType.STRING, "error",
            validators=[OneOf(("error", "latest"))],
            documentation="A partition with no record at or after its starting timestamp: "
            "error fails the query, latest starts at its end.")
    .define("endingOffsets", ConfigType.STRING, "latest",
            documentation="Batch reads only: where reading stops (exclusive): latest or "
            "JSON per partition (-1 latest).")
    .define("endingTimestamp", ConfigType.LONG, None, validators=[Range(min=0)],
            documentation="Batch reads only: stop every partition at the earliest record "
            "whose timestamp is at or after this (its end when none is).")
    .define("endingOffsetsByTimestamp", ConfigType.STRING, None,
            documentation="Batch reads only: a timestamp per partition, as "
            "startingOffsetsByTimestamp.")
    .define("maxRecordsPerTrigger", ConfigType.LONG, None, validators=[Range(min=1)],
            documentation="Most records one micro-batch reads, shared among partitions in "
            "proportion to their backlog (Spark's ReadMaxRows).")
    .define("maxOffsetsPerTrigger", ConfigType.LONG, None, validators=[Range(min=1)],
            documentation="Spark's Kafka source name of maxRecordsPerTrigger.")
    .define("minOffsetsPerTrigger", ConfigType.LONG, None, validators=[Range(min=1)],
            documentation="Streams: wait with the next micro-batch until this many new "
            "records are there, or maxTriggerDelay passed since the last one.")
    .define("maxTriggerDelay", ConfigType.STRING, "15m",
            documentation="With minOffsetsPerTrigger: the longest a micro-batch waits "
            "(e.g. 30s, 15m, 1h, or milliseconds).")
    .define("minPartitions", ConfigType.INT, None, validators=[Range(min=1)],
            documentation="At least this many Spark partitions per batch: large partition "
            "ranges are split (as Spark's Kafka source does).")
    .define("maxRecordsPerPartition", ConfigType.LONG, None, validators=[Range(min=1)],
            documentation="Split a partition's offset range into Spark partitions of at "
            "most this many records (more parallelism for few, large partitions).")
    .define("includeHeaders", ConfigType.BOOLEAN, True,
            documentation="Include the headers column (true by default here, false in "
            "Spark's Kafka source).")
    .define("failOnDataLoss", ConfigType.BOOLEAN, True,
            documentation="Fail when records a query should read are gone (deleted topic, "
            "retention) or never arrive within readTimeoutMs; false logs a warning and "
            "skips them.")
    .define("groupId", ConfigType.STRING, None,
            documentation="Consumer group of a non-replayable transport, which reads in a "
            "group and commits on Spark's commit; default <groupIdPrefix>-<topics>.")
    .define("groupIdPrefix", ConfigType.STRING, "omconnect-spark",
            validators=[NonEmptyString()],
            documentation="Prefix of the default groupId (Spark's Kafka source name).")
    .define("groupPollTimeoutMs", ConfigType.LONG, 2_000, validators=[Range(min=1)],
            documentation="Non-replayable transports: how long the driver waits for the "
            "first record of a micro-batch; a Trigger.AvailableNow query ends after a poll "
            "this long brings nothing.")
    .define("readTimeoutMs", ConfigType.LONG, 120_000, validators=[Range(min=1)],
            documentation="How long reading an offset range waits for a record it expects.")
    .define("kafkaConsumer.pollTimeoutMs", ConfigType.LONG, None, validators=[Range(min=1)],
            documentation="Spark's Kafka source name of readTimeoutMs.")
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

_REFUSED: dict[str, str] = {
    "fetchoffset.numretries": "not supported: looking up offsets is retried for "
    "retryTimeoutMs instead; set that",
    "fetchoffset.retryintervalms": "not supported: looking up offsets is retried with a "
    "backoff for retryTimeoutMs instead; set that",
    "kafka.bootstrap.servers": "this source reads any transport; to read Kafka, also set "
    "transport=kafka (kafka.* options apply only then)",
}
"""Options of Spark's Kafka source this source refuses (lower case), with the reason."""


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
        (:func:`omconnect.transport.opening.open_transport`).

        Raises:
            ConfigError: The transport or one of its options is invalid.

        """
        return open_transport(self.worker_settings())


@attrs.frozen(kw_only=True)
class ReadOptions:
    """Parsed read options (see :data:`READ_CONFIG_DEF` for each one's meaning).

    Build with :meth:`parse`. Picklable.
    """

    transport: TransportSettings
    selection: TopicSelection
    starting: OffsetSpec | None
    ending: OffsetSpec
    ending_given: bool
    max_records_per_trigger: int | None
    min_records_per_trigger: int | None
    max_trigger_delay_ms: int
    min_partitions: int | None
    max_records_per_partition: int | None
    fail_on_data_loss: bool
    include_headers: bool
    group_id: str
    group_poll_timeout_ms: int
    read_timeout_ms: int
    retry_timeout_ms: int
    fetch_max_records: int
    key: Decoding
    value: Decoding

    @property
    def topics(self) -> tuple[str, ...]:
        """The topics named by ``subscribe`` or ``assign`` (empty for a pattern)."""
        return self.selection.topics

    @classmethod
    def parse(cls, options: Mapping[str, Any]) -> ReadOptions:
        """Check and parse the options Spark gave the data source.

        Raises:
            ConfigError: Listing every bad option, each named with its fix.

        """
        known, transport, errors = _split(options, READ_CONFIG_DEF)
        for key, problems in READ_CONFIG_DEF.validate(known).items():
            errors.setdefault(key, []).extend(problems)
        selection = _selection(known, errors)
        covers = selection.covers_topic if selection is not None else (lambda _: True)
        specs: dict[str, OffsetSpec] = {}
        for option, default, timestamps in (
                ("startingOffsets", EARLIEST, False), ("endingOffsets", LATEST, False),
                ("startingOffsetsByTimestamp", EARLIEST, True),
                ("endingOffsetsByTimestamp", LATEST, True)):
            text = known.get(option)
            if text is None or errors.get(option) or selection is None:
                continue
            try:
                specs[option] = parse_offset_spec(str(text), option=option, covers=covers,
                                                  default=default, timestamps=timestamps)
            except ConfigError as exc:
                errors.setdefault(option, []).append(exc.message)
        delay = None
        try:
            delay = parse_duration_ms(str(known.get("maxTriggerDelay") or "15m"),
                                      option="maxTriggerDelay")
        except ConfigError as exc:
            errors.setdefault("maxTriggerDelay", []).append(exc.message)
        decodings: dict[str, Decoding] = {}
        for role in _CONVERTER_ROLES:
            try:
                decodings[role] = decoding_of(role, known, options)
            except ConfigError as exc:
                errors.setdefault(str(exc.context.get("key") or role), []).append(exc.message)
        if any(errors.values()):
            raise ConfigError.from_errors(errors, what="omconnect data source options")
        assert selection is not None and delay is not None
        values = READ_CONFIG_DEF.parse(known)
        strategy = values["startingOffsetsByTimestampStrategy"]
        starting = starting_spec(values, specs, strategy)
        ending = ending_spec(values, specs)
        group_id = values["groupId"] or "-".join(
            (values["groupIdPrefix"], *(selection.topics or (selection.pattern or "",))))
        return cls(transport=transport, selection=selection, starting=starting,
                   ending=ending,
                   ending_given=any(k in specs for k in ("endingOffsets",
                                                         "endingOffsetsByTimestamp"))
                   or values["endingTimestamp"] is not None,
                   max_records_per_trigger=values["maxRecordsPerTrigger"]
                   or values["maxOffsetsPerTrigger"],
                   min_records_per_trigger=values["minOffsetsPerTrigger"],
                   max_trigger_delay_ms=delay,
                   min_partitions=values["minPartitions"],
                   max_records_per_partition=values["maxRecordsPerPartition"],
                   fail_on_data_loss=values["failOnDataLoss"],
                   include_headers=values["includeHeaders"], group_id=group_id,
                   group_poll_timeout_ms=values["groupPollTimeoutMs"],
                   read_timeout_ms=values["kafkaConsumer.pollTimeoutMs"]
                   or values["readTimeoutMs"],
                   retry_timeout_ms=values["retryTimeoutMs"],
                   fetch_max_records=values["fetchMaxRecords"],
                   key=decodings["key.converter"], value=decodings["value.converter"])

    def check_batch(self) -> None:
        """Refuse what a batch read cannot use (as Spark's Kafka source does).

        Raises:
            ConfigError: ``startingOffsets`` is latest (-1 for a partition),
                ``endingOffsets`` is earliest (-2 for a partition), ``missingTopics`` is
                wait, or ``minOffsetsPerTrigger`` is set.

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
        if self.selection.wait_for_missing:
            raise ConfigError("missingTopics=wait applies to streams; a batch read of a "
                              "missing topic fails (remove missingTopics)", key="missingTopics")
        if self.min_records_per_trigger is not None:
            raise ConfigError("minOffsetsPerTrigger applies to streams (a batch read has no "
                              "triggers); remove it", key="minOffsetsPerTrigger")

    def check_stream(self) -> None:
        """Refuse what a stream cannot use.

        Raises:
            ConfigError: An ending option is set (streams do not end).

        """
        if self.ending_given:
            raise ConfigError("endingOffsets, endingTimestamp and endingOffsetsByTimestamp "
                              "apply to batch reads only; a streaming query does not end "
                              "(use Trigger.AvailableNow to stop at what is there now): "
                              "remove them", key="endingOffsets")

    def spark_schema(self) -> str:
        """The DDL of the columns a read yields."""
        headers = (", headers ARRAY<STRUCT<key: STRING, value: BINARY>>"
                   if self.include_headers else "")
        return (f"key {self.key.spark_type}, value {self.value.spark_type}, topic STRING, "
                f"partition INT, offset BIGINT, timestamp TIMESTAMP{headers}")


def _selection(known: Mapping[str, Any], errors: dict[str, list[str]]
               ) -> TopicSelection | None:
    """The topic selection of the options (``None`` after recording a problem)."""
    given = [option for option in ("subscribe", "topics", "subscribePattern", "assign")
             if known.get(option) not in (None, "", [])]
    if "subscribe" in given and "topics" in given:
        errors.setdefault("topics", []).append(
            "topics and subscribe are the same option; give one")
        return None
    choices = {("subscribe" if g == "topics" else g) for g in given}
    if len(choices) != 1:
        what = (f"{', '.join(sorted(choices))} are given" if choices else "none is given")
        errors.setdefault("subscribe", []).append(
            f"give exactly one of subscribe (or topics), subscribePattern and assign; "
            f"{what}")
        return None
    wait = str(known.get("missingTopics") or "fail").lower() == "wait"
    if "subscribePattern" in given:
        pattern = str(known["subscribePattern"])
        try:
            re.compile(pattern)
        except re.error as exc:
            errors.setdefault("subscribePattern", []).append(
                f"is not a regular expression ({exc})")
            return None
        return TopicSelection(kind="pattern", pattern=pattern)
    if "assign" in given:
        try:
            assigned = parse_assign(str(known["assign"]))
        except ConfigError as exc:
            errors.setdefault("assign", []).append(exc.message)
            return None
        return TopicSelection(kind="assign", assigned=assigned,
                              topics=tuple(dict.fromkeys(tp.topic for tp in assigned)))
    option = "subscribe" if "subscribe" in given else "topics"
    topics = tuple(dict.fromkeys(READ_CONFIG_DEF.key(option).type.parse(known[option])))
    if not topics:
        errors.setdefault(option, []).append(
            "no topic given; set subscribe to a comma-separated list of topics, e.g. "
            ".option('subscribe', 'orders')")
        return None
    return TopicSelection(kind="subscribe", topics=topics, wait_for_missing=wait)


_DURATION = re.compile(r"^\s*(\d+)\s*(ms|s|m|min|h|d)?\s*$", re.IGNORECASE)
_UNIT_MS = {"ms": 1, "s": 1000, "m": 60_000, "min": 60_000, "h": 3_600_000,
            "d": 86_400_000}


def parse_duration_ms(text: str, *, option: str) -> int:
    """Milliseconds of a duration such as ``15m``, ``30s``, ``1h`` or ``500`` (ms).

    Raises:
        ConfigError: Not such a duration.

    """
    match = _DURATION.match(text)
    if not match:
        raise ConfigError(f"{option} {text!r} is not a duration; write e.g. 30s, 15m, 1h "
                          "or milliseconds", key=option)
    return int(match.group(1)) * _UNIT_MS[(match.group(2) or "ms").lower()]


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
        elif key in _SPARK_OWN_OPTIONS:
            continue
        elif key in _REFUSED:
            errors.setdefault(key, []).append(_REFUSED[key])
        elif key.startswith(other_prefixes):
            _log.warning("option %s is for another transport than %s; ignored", key, name)
        else:
            close = difflib.get_close_matches(key, list(spelled), n=1, cutoff=0.75)
            hint = (f"did you mean {spelled[close[0]]}?" if close else
                    "see the option table in docs/spark.md")
            errors.setdefault(key, []).append(f"unknown option of the omconnect source; {hint}")
    settings = TransportSettings(name=name, options=transport_options)
    for key, problems in transport_config_errors(settings.worker_settings())[1].items():
        errors.setdefault(key, []).extend(problems)
    return known, settings, errors


def _transport_class(name: str) -> type[Transport] | None:
    try:
        loaded = plugins.load(plugins.TRANSPORTS, name)
    except PluginError:
        return None  # transport_config_errors reports it, with its did-you-mean
    return loaded if isinstance(loaded, type) and issubclass(loaded, Transport) else None


