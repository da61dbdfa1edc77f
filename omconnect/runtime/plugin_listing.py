"""The installed plugins (connectors, transports, converters, transforms, predicates)."""

from __future__ import annotations

from omconnect import plugins
from omconnect.connector.connector import SinkConnector, SourceConnector
from omconnect.errors import MissingExtraError
from omconnect.runtime.status import PluginInfo

__all__ = ["KINDS", "list_plugins"]

KINDS = {
    "connector": plugins.CONNECTORS,
    "transport": plugins.TRANSPORTS,
    "converter": plugins.CONVERTERS,
    "transform": plugins.TRANSFORMS,
    "predicate": plugins.PREDICATES,
}
"""Plugin kind → entry-point group."""


def list_plugins(kinds: list[str] | None = None) -> list[PluginInfo]:
    """Every installed plugin of ``kinds`` (default all), sorted by kind and name.

    Each is loaded to read its class and version; one that cannot be loaded (say, its
    extra is not installed) is listed with the reason instead of a version.

    Raises:
        ValueError: An unknown kind (naming the known ones).

    """
    wanted = list(KINDS) if kinds is None else kinds
    unknown = [k for k in wanted if k not in KINDS]
    if unknown:
        raise ValueError(f"unknown plugin kind(s) {unknown}; known: {', '.join(KINDS)}")
    result = []
    for kind in wanted:
        group = KINDS[kind]
        for name, entry_point in sorted(plugins.available(group).items()):
            try:
                obj = plugins.load(group, name)
            except MissingExtraError as exc:
                result.append(PluginInfo(kind=kind, name=name, class_name=entry_point.value,
                                         type=kind, version=None, problem=str(exc)))
                continue
            except Exception as exc:
                result.append(PluginInfo(kind=kind, name=name, class_name=entry_point.value,
                                         type=kind, version=None,
                                         problem=f"{type(exc).__name__}: {exc}"))
                continue
            plugin_type = kind
            if kind == "connector" and isinstance(obj, type):
                if issubclass(obj, SourceConnector):
                    plugin_type = "source"
                elif issubclass(obj, SinkConnector):
                    plugin_type = "sink"
            class_name = f"{getattr(obj, '__module__', '')}.{getattr(obj, '__qualname__', name)}"
            result.append(PluginInfo(kind=kind, name=name, class_name=class_name,
                                     type=plugin_type,
                                     version=_version(obj, getattr(entry_point, "dist", None))))
    return result


def _version(obj: object, distribution: object) -> str:
    if isinstance(obj, type) and issubclass(obj, SourceConnector | SinkConnector):
        try:
            return str(obj().version())
        except Exception:
            pass
    return plugins.plugin_version(obj, distribution)
