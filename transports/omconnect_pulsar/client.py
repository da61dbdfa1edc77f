"""The pulsar-client side of the transport: the client, native option pass-through and
topic names.

pulsar-client is imported lazily (:func:`pulsar_module`), so every module of this package
imports without it; the import error names the extra to install.

Native options (``pulsar.client.*``, ``pulsar.producer.*``, ``pulsar.consumer.*``) are
the keyword arguments of ``pulsar.Client``, ``Client.create_producer`` and
``Client.subscribe``, spelt as the client spells them (``pulsar.producer.compression_type
=LZ4``). Values from config files are strings; :func:`native_options` turns each into the
type of the keyword's default (int, bool, or the enum member of that name) and rejects
unknown keywords with a "did you mean".
"""

from __future__ import annotations

import difflib
import importlib
import inspect
import logging
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from omconnect import plugins
from omconnect.errors import ConfigError

__all__ = [
    "OWNED_OPTIONS",
    "TopicNames",
    "compiled_module",
    "native_options",
    "pulsar_module",
    "release_client",
]

CLIENT_LOGGER = logging.getLogger("omconnect_pulsar.client")
"""The logger pulsar-client's own (C++) log lines go to."""

OWNED_OPTIONS: dict[str, frozenset[str]] = {
    "client": frozenset({"service_url", "logger", "log_conf_file_path"}),
    "producer": frozenset({"topic", "schema", "message_router"}),
    "consumer": frozenset({"topic", "subscription_name", "schema", "message_listener",
                           "initial_position", "consumer_type"}),
    "reader": frozenset({"topic", "start_message_id", "schema", "reader_listener"}),
}
"""Keywords the transport sets itself; passing them through is an error naming the
omconnect option to use instead."""

_INSTEAD = {
    "service_url": "pulsar.service.url",
    "consumer_type": "pulsar.subscription.type",
    "initial_position": "the consumer's start (earliest/latest)",
    "subscription_name": "the consumer group",
    "topic": "the topic of each message",
}


def release_client(client: Any) -> None:
    """Break the reference cycle between a closed ``pulsar.Client`` and the consumers it
    lists, so dropping the last reference frees it (and ends its threads) at once.
    """
    consumers = getattr(client, "_consumers", None)
    if isinstance(consumers, list):
        consumers.clear()


def pulsar_module() -> Any:
    """The ``pulsar`` package, or a MissingExtraError naming the ``pulsar`` extra."""
    return plugins.require("pulsar", plugin="pulsar transport", extra="pulsar")


def compiled_module() -> Any:
    """pulsar-client's compiled layer (``_pulsar``), which the hot paths call directly."""
    pulsar_module()
    return importlib.import_module("_pulsar")


def _signature(kind: str) -> dict[str, inspect.Parameter]:
    pulsar = pulsar_module()
    function: Callable[..., Any] = {
        "client": pulsar.Client.__init__,
        "producer": pulsar.Client.create_producer,
        "consumer": pulsar.Client.subscribe,
        "reader": pulsar.Client.create_reader,
    }[kind]
    return {name: p for name, p in inspect.signature(function).parameters.items()
            if name != "self"}


def _coerce(default: Any, raw: Any, key: str) -> Any:
    """``raw`` as the type of ``default`` (strings from config files are parsed)."""
    if not isinstance(raw, str):
        return raw
    text = raw.strip()
    if isinstance(default, bool):
        lowered = text.lower()
        if lowered in ("true", "1", "yes", "on"):
            return True
        if lowered in ("false", "0", "no", "off"):
            return False
        raise ConfigError(f"{key}: expected true or false, got {raw!r}", key=key)
    if isinstance(default, int):
        try:
            return int(text)
        except ValueError:
            raise ConfigError(f"{key}: expected an integer, got {raw!r}", key=key) from None
    members = getattr(type(default), "__members__", None)
    if members:
        for name, member in members.items():
            if name.lower() == text.lower():
                return member
        raise ConfigError(f"{key}: expected one of {', '.join(members)}, got {raw!r}",
                          key=key)
    if default is None and text.lstrip("-").isdigit():
        return int(text)  # optional numeric settings such as unacked_messages_timeout_ms
    return raw


