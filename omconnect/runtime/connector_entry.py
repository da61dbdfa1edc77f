"""What the herder keeps about one connector: :class:`ConnectorEntry`.

An entry has three parts, each edited by one job of the herder:

* what is stored (``name``, ``config`` as written, ``target`` state, ``origin``, ``kind``),
  changed by the lifecycle API and written to the config store;
* what runs (``runner``, ``tasks``, ``task_configs``, ``resolved``, ``secrets``, and
  ``state``/``trace`` for a connector with no runner), set when the connector starts and
  cleared when it stops;
* restart accounting (``failures`` in a row per task, ``None`` for the connector itself,
  and ``generation``, bumped on every start and stop so a delayed callback of an older
  instance recognises itself as stale).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from omconnect.config.providers import ResolvedConfig, resolve_references
from omconnect.config.secrets import scrub
from omconnect.connector.lifecycle import State
from omconnect.errors import ConfigError
from omconnect.runtime.config_store import API, TARGET_STATES
from omconnect.runtime.connector_config import connector_kind, load_connector_class
from omconnect.runtime.connector_runner import ConnectorRunner
from omconnect.runtime.task_runner import TaskRunner

__all__ = ["ConnectorEntry", "kind_of", "target_state"]


@attrs.define
class ConnectorEntry:
    """What the herder knows about one connector (see the module docstring)."""

    name: str
    config: dict[str, Any]
    """The config as written (references unresolved)."""
    target: State
    """RUNNING, PAUSED or STOPPED: the state the connector is kept in."""
    origin: str = API
    """Where the connector came from (the API or a standalone command line)."""
    kind: str = "unknown"
    """``source``, ``sink`` or ``unknown`` (its class cannot be loaded)."""
    runner: ConnectorRunner | None = None
    state: State = State.UNASSIGNED
    """The connector's state when there is no runner."""
    trace: str | None = None
    """The trace of a failure to start, when there is no runner."""
    tasks: dict[int, TaskRunner] = attrs.field(factory=dict)
    task_configs: list[dict[str, Any]] = attrs.field(factory=list)
    """The task configs the running instance returned (resolved; kept in memory only)."""
    resolved: ResolvedConfig | None = None
    """The config the running instance started with."""
    secrets: list[str] = attrs.field(factory=list)
    """The resolved config's secret values, scrubbed from traces."""
    failures: dict[int | None, int] = attrs.field(factory=dict)
    """Failures in a row, per task number (``None``: the connector instance)."""
    generation: int = 0

    @property
    def connector_state(self) -> State:
        """The connector instance's state (its runner's, when it has one)."""
        return self.runner.state if self.runner is not None else self.state

    @property
    def connector_trace(self) -> str | None:
        """The connector instance's failure trace, if any."""
        return self.runner.trace if self.runner is not None else self.trace

    def scrubbed(self, trace: str | None) -> str | None:
        """``trace`` without the secret values of the entry's resolved config."""
        return scrub(trace, self.secrets) if trace and self.secrets else trace


def target_state(value: State | str) -> State:
    """``value`` as a target state.

    Raises:
        ConfigError: It is not RUNNING, PAUSED or STOPPED.

    """
    state = State(value.upper()) if isinstance(value, str) else value
    if state not in TARGET_STATES:
        raise ConfigError(f"initial state must be RUNNING, PAUSED or STOPPED, got "
                          f"{state.value}", key="initial_state")
    return state


def kind_of(config: Mapping[str, Any]) -> str:
    """``source`` or ``sink`` for the connector class ``config`` names; ``unknown``
    when the class cannot be loaded.
    """
    connector_class = resolve_references({"c": config.get("connector.class")})[0]["c"]
    try:
        return connector_kind(load_connector_class(str(connector_class)))
    except ConfigError:
        return "unknown"
