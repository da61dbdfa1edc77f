"""Plugin discovery: transports, connectors, converters and transforms by name.

Plugins register through ``importlib.metadata`` entry points in the groups below and are
loaded lazily, only when named. A name can also be a Python path (``package.module:Class``
or ``package.module.Class``), or an alias (Kafka Connect's class names and short names of
the built-ins, e.g. ``FileStreamSource``). An unknown name is a :class:`PluginError` that
lists the known names with a "did you mean".
"""

from __future__ import annotations

import difflib
import importlib
import importlib.metadata
import sys
from collections.abc import Callable
from functools import cache
from typing import Any

from omconnect.errors import MissingExtraError, PluginError

__all__ = [
    "CONNECTORS",
    "CONVERTERS",
    "GROUPS",
    "PREDICATES",
    "TRANSFORMS",
    "TRANSPORTS",
    "available",
    "load",
    "plugin_version",
    "register_alias",
    "require",
]

TRANSPORTS = "omconnect.transports"
CONNECTORS = "omconnect.connectors"
CONVERTERS = "omconnect.converters"
TRANSFORMS = "omconnect.transforms"
PREDICATES = "omconnect.predicates"
GROUPS = (TRANSPORTS, CONNECTORS, CONVERTERS, TRANSFORMS, PREDICATES)

_KIND = {
    TRANSPORTS: "transport",
    CONNECTORS: "connector",
    CONVERTERS: "converter",
    TRANSFORMS: "transform",
    PREDICATES: "predicate",
}

# Kafka Connect's transforms and predicates (simple class names) -> our entry-point names;
# each is also reachable by its full class name (see _BUILTIN_ALIASES).
_KAFKA_CONNECT_TRANSFORMS = {
    "Cast$Key": "cast-key",
    "Cast$Value": "cast-value",
    "DropHeaders": "drop-headers",
    "ExtractField$Key": "extract-field-key",
    "ExtractField$Value": "extract-field-value",
    "Filter": "filter",
    "Flatten$Key": "flatten-key",
    "Flatten$Value": "flatten-value",
    "HeaderFrom$Key": "header-from-key",
    "HeaderFrom$Value": "header-from-value",
    "HoistField$Key": "hoist-field-key",
    "HoistField$Value": "hoist-field-value",
    "InsertField$Key": "insert-field-key",
    "InsertField$Value": "insert-field-value",
    "InsertHeader": "insert-header",
    "MaskField$Key": "mask-field-key",
    "MaskField$Value": "mask-field-value",
    "RegexRouter": "regex-router",
    "ReplaceField$Key": "replace-field-key",
    "ReplaceField$Value": "replace-field-value",
    "TimestampConverter$Key": "timestamp-converter-key",
    "TimestampConverter$Value": "timestamp-converter-value",
    "TimestampRouter": "timestamp-router",
    "ValueToKey": "value-to-key",
}
_KAFKA_CONNECT_PREDICATES = {
    "HasHeaderKey": "has-header-key",
    "RecordIsTombstone": "record-is-tombstone",
    "TopicNameMatches": "topic-name-matches",
}

# Kafka Connect's names for our built-ins: alias -> entry-point name, per group.
# Keep one block per group; add to it rather than registering aliases at import time.
_BUILTIN_ALIASES: dict[str, dict[str, str]] = {
    CONNECTORS: {
        "FileStreamSource": "file-source",
        "FileStreamSourceConnector": "file-source",
        "org.apache.kafka.connect.file.FileStreamSourceConnector": "file-source",
        "FileStreamSink": "file-sink",
        "FileStreamSinkConnector": "file-sink",
        "org.apache.kafka.connect.file.FileStreamSinkConnector": "file-sink",
    },
    CONVERTERS: {
        "org.apache.kafka.connect.json.JsonConverter": "json",
        "org.apache.kafka.connect.storage.StringConverter": "string",
        "org.apache.kafka.connect.converters.ByteArrayConverter": "bytearray",
        "org.apache.kafka.connect.storage.SimpleHeaderConverter": "simple",
    },
    TRANSFORMS: {
        alias: name
        for simple, name in _KAFKA_CONNECT_TRANSFORMS.items()
        for alias in (simple, "org.apache.kafka.connect.transforms." + simple)
    },
    PREDICATES: {
        alias: name
        for simple, name in _KAFKA_CONNECT_PREDICATES.items()
        for alias in (simple, "org.apache.kafka.connect.transforms.predicates." + simple)
    },
}

# Kafka Connect's first release was called Copycat: its files name the same classes under
# org.apache.kafka.copycat.*, so every org.apache.kafka.connect.* alias has that twin.
_CONNECT_PACKAGE, _COPYCAT_PACKAGE = "org.apache.kafka.connect.", "org.apache.kafka.copycat."
for _aliases in _BUILTIN_ALIASES.values():
    _aliases.update({_COPYCAT_PACKAGE + alias.removeprefix(_CONNECT_PACKAGE): name
                     for alias, name in list(_aliases.items())
                     if alias.startswith(_CONNECT_PACKAGE)})

# Alias -> entry-point name, per group: the built-ins above plus register_alias().
_ALIASES: dict[str, dict[str, str]] = {
    group: dict(_BUILTIN_ALIASES.get(group, {})) for group in GROUPS
}