def native_options(kind: str, options: Mapping[str, Any], *, prefix: str) -> dict[str, Any]:
    """``options`` as keyword arguments of the client call for ``kind``, typed.

    Args:
        kind: ``client``, ``producer``, ``consumer`` or ``reader``.
        options: Keyword name to value (strings are parsed to the keyword's type).
        prefix: How the user wrote the keys, for messages (e.g. ``pulsar.producer.``).

    Raises:
        ConfigError: A keyword is unknown, set by the transport itself, or has a value of
            the wrong type; the message names ``prefix + keyword``.

    """
    if not options:
        return {}
    parameters = _signature(kind)
    owned = OWNED_OPTIONS[kind]
    result: dict[str, Any] = {}
    errors: dict[str, list[str]] = {}
    for name, raw in options.items():
        key = prefix + name
        if name in owned:
            instead = _INSTEAD.get(name, "the transport's own option")
            errors[key] = [f"set by the transport; use {instead} instead"]
            continue
        parameter = parameters.get(name)
        if parameter is None:
            close = difflib.get_close_matches(name, [p for p in parameters if p not in owned],
                                              n=1)
            hint = f"did you mean {prefix}{close[0]}?" if close else (
                f"see the keyword arguments of pulsar.Client {kind} calls")
            errors[key] = [f"unknown pulsar-client option; {hint}"]
            continue
        try:
            result[name] = _coerce(parameter.default, raw, key)
        except ConfigError as exc:
            errors[key] = [exc.message.split(": ", 1)[-1]]
    if errors:
        raise ConfigError.from_errors(errors, what="transport 'pulsar'")
    return result


def split_prefixed(config: Mapping[str, Any], prefix: str) -> dict[str, Any]:
    """The entries of ``config`` whose key starts with ``prefix``, the prefix removed."""
    return {k[len(prefix):]: v for k, v in config.items() if k.startswith(prefix)}


class TopicNames:
    """Maps omconnect topic names to Pulsar's and back.

    An omconnect topic ``orders`` is ``persistent://<tenant>/<namespace>/orders``; a name
    that already holds ``://`` is used as given. A partition of a partitioned topic is
    Pulsar's ``<topic>-partition-<n>``.

    Args:
        tenant: ``pulsar.tenant``.
        namespace: ``pulsar.namespace``.

    """

    PARTITION_SUFFIX = "-partition-"

    def __init__(self, tenant: str, namespace: str) -> None:
        self._prefix = f"persistent://{tenant}/{namespace}/"
        self._short: dict[str, tuple[str, int]] = {}

    def full(self, topic: str) -> str:
        """The Pulsar topic name of omconnect topic ``topic``."""
        return topic if "://" in topic else self._prefix + topic

    def partition(self, topic: str, partition: int) -> str:
        """The Pulsar topic name of one partition of a partitioned topic."""
        return f"{self.full(topic)}{self.PARTITION_SUFFIX}{partition}"

    def parse(self, pulsar_topic: str) -> tuple[str, int]:
        """(omconnect topic, partition) of a Pulsar topic or partition name (cached)."""
        found = self._short.get(pulsar_topic)
        if found is not None:
            return found
        name, partition = pulsar_topic, 0
        base, marker, index = pulsar_topic.rpartition(self.PARTITION_SUFFIX)
        if marker and index.isdigit():
            name, partition = base, int(index)
        if name.startswith(self._prefix):
            name = name[len(self._prefix):]
        found = (name, partition)
        if len(self._short) < 100_000:
            self._short[pulsar_topic] = found
        return found

    def shorts(self, pulsar_topics: Iterable[str]) -> list[str]:
        """The omconnect names of Pulsar topic names."""
        return [self.parse(t)[0] for t in pulsar_topics]
