"""A task's three converters (key, value, header) from its configuration: checking them
(:func:`converter_config_errors`) and building them (:func:`build_converters`).

A connector's ``key.converter``, ``value.converter`` and ``header.converter`` (with their
own ``<role>.<option>`` keys) override the worker's, as in Kafka Connect; the defaults are
``json``, ``json`` and ``simple``. The runtime builds one set per task; the Spark adapter
builds the same to decode what it reads.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from omconnect import plugins
from omconnect.converters.base import Converter, HeaderConverter
from omconnect.errors import ConfigError, PluginError

__all__ = ["ROLES", "Converters", "build_converters", "converter_config_errors"]

ROLES = ("key.converter", "value.converter", "header.converter")
"""The three converter settings."""


@attrs.frozen
class Converters:
    """The three converters of one task (instances are used by one thread)."""

    key: Converter
    value: Converter
    header: HeaderConverter


def _load(name: str, role: str) -> type[Any]:
    base: type[Any] = HeaderConverter if role == "header.converter" else Converter

    def check(obj: Any) -> str | None:
        if isinstance(obj, type) and issubclass(obj, base):
            return None
        return f"it is not a {base.__name__} class"

    loaded: type[Any] = plugins.load(plugins.CONVERTERS, name, check=check)
    return loaded


def _strip(values: Mapping[str, Any], prefix: str) -> dict[str, Any]:
    return {k[len(prefix):]: v for k, v in values.items() if k.startswith(prefix)}


def _choice(
    role: str, connector: Mapping[str, Any], worker: Mapping[str, Any]
) -> tuple[str, dict[str, Any]]:
    """The converter name and options for ``role``: the connector's when it names a
    converter (with its own options only, as Kafka Connect), else the worker's.
    """
    own = connector.get(role)
    if own:
        return str(own).strip(), _strip(connector, role + ".")
    return str(worker.get(role) or _DEFAULTS[role]).strip(), _strip(worker, role + ".")


_DEFAULTS = {"key.converter": "json", "value.converter": "json", "header.converter": "simple"}


def converter_config_errors(
    connector: Mapping[str, Any], worker: Mapping[str, Any] | None = None
) -> dict[str, list[str]]:
    """Per-key problems with the converters a connector config selects.

    Only the converters named in ``connector`` are checked when ``worker`` is ``None``.
    """
    errors: dict[str, list[str]] = {}
    for role in ROLES:
        if worker is None and not connector.get(role):
            continue
        name, options = _choice(role, connector, worker or {})
        try:
            cls = _load(name, role)
        except PluginError as exc:
            errors.setdefault(role, []).append(f"{exc}; fix the value of {role}")
            continue
        definition = getattr(cls, "config_def", None)
        if definition is not None:
            for key, messages in definition.validate(options, prefix=role + ".").items():
                if messages:
                    errors.setdefault(key, []).extend(messages)
    return errors


def build_converters(connector: Mapping[str, Any], worker: Mapping[str, Any]) -> Converters:
    """New, configured converters for one task.

    Args:
        connector: The connector's settings (``key.converter`` etc. override the worker's).
        worker: The worker's settings.

    Raises:
        ConfigError: A converter is unknown or rejects its options (naming the key).

    """
    built: list[Any] = []
    for role in ROLES:
        name, options = _choice(role, connector, worker)
        try:
            instance = _load(name, role)()
            if role == "header.converter":
                instance.configure(options)
            else:
                instance.configure(options, role == "key.converter")
        except PluginError as exc:
            raise ConfigError(f"{exc}; fix the value of {role}", key=role) from exc
        except ConfigError as exc:
            key = exc.context.get("key")
            shown = f"{role}.{key}" if key and not str(key).startswith(role) else (key or role)
            raise ConfigError(f"{role} {name!r} rejected its options: {exc.message}",
                              errors=exc.errors, key=shown) from exc
        built.append(instance)
    return Converters(key=built[0], value=built[1], header=built[2])
