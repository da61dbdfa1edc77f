"""Secrets kept out of responses: config values masked, secret values scrubbed from text.

A value is secret when its key is declared ``PASSWORD`` by the connector (or the common
settings), or when its name looks secret, declared or not (the rule of
:mod:`omconnect.config.secrets`: password, secret, token, credential, sasl.jaas, api key,
private key). Error messages are produced by connectors and validators that may quote
what they were given, so every message answering a request that carried a config has
that config's secret values, resolved through its ``${...}`` references, replaced by the
mask.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from omconnect.config.definition import ConfigDef, ConfigKey
from omconnect.config.secrets import scrub
from omconnect.config.secrets import secret_values as _secret_values
from omconnect.config.types import Password
from omconnect.errors import ConfigError, ConnectError
from omconnect.rest.errors import ApiError, status_of
from omconnect.runtime.connector_config import (
    COMMON_CONFIG_DEF,
    SINK_CONFIG_DEF,
    load_connector_class,
)

__all__ = [
    "config_definition",
    "masked_config",
    "masked_task_config",
    "scrub",
    "scrubbing",
    "secret_values",
]


@functools.lru_cache(maxsize=64)
def _definition_of(connector_class: str) -> ConfigDef:
    keys: dict[str, ConfigKey] = {key.name: key for key in COMMON_CONFIG_DEF}
    keys.update({key.name: key for key in SINK_CONFIG_DEF})
    try:
        own = load_connector_class(connector_class)().config_def()
    except Exception:  # an unknown or broken class: the common keys and names still mask
        own = ConfigDef()
    keys.update({key.name: key for key in own})
    return ConfigDef(list(keys.values()))


def config_definition(config: Mapping[str, Any]) -> ConfigDef:
    """The declared keys of a connector config: common, sink, and its connector's own."""
    return _definition_of(str(config.get("connector.class") or "").strip())


def masked_config(values: Mapping[str, Any], config: Mapping[str, Any] | None = None
                  ) -> dict[str, Any]:
    """``values`` with every secret replaced by the mask.

    Args:
        values: What to show (a connector's config, or one of its tasks' configs).
        config: The connector's config, naming its class (default ``values``).

    """
    return ConfigDef.masked(values, config_definition(config if config is not None
                                                      else values))


def secret_values(config: Mapping[str, Any]) -> list[str]:
    """The values of ``config`` that :func:`masked_config` hides, resolved through their
    references, longest first.
    """
    return _secret_values(config, config_definition(config))


def masked_task_config(values: Mapping[str, Any], config: Mapping[str, Any]
                       ) -> dict[str, Any]:
    """A task's config with every secret masked: the keys :func:`masked_config` hides,
    and any other value holding a secret value of the connector's ``config`` (a task
    config is derived from the resolved connector config).
    """
    shown = masked_config(values, config)
    secrets = secret_values(config)
    for key, value in shown.items():
        if isinstance(value, str) and any(secret in value for secret in secrets):
            shown[key] = Password.MASK
    return shown


@contextmanager
def scrubbing(*configs: Mapping[str, Any]) -> Iterator[list[str]]:
    """Turn an omconnect error raised inside into an :class:`ApiError` whose message and
    per-key errors do not contain the secret values of ``configs``.

    Yields:
        The secret values (to scrub successful responses with, where they echo input).

    """
    secrets = sorted({s for config in configs for s in secret_values(config)}, key=len,
                     reverse=True)
    try:
        yield secrets
    except ConnectError as exc:
        errors = exc.errors if isinstance(exc, ConfigError) else {}
        raise ApiError(status_of(exc), scrub(str(exc), secrets),
                       errors={k: [scrub(m, secrets) for m in v] for k, v in errors.items()}
                       ) from exc
