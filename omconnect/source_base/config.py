"""The settings every source on the iterator base takes: a ConfigDef fragment to merge
into a connector's own, and :class:`SourceCommonConfig`, the parsed value object.

A connector declares ``config_def()`` as ``common_config_def().merge(own_keys)`` and its
task's ``configure`` returns ``SourceCommonConfig.from_config(config)`` (or a subclass
built with ``from_config(config, own_field=...)``). ``tasks.max`` and ``errors.tolerance``
are the runtime's keys and are not redefined here; ``tasks.max`` is read from the task
config, where :func:`~omconnect.source_base.distribution.task_configs` puts it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self

import attrs

from omconnect.config.definition import ConfigDef
from omconnect.config.types import ConfigType, Importance
from omconnect.config.validators import OneOf, Range
from omconnect.errors import ConfigError, DataError
from omconnect.source_base.backoff import MAX_IDLE_DELAY, BackoffConfig
from omconnect.source_base.distribution import (
    DISTRIBUTION_TYPES,
    DistributionStrategy,
    HashDistribution,
    create_distribution,
)
from omconnect.source_base.formats import (
    COMPRESSIONS,
    FORMATS,
    KeySource,
    RecordFormat,
    create_format,
)
from omconnect.source_base.formats.bytes import DEFAULT_CHUNK_SIZE, BytesFormat

__all__ = ["SourceCommonConfig", "common_config_def"]

_MAX_IDLE_MS = int(MAX_IDLE_DELAY * 1000)


def common_config_def() -> ConfigDef:
    """A new ConfigDef with the keys every iterator-style source takes."""
    poll, tasks, fmt = "Source polling", "Task distribution", "Input format"
    return (
        ConfigDef()
        .define("max.poll.records", ConfigType.INT, 500, validators=[Range(min=1)],
                group=poll, documentation="Most records one poll returns.")
        .define("poll.timeout.ms", ConfigType.LONG, 1000, validators=[Range(min=1, max=60000)],
                group=poll, documentation="Longest a poll gathers records or waits out an "
                "idle backoff before returning what it has.")
        .define("poll.backoff.initial.ms", ConfigType.LONG, 100,
                validators=[Range(min=1, max=_MAX_IDLE_MS)], group=poll,
                documentation="First wait after the source found nothing to read; doubles "
                "per consecutive empty read, reset by data.")
        .define("poll.backoff.max.ms", ConfigType.LONG, _MAX_IDLE_MS,
                validators=[Range(min=1, max=_MAX_IDLE_MS)], group=poll,
                documentation="Longest wait between empty reads (at most 5000).")
        .define("task.id", ConfigType.INT, 0, validators=[Range(min=0)], group=tasks,
                importance=Importance.LOW,
                documentation="This task's number, 0 to tasks.max - 1; set by the connector "
                "in each task config, not by users.")
        .define("distribution.type", ConfigType.STRING, "hash",
                validators=[OneOf(DISTRIBUTION_TYPES)], group=tasks,
                documentation="How objects are assigned to tasks: hash (a stable hash of "
                "the name) or partition (the integer captured by the 'partition' group of "
                "file.name.pattern).")
        .define("file.name.pattern", ConfigType.STRING, None, group=tasks,
                documentation="Regular expression searched in object names; names without "
                "a match are not read. Required for distribution.type=partition, with a "
                "named group 'partition', e.g. (?P<partition>\\d+)-\\d+\\.jsonl$.")
        .define("input.format", ConfigType.STRING, "bytes", validators=[OneOf(tuple(FORMATS))],
                importance=Importance.HIGH, group=fmt,
                documentation="Format of the objects: jsonl, csv, avro, parquet or bytes.")
        .define("file.compression.type", ConfigType.STRING, "auto",
                validators=[OneOf(COMPRESSIONS)], group=fmt,
                documentation="Compression of the objects: auto (by extension: .gz, .zst, "
                ".bz2, .xz), none, gzip, zstd, bz2 or xz.")
        .define("input.encoding", ConfigType.STRING, "utf-8", group=fmt,
                documentation="Text encoding of jsonl and csv objects.")
        .define("record.key", ConfigType.STRING, KeySource.OBJECT.value,
                validators=[OneOf(tuple(k.value for k in KeySource))], group=fmt,
                documentation="Record key: object (the object's name), field (the value "
                "field named by record.key.field) or none.")
        .define("record.key.field", ConfigType.STRING, None, group=fmt,
                documentation="The value field used as key when record.key=field.")
        .define("csv.delimiter", ConfigType.STRING, ",", group=fmt,
                documentation="CSV field separator (one character).")
        .define("csv.quote.char", ConfigType.STRING, '"', group=fmt,
                documentation="CSV quote character.")
        .define("csv.header", ConfigType.BOOLEAN, True, group=fmt,
                documentation="Whether the first CSV row names the columns.")
        .define("csv.column.names", ConfigType.LIST, [], group=fmt,
                documentation="CSV column names, replacing the header's (or naming the "
                "columns of files without one); default column1, column2, ... without.")
        .define("csv.column.types", ConfigType.LIST, [], group=fmt,
                documentation="Typed CSV columns as column:type, e.g. id:int64,price:float64; "
                "types string, int8, int16, int32, int64, float32, float64, boolean. Other "
                "columns are optional strings.")
        .define("bytes.chunk.size", ConfigType.INT, DEFAULT_CHUNK_SIZE,
                validators=[Range(min=1)], group=fmt,
                documentation="Most bytes per record for input.format=bytes.")
        .define("parquet.batch.size", ConfigType.INT, 4096, validators=[Range(min=1)],
                group=fmt, documentation="Rows read from a Parquet file at a time.")
    )


def _parse_tasks_max(config: Mapping[str, Any]) -> int:
    try:
        value = ConfigType.INT.parse(config.get("tasks.max", 1))
    except DataError as exc:
        raise ConfigError(f"{exc}; fix the value of tasks.max", key="tasks.max") from None
    return 1 if value is None else int(value)


@attrs.frozen(kw_only=True)
class SourceCommonConfig:
    """The parsed common settings of an iterator-style source task.

    Subclass it (``@attrs.frozen(kw_only=True)``) to add a connector's own fields, and
    build it with :meth:`from_config`.

    Attributes:
        max_poll_records: Most records per poll (``max.poll.records``).
        poll_timeout: Longest a poll takes, in seconds (``poll.timeout.ms``).
        backoff: The idle backoff profile (``poll.backoff.*``).
        task_id: This task's number (``task.id``).
        max_tasks: How many tasks share the objects (``tasks.max``).
        distribution: Which objects this task reads (``distribution.type``,
            ``file.name.pattern``).
        record_format: Turns an object's bytes into records (``input.format`` and its
            options).
        compression: ``file.compression.type``.
        settings: Every setting as parsed, including keys this class does not know.

    """

    max_poll_records: int = 500
    poll_timeout: float = 1.0
    backoff: BackoffConfig = attrs.field(factory=BackoffConfig)
    task_id: int = 0
    max_tasks: int = 1
    distribution: DistributionStrategy = attrs.field(
        factory=lambda: HashDistribution(1), eq=False)
    record_format: RecordFormat = attrs.field(factory=BytesFormat, eq=False)
    compression: str = "auto"
    settings: Mapping[str, Any] = attrs.field(factory=dict, eq=False, repr=False)

    @classmethod
    def from_config(cls, config: Mapping[str, Any], **fields: Any) -> Self:
        """Parse the common keys of ``config`` (strings or typed values) and check them
        together.

        Args:
            config: The task config.
            **fields: A subclass's own fields.

        Raises:
            ConfigError: Listing every bad key with its fix.

        """
        parsed = common_config_def().parse(config, what="source configuration")
        errors: dict[str, list[str]] = {}

        def problem(key: str, exc: Exception) -> None:
            message = exc.message if isinstance(exc, ConfigError) else str(exc)
            errors.setdefault(key, []).append(message)

        max_tasks = _parse_tasks_max(config)
        task_id = parsed["task.id"]
        if task_id >= max_tasks:
            errors["task.id"] = [f"task.id {task_id} must be below tasks.max ({max_tasks})"]
        if parsed["poll.backoff.initial.ms"] > parsed["poll.backoff.max.ms"]:
            errors["poll.backoff.initial.ms"] = [
                "must not exceed poll.backoff.max.ms "
                f"({parsed['poll.backoff.max.ms']}); lower it"]
        distribution: DistributionStrategy | None = None
        try:
            distribution = create_distribution(parsed["distribution.type"], max_tasks,
                                               parsed["file.name.pattern"])
        except ConfigError as exc:
            problem(exc.context.get("key", "distribution.type"), exc)
        record_format: RecordFormat | None = None
        try:
            record_format = _record_format(parsed)
        except ConfigError as exc:
            problem(exc.context.get("key", "input.format"), exc)
        except ValueError as exc:
            problem("input.format", exc)
        if errors:
            raise ConfigError.from_errors(errors, what="source configuration")
        assert distribution is not None and record_format is not None
        return cls(
            max_poll_records=parsed["max.poll.records"],
            poll_timeout=parsed["poll.timeout.ms"] / 1000,
            backoff=BackoffConfig(initial_delay=parsed["poll.backoff.initial.ms"] / 1000,
                                  max_delay=parsed["poll.backoff.max.ms"] / 1000),
            task_id=task_id,
            max_tasks=max_tasks,
            distribution=distribution,
            record_format=record_format,
            compression=parsed["file.compression.type"].lower(),
            settings=parsed,
            **fields,
        )

    def is_assigned(self, name: str) -> bool:
        """Whether this task reads object ``name`` (per the distribution strategy)."""
        return self.distribution.task_for(name) == self.task_id


def _record_format(parsed: Mapping[str, Any]) -> RecordFormat:
    name = parsed["input.format"].lower()
    options: dict[str, Any] = {
        "key_source": KeySource(parsed["record.key"].lower()),
        "key_field": parsed["record.key.field"],
    }
    if name in ("jsonl", "csv"):
        options["encoding"] = parsed["input.encoding"]
    if name == "csv":
        options.update(delimiter=parsed["csv.delimiter"], quote_char=parsed["csv.quote.char"],
                       header=parsed["csv.header"], column_names=parsed["csv.column.names"],
                       column_types=parsed["csv.column.types"])
    elif name == "bytes":
        options["chunk_size"] = parsed["bytes.chunk.size"]
    elif name == "parquet":
        options["batch_size"] = parsed["parquet.batch.size"]
    return create_format(name, **options)
