"""Connector configs, target states and last known statuses in the transport's KV store.

Layout:

* namespace ``config.storage.namespace`` (default ``connect-configs``), key
  ``connector-<name>``: ``{"config": {...}, "target": "RUNNING"|"PAUSED"|"STOPPED"}`` as
  JSON. One key per connector, so a config and its target state change together.
* namespace ``status.storage.namespace`` (default ``connect-status``), keys
  ``status-connector-<name>`` and ``status-task-<name>-<n>``:
  ``{"state": ..., "worker_id": ..., "trace": ...}``.

Configs are stored as written: the herder stores ``${env:...}``/``${file:...}``
references unresolved (it resolves them when it starts a connector), so secrets given
through references never reach the store; a literal password in a config is stored as
written. Task configs (derived from resolved configs) are not stored.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from omconnect.config.types import Password
from omconnect.connector.lifecycle import State
from omconnect.transport.spi import KeyValueStore

__all__ = ["TARGET_STATES", "ConfigStore", "StatusStore"]

TARGET_STATES = (State.RUNNING, State.PAUSED, State.STOPPED)
_CONNECTOR = "connector-"


def _jsonable(value: Any) -> Any:
    if isinstance(value, Password):
        return value.value()
    return str(value)


class ConfigStore:
    """Connector configs and target states.

    Args:
        store: The transport's store for ``config.storage.namespace``.

    """

    def __init__(self, store: KeyValueStore) -> None:
        self._store = store

    def put(self, name: str, config: Mapping[str, Any], target: State) -> None:
        """Store ``name``'s config and target state together."""
        data = json.dumps({"config": dict(config), "target": target.value}, sort_keys=True,
                          default=_jsonable)
        self._store.put(_CONNECTOR + name, data.encode())

    def delete(self, name: str) -> None:
        """Forget ``name``."""
        self._store.put(_CONNECTOR + name, None)

    def get(self, name: str) -> tuple[dict[str, Any], State] | None:
        """``name``'s (config, target state), or ``None``."""
        data = self._store.get(_CONNECTOR + name)
        return None if data is None else _decode(data)

    def all(self) -> dict[str, tuple[dict[str, Any], State]]:
        """Every stored connector: name → (config, target state)."""
        return {key[len(_CONNECTOR):]: _decode(value)
                for key, value in self._store.scan(_CONNECTOR)}


def _decode(data: bytes) -> tuple[dict[str, Any], State]:
    record = json.loads(data)
    return dict(record["config"]), State(record.get("target", "RUNNING"))


class StatusStore:
    """Last known states of connectors and tasks (for tools that run beside a worker).

    Args:
        store: The transport's store for ``status.storage.namespace``.

    """

    def __init__(self, store: KeyValueStore) -> None:
        self._store = store

    def put_connector(self, name: str, state: State, worker_id: str,
                      trace: str | None = None) -> None:
        """Record a connector's state."""
        self._put(f"status-connector-{name}", state, worker_id, trace)

    def put_task(self, name: str, task: int, state: State, worker_id: str,
                 trace: str | None = None) -> None:
        """Record a task's state."""
        self._put(f"status-task-{name}-{task}", state, worker_id, trace)

    def _put(self, key: str, state: State, worker_id: str, trace: str | None) -> None:
        data = {"state": state.value, "worker_id": worker_id, "trace": trace}
        self._store.put(key, json.dumps(data).encode())

    def connector(self, name: str) -> dict[str, Any] | None:
        """A connector's last recorded state, or ``None``."""
        data = self._store.get(f"status-connector-{name}")
        return None if data is None else dict(json.loads(data))

    def tasks(self, name: str) -> dict[int, dict[str, Any]]:
        """The last recorded states of a connector's tasks, by number."""
        prefix = f"status-task-{name}-"
        result = {}
        for key, value in self._store.scan(prefix):
            suffix = key[len(prefix):]
            if suffix.isdigit():
                result[int(suffix)] = dict(json.loads(value))
        return result

    def delete(self, name: str) -> None:
        """Forget a connector's states and its tasks'."""
        keys = [f"status-connector-{name}"] + [
            f"status-task-{name}-{n}" for n in self.tasks(name)]
        self._store.put_many(dict.fromkeys(keys))
