"""Opening the transport a configuration names: the one way the runtime and the Spark
adapter select a transport, check its options and open it.

A configuration names its transport with ``transport`` (default ``embedded``, an entry
point of the ``omconnect.transports`` group or a ``package.module:Class`` path) and gives
its options as ``<name>.<option>`` keys, as a worker config does::

    transport = open_transport({"transport": "kafka",
                                "kafka.bootstrap.servers": "127.0.0.1:9092"})

Other keys are ignored here (a worker config holds many).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from omconnect import plugins
from omconnect.errors import ConfigError, PluginError
from omconnect.transport.spi import Transport

__all__ = [
    "DEFAULT_TRANSPORT",
    "TransportSelection",
    "open_transport",
    "select_transport",
    "transport_config_errors",
]

DEFAULT_TRANSPORT = "embedded"
"""The transport of a configuration that names none."""


@attrs.frozen(kw_only=True)
class TransportSelection:
    """A transport class and its options, as a configuration selects them.

    Attributes:
        name: The transport's name as configured (``transport``).
        transport_class: Its class.
        options: Its options, the ``<name>.`` prefix removed.

    """

    name: str
    transport_class: type[Transport]
    options: dict[str, Any]

    def open(self) -> Transport:
        """A new instance of the transport with its options.

        Raises:
            ConfigError: An option is unknown or invalid (named as ``<name>.<option>``).

        """
        return self.transport_class(self.options)


def transport_config_errors(
    settings: Mapping[str, Any],
) -> tuple[TransportSelection | None, dict[str, list[str]]]:
    """The transport ``settings`` select and the problems of its settings, per key.

    Returns:
        The selection (``None`` when the transport cannot be loaded) and the problems:
        an unknown transport or one that is not a Transport class (under
        ``transport``), an option value its ``config_def`` refuses (under
        ``<name>.<option>``).

    """
    name = str(settings.get("transport") or DEFAULT_TRANSPORT).strip()
    prefix = name + "."
    options = {str(k)[len(prefix):]: v for k, v in settings.items()
               if str(k).startswith(prefix)}
    errors: dict[str, list[str]] = {}
    try:
        loaded = plugins.load(plugins.TRANSPORTS, name)
    except PluginError as exc:
        errors.setdefault("transport", []).append(f"{exc}; fix the value of transport")
        return None, errors
    if not (isinstance(loaded, type) and issubclass(loaded, Transport)):
        errors.setdefault("transport", []).append(
            f"{name!r} is not a Transport class; fix the value of transport")
        return None, errors
    for key, problems in loaded.config_def.validate(options, prefix=prefix).items():
        if problems:
            errors.setdefault(key, []).extend(problems)
    return TransportSelection(name=name, transport_class=loaded, options=options), errors


def select_transport(settings: Mapping[str, Any]) -> TransportSelection:
    """The transport ``settings`` select.

    Raises:
        ConfigError: Listing every problem of :func:`transport_config_errors`, per key.

    """
    selection, errors = transport_config_errors(settings)
    if errors or selection is None:
        raise ConfigError.from_errors(errors, what="transport configuration")
    return selection


def open_transport(settings: Mapping[str, Any]) -> Transport:
    """A new instance of the transport ``settings`` select, with its options, opened as
    the runtime opens it.

    Raises:
        ConfigError: The transport or one of its options is unknown or invalid.

    """
    return select_transport(settings).open()
