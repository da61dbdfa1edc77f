"""The object-store source's settings: the common iterator-source keys plus its own.

Its own keys:

=================================  ===========================================================
``objectstore.url``                the root URL (required): ``file:///data/in``, ``/data/in``,
                                   ``s3://bucket/prefix``...
``objectstore.storage.options.*``  passed to the fsspec filesystem; dots nest
                                   (``...client_kwargs.endpoint_url``)
``objectstore.name.glob``          only names matching it are read
``objectstore.recursive``          list sub-directories too (default true)
``objectstore.list.interval.ms``   shortest time between two listings (default 1000)
``objectstore.record.headers``     add the object's name and line to every record
``topic``                          the topic, or a template (see :mod:`.topics`)
=================================  ===========================================================

``errors.tolerance`` (the runtime's key) is read from the task config: ``all`` hands a
malformed record to the runtime as an errant record (dead-letter topic), ``none`` fails
the task naming the object and line.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

import attrs

from omconnect.config import ConfigDef, ConfigType, Importance, NonEmptyString, Range
from omconnect.errors import ConfigError
from omconnect.source_base import SourceCommonConfig, common_config_def
from omconnect_objectstore.store import glob_filter
from omconnect_objectstore.topics import TopicTemplate

__all__ = [
    "CONFIG_DEF",
    "OBJECTSTORE_CONFIG_DEF",
    "STORAGE_OPTIONS_PREFIX",
    "ObjectStoreConfig",
    "parse_config",
    "storage_options",
]

URL = "objectstore.url"
STORAGE_OPTIONS_PREFIX = "objectstore.storage.options."
NAME_GLOB = "objectstore.name.glob"
RECURSIVE = "objectstore.recursive"
LIST_INTERVAL = "objectstore.list.interval.ms"
RECORD_HEADERS = "objectstore.record.headers"
TOPIC = "topic"

_GROUP = "Object store"

OBJECTSTORE_CONFIG_DEF: ConfigDef = (
    ConfigDef()
    .define(URL, ConfigType.STRING, importance=Importance.HIGH, group=_GROUP,
            validators=[NonEmptyString()],
            documentation="Where the objects are: a URL fsspec opens, e.g. file:///data/in "
            "(or a plain path), s3://bucket/prefix (s3fs), gs://bucket/prefix (gcsfs). "
            "Object names are paths relative to it.")
    .define(NAME_GLOB, ConfigType.STRING, None, group=_GROUP,
            documentation="Only objects whose names match this glob are read: * and ? "
            "stay within a directory, ** crosses them. Without a /, it is matched "
            "against the last part of the name (*.csv).")
    .define(RECURSIVE, ConfigType.BOOLEAN, True, group=_GROUP,
            documentation="Read objects in sub-directories (under sub-prefixes) too.")
    .define(LIST_INTERVAL, ConfigType.LONG, 1000, validators=[Range(min=0)], group=_GROUP,
            documentation="Shortest time between two listings of the store. When every "
            "object has been read the store is listed again after the idle backoff "
            "(poll.backoff.*, at most 5 s) and at most this often.")
    .define(RECORD_HEADERS, ConfigType.BOOLEAN, False, group=_GROUP,
            documentation="Add headers objectstore.object (the object's name) and "
            "objectstore.line (jsonl, csv) or objectstore.record (other formats) to "
            "every record.")
    .define(TOPIC, ConfigType.STRING, importance=Importance.HIGH, group=_GROUP,
            validators=[NonEmptyString()],
            documentation="The topic of the records, or a template: {object} (the name, "
            "unsafe characters as _), {stem} (the last part without extensions) or a "
            "named group of file.name.pattern, e.g. {partition}.")
)
"""The object-store source's own keys."""

CONFIG_DEF: ConfigDef = common_config_def().merge(OBJECTSTORE_CONFIG_DEF)
"""Every key the object-store source takes (besides the runtime's own): the common keys
of iterator-style sources and its own."""