def register_alias(group: str, alias: str, name: str) -> None:
    """Make ``alias`` resolve to the plugin ``name`` of ``group``.

    Raises:
        PluginError: ``group`` is not one of :data:`GROUPS`.

    """
    if group not in _ALIASES:
        raise PluginError(f"unknown plugin group {group!r}; expected one of: {', '.join(GROUPS)}")
    _ALIASES[group][alias] = name


# (group, name) -> "value (distribution)" of each entry point when distributions disagree.
_CLASHES: dict[tuple[str, str], list[str]] = {}


@cache
def _entry_points(group: str) -> dict[str, importlib.metadata.EntryPoint]:
    found: dict[str, importlib.metadata.EntryPoint] = {}
    for key in [k for k in _CLASHES if k[0] == group]:
        del _CLASHES[key]
    for ep in importlib.metadata.entry_points(group=group):
        first = found.setdefault(ep.name, ep)
        if first.value != ep.value:
            _CLASHES.setdefault((group, ep.name), [_origin(first)]).append(_origin(ep))
    return found


def _origin(ep: importlib.metadata.EntryPoint) -> str:
    dist = ep.dist.name if ep.dist is not None else "an unknown distribution"
    return f"{ep.value} (from {dist})"


def available(group: str) -> dict[str, importlib.metadata.EntryPoint]:
    """The registered plugins of ``group``, by name (nothing is imported)."""
    return dict(_entry_points(group))


def _import_path(path: str) -> Any:
    module_name, sep, attr = path.partition(":")
    if not sep:
        module_name, _, attr = path.rpartition(".")
    module = importlib.import_module(module_name)
    obj: Any = module
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


def _unknown(group: str, name: str) -> PluginError:
    installed = _entry_points(group)
    known = sorted(installed)
    # Aliases count for "did you mean" only when their plugin is installed.
    candidates = known + [alias for alias, target in _ALIASES[group].items()
                          if target in installed]
    close = difflib.get_close_matches(name, candidates, n=1, cutoff=0.6)
    hint = f"; did you mean {close[0]!r}?" if close else "."
    listing = ", ".join(known) or "none installed"
    return PluginError(
        f"unknown {_KIND.get(group, group)} {name!r}{hint} Known: {listing}. "
        "A Python path (package.module:Class) works too."
    )


def load(group: str, name: str, *, check: Callable[[Any], str | None] | None = None) -> Any:
    """The plugin ``name`` of ``group`` (a class, usually).

    Args:
        group: One of :data:`GROUPS`.
        name: An entry-point name, an alias, or a Python path.
        check: Validates the loaded object; returns a message when it is not a valid plugin.

    Raises:
        PluginError: Unknown name (listing the known ones), a name that several installed
            distributions register differently, or ``check`` failed.
        MissingExtraError: The plugin needs an extra that is not installed.

    """
    eps = _entry_points(group)
    target = _ALIASES[group].get(name, name)
    try:
        if (group, target) in _CLASHES:
            raise PluginError(
                f"{_KIND.get(group, group)} {target!r} is registered by several installed "
                f"distributions: {'; '.join(_CLASHES[group, target])}. Uninstall all but one, "
                "or name the class by its Python path."
            )
        if target in eps:
            obj = eps[target].load()
        elif "." in target or ":" in target:
            try:
                obj = _import_path(target)
            except (ImportError, AttributeError, ValueError) as exc:
                if isinstance(exc, MissingExtraError):
                    raise
                if isinstance(exc, ModuleNotFoundError) and exc.name and not target.startswith(
                    exc.name
                ):
                    raise
                raise _unknown(group, name) from exc
        else:
            raise _unknown(group, name)
    except MissingExtraError:
        raise
    if check is not None:
        problem = check(obj)
        if problem:
            raise PluginError(f"{_KIND.get(group, group)} plugin {name!r} is invalid: {problem}")
    return obj


def plugin_version(obj: Any, distribution: Any = None) -> str:
    """The version of a plugin: its ``__version__`` (or ``VERSION``) string if any, else
    its top-level package's ``__version__``, else the version of ``distribution`` (the
    distribution whose entry point registered it: an ``EntryPoint.dist``), else of the
    distribution that ships its module; ``"unknown"`` when none says. An editable install
    lists no modules, so its plugins are found by the registering distribution.
    """
    for attr in ("__version__", "VERSION"):
        value = getattr(obj, attr, None)
        if isinstance(value, str):
            return value
    module = getattr(obj, "__module__", "") or ""
    top = module.split(".")[0]
    value = getattr(sys.modules.get(top), "__version__", None)
    if isinstance(value, str):
        return value
    version = getattr(distribution, "version", None)
    if isinstance(version, str) and version:
        return version
    for name in importlib.metadata.packages_distributions().get(top, ()):
        return importlib.metadata.version(name)
    return "unknown"


def require(module: str, *, plugin: str, extra: str) -> Any:
    """Import ``module`` for ``plugin``, or raise :class:`MissingExtraError` naming the
    extra to install. Only the module's own absence is translated; an ImportError from
    inside an installed module propagates unchanged.
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        missing = getattr(exc, "name", None) or ""
        if missing == module or module.startswith(missing + ".") or missing.startswith(
            module + "."
        ):
            raise MissingExtraError(plugin, extra, module) from exc
        raise
