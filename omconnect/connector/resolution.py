"""Resolving ``connector.class``: entry-point names, aliases, Python paths and class names.

A connector config names its connector in ``connector.class`` the way Kafka Connect
does, so Kafka Connect's own config files run unchanged. These all work, tried in order:

1. An entry-point name in the ``omconnect.connectors`` group, e.g. ``file-source``.
2. An alias from :mod:`omconnect.plugins` (Kafka Connect's names of the built-ins:
   ``FileStreamSource``, ``FileStreamSourceConnector``,
   ``org.apache.kafka.connect.file.FileStreamSourceConnector``, and the sinks').
3. A Python path, ``package.module:Class`` or ``package.module.Class``.
4. The class name of a registered connector, with or without its ``Connector`` suffix
   (Kafka Connect's rule for aliases), e.g. ``MyDbSource`` for an entry point
   ``mydb = "mydb.source:MyDbSourceConnector"``; for a dotted name that is not importable
   (a Java class name), its last part. Found from the entry points' text, without
   importing any plugin.
"""

from __future__ import annotations

import inspect
from typing import Any

from omconnect import plugins
from omconnect.connector.connector import Connector
from omconnect.errors import MissingExtraError, PluginError

__all__ = ["resolve_connector_class"]


def resolve_connector_class(name: str | type[Any]) -> type[Connector]:
    """The connector class that ``connector.class`` names.

    Args:
        name: An entry-point name, an alias, a Python path, a registered class name, or
            the class itself.

    Returns:
        A concrete :class:`~omconnect.connector.Connector` subclass.

    Raises:
        PluginError: Unknown name (listing the known ones, with a "did you mean"), an
            ambiguous class name, or the class is not a concrete Connector.
        MissingExtraError: The connector needs an extra that is not installed.

    """
    if isinstance(name, type):
        return _checked(name, name.__qualname__)
    text = name.strip()
    try:
        obj = plugins.load(plugins.CONNECTORS, text)
    except MissingExtraError:
        raise
    except PluginError as unknown:
        entry_point = _by_class_name(text)
        if entry_point is None:
            raise unknown from None
        obj = plugins.load(plugins.CONNECTORS, entry_point)
    return _checked(obj, text)


def _by_class_name(name: str) -> str | None:
    """The entry point whose class is called ``name`` or ``name + "Connector"``."""
    simple = name.rpartition(".")[2]
    wanted = {simple, simple + "Connector"}
    matches: dict[str, list[str]] = {}  # class path -> entry-point names
    for ep_name, ep in sorted(plugins.available(plugins.CONNECTORS).items()):
        if ep.value.rpartition(":")[2].rpartition(".")[2] in wanted:
            matches.setdefault(ep.value.strip(), []).append(ep_name)
    if len(matches) > 1:
        names = ", ".join(names[0] for names in matches.values())
        raise PluginError(
            f"connector class name {name!r} is ambiguous: it matches the connectors "
            f"{names}; use one of those names instead"
        )
    return next(iter(matches.values()))[0] if matches else None


def _checked(obj: Any, name: str) -> type[Connector]:
    if not (isinstance(obj, type) and issubclass(obj, Connector)):
        raise PluginError(
            f"connector.class {name!r} resolves to {obj!r}, which is not a subclass of "
            "omconnect.Connector (SourceConnector or SinkConnector)"
        )
    if inspect.isabstract(obj):
        missing = ", ".join(sorted(obj.__abstractmethods__))
        raise PluginError(
            f"connector.class {name!r} ({obj.__module__}.{obj.__qualname__}) is abstract: "
            f"it does not implement {missing}"
        )
    return obj
