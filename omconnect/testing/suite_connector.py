"""The connector acceptance suite as ``pytest --omconnect-connector NAME`` collects it.

The connector is resolved by name (entry point, Kafka Connect alias or Python path); its
config comes from ``--omconnect-connector-config``. Keys starting with ``conformance.``
configure the suite: ``conformance.hooks`` names a
:class:`~omconnect.testing.connector.ConnectorHooks` subclass (``package.module:Class``)
that unlocks the cases needing hooks; ``conformance.max.tasks`` sets ``max_tasks``.
``{tmp}`` in a value becomes a fresh directory per environment.
"""

from __future__ import annotations

import importlib
from collections.abc import Collection, Hashable, Mapping
from pathlib import Path
from typing import Any

import attrs
import pytest

from omconnect import plugins
from omconnect.connector import Connector
from omconnect.errors import ConfigError
from omconnect.records import SinkRecord, SourceRecord
from omconnect.testing.connector import ConnectorConformance, ConnectorHooks
from omconnect.testing.profile import SUITE_PREFIX, load_config_file, substitute_tmp

__all__ = ["TestConnectorConformance"]


@attrs.frozen
class _Setup:
    connector_class: type[Connector]
    config: dict[str, Any]
    hooks: ConnectorHooks
    max_tasks: int


def _check_connector(obj: object) -> str | None:
    if not (isinstance(obj, type) and issubclass(obj, Connector)):
        return f"{obj!r} is not a subclass of omconnect.connector.Connector"
    return None


_setup_key = pytest.StashKey[_Setup]()


def _setup(config: pytest.Config) -> _Setup:
    if _setup_key in config.stash:
        return config.stash[_setup_key]
    name = config.getoption("omconnect_connector")
    connector_class = plugins.load(plugins.CONNECTORS, name, check=_check_connector)
    path = config.getoption("omconnect_connector_config")
    if not path:
        raise pytest.UsageError("--omconnect-connector needs --omconnect-connector-config FILE "
                                "(the connector's configuration)")
    settings = load_config_file(path)
    suite = {k[len(SUITE_PREFIX):]: v for k, v in settings.items() if k.startswith(SUITE_PREFIX)}
    connector_config = {k: v for k, v in settings.items() if not k.startswith(SUITE_PREFIX)}
    hooks: ConnectorHooks = ConnectorHooks()
    if suite.get("hooks"):
        hooks_class = _import_hooks(str(suite["hooks"]))
        if not (isinstance(hooks_class, type) and issubclass(hooks_class, ConnectorHooks)):
            raise ConfigError(f"conformance.hooks {suite['hooks']!r} is not a ConnectorHooks "
                              "subclass", key="conformance.hooks")
        hooks = hooks_class()
    try:
        max_tasks = int(suite.get("max.tasks", ConnectorHooks.max_tasks))
    except ValueError:
        raise ConfigError("conformance.max.tasks must be an integer",
                          key="conformance.max.tasks") from None
    setup = _Setup(connector_class, connector_config, hooks, max_tasks)
    config.stash[_setup_key] = setup
    return setup


def _import_hooks(path: str) -> Any:
    module_name, _, attr = path.replace(":", ".").rpartition(".")
    try:
        return getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError, ValueError) as exc:
        raise ConfigError(f"conformance.hooks {path!r} cannot be imported ({exc}); write it "
                          "as package.module:Class", key="conformance.hooks") from exc


class TestConnectorConformance(ConnectorConformance):
    """Every connector case, against the connector named on the command line."""

    _cli: _Setup

    @pytest.fixture(autouse=True)
    def _from_command_line(self, pytestconfig: pytest.Config) -> None:
        setup = _setup(pytestconfig)
        self._cli = setup
        vars(self)["connector_class"] = setup.connector_class
        vars(self)["max_tasks"] = setup.max_tasks

    def connector_config(self, workdir: Path) -> dict[str, Any]:
        """The config file's settings for ``workdir``, prepared by the hooks."""
        config = substitute_tmp(self._cli.config, workdir)
        return self._cli.hooks.prepare(config, workdir)

    def work_units(self, config: Mapping[str, Any]) -> Collection[Hashable] | None:
        """Delegated to ``conformance.hooks``."""
        return self._cli.hooks.work_units(config)

    def task_work_units(self, task_config: Mapping[str, Any]) -> Collection[Hashable] | None:
        """Delegated to ``conformance.hooks``."""
        return self._cli.hooks.task_work_units(task_config)

    def bad_configs(self, config: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
        """Delegated to ``conformance.hooks``."""
        return self._cli.hooks.bad_configs(config)

    def sink_records(self, config: Mapping[str, Any]) -> list[SinkRecord]:
        """Delegated to ``conformance.hooks``."""
        return self._cli.hooks.sink_records(config)

    def sink_state(self, config: Mapping[str, Any]) -> Any:
        """Delegated to ``conformance.hooks``."""
        return self._cli.hooks.sink_state(config)

    def record_identity(self, record: SourceRecord) -> Hashable:
        """Delegated to ``conformance.hooks``."""
        return self._cli.hooks.record_identity(record)