@attrs.frozen(kw_only=True)
class ObjectStoreConfig(SourceCommonConfig):
    """The parsed settings of an object-store source task.

    Attributes:
        url: ``objectstore.url``.
        storage_options: ``objectstore.storage.options.*``, nested and typed.
        name_filter: The ``objectstore.name.glob`` test, or ``None``.
        recursive: ``objectstore.recursive``.
        topic: ``topic``, checked.
        list_interval: ``objectstore.list.interval.ms`` in seconds.
        record_headers: ``objectstore.record.headers``.
        tolerate_errors: ``errors.tolerance`` is ``all``.

    """

    url: str
    storage_options: Mapping[str, Any] = attrs.field(factory=dict, repr=False)
    name_filter: Callable[[str], bool] | None = attrs.field(default=None, eq=False)
    recursive: bool = True
    topic: TopicTemplate = attrs.field(eq=False)
    list_interval: float = 1.0
    record_headers: bool = False
    tolerate_errors: bool = False


def parse_config(config: Mapping[str, Any]) -> ObjectStoreConfig:
    """Parse and check a task (or connector) config.

    Raises:
        ConfigError: Listing every bad key with its fix.

    """
    parsed = CONFIG_DEF.parse(config, what="objectstore-source configuration")
    errors: dict[str, list[str]] = {}
    try:
        common = SourceCommonConfig.from_config(config)
    except ConfigError as exc:
        errors.update(exc.errors or {exc.context.get("key", "config"): [exc.message]})
        common = None
    own: dict[str, Any] = {}
    for key, build in (
        ("storage_options", lambda: storage_options(config)),
        ("name_filter", lambda: glob_filter(parsed[NAME_GLOB])),
        ("topic", lambda: TopicTemplate(parsed[TOPIC], _pattern(parsed))),
    ):
        try:
            own[key] = build()
        except ConfigError as exc:
            errors.setdefault(exc.context.get("key", key), []).append(exc.message)
    tolerance = str(config.get("errors.tolerance") or "none").strip().lower()
    if tolerance not in ("none", "all"):
        errors.setdefault("errors.tolerance", []).append(
            f"must be none or all, got {tolerance!r}")
    if errors or common is None:
        raise ConfigError.from_errors(errors, what="objectstore-source configuration")
    return ObjectStoreConfig(
        **{f.name: getattr(common, f.name) for f in attrs.fields(SourceCommonConfig)},
        url=parsed[URL],
        recursive=parsed[RECURSIVE],
        list_interval=parsed[LIST_INTERVAL] / 1000,
        record_headers=parsed[RECORD_HEADERS],
        tolerate_errors=tolerance == "all",
        **own,
    )


def _pattern(parsed: Mapping[str, Any]) -> re.Pattern[str] | None:
    pattern = parsed.get("file.name.pattern")
    if not pattern:
        return None
    try:
        return re.compile(pattern)
    except re.error:
        return None  # reported as file.name.pattern by the common config


def storage_options(config: Mapping[str, Any]) -> dict[str, Any]:
    """The ``objectstore.storage.options.*`` keys as fsspec storage options.

    Dots after the prefix nest (``client_kwargs.endpoint_url`` becomes
    ``{"client_kwargs": {"endpoint_url": ...}}``); text values ``true``/``false`` become
    booleans and integer text becomes ``int`` (properties files hold only text), other
    values are kept as given.

    Raises:
        ConfigError: A key is both a value and a parent of others.

    """
    options: dict[str, Any] = {}
    for key in sorted(k for k in config if k.startswith(STORAGE_OPTIONS_PREFIX)):
        path = key[len(STORAGE_OPTIONS_PREFIX):].split(".")
        if not all(path):
            raise ConfigError(f"{key}: empty option name; write "
                              f"{STORAGE_OPTIONS_PREFIX}<option>", key=key)
        node = options
        for part in path[:-1]:
            child = node.setdefault(part, {})
            if not isinstance(child, dict):
                raise ConfigError(f"{key}: {part!r} is set as a value and as a group of "
                                  "options; keep one", key=key)
            node = child
        if isinstance(node.get(path[-1]), dict):
            raise ConfigError(f"{key} is set as a value and as a group of options; keep one",
                              key=key)
        node[path[-1]] = _typed(config[key])
    return options


def _typed(value: Any) -> Any:
    if not isinstance(value, str):
        return value
    text = value.strip()
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    if re.fullmatch(r"[+-]?\d+", text):
        return int(text)
    return value
