"""Connector configs, target states and last known statuses in the transport's KV store.

Layout:

* namespace ``config.storage.namespace`` (default ``connect-configs-<standalone id>``), key
  ``connector-<name>``: ``{"config": {...}, "target": "RUNNING"|"PAUSED"|"STOPPED",
  "origin": "command-line"|"api"}`` as JSON. One key per connector, so a config and its
  target state change together. ``origin`` says where the connector came from: a config
  file on ``omconnect standalone``'s command line (run again only when given again) or
  the REST/Python API (run by every start of the worker). A record without one is
  ``api``.
* namespace ``status.storage.namespace`` (default ``connect-status-<standalone id>``), keys
  ``status-connector-<name>`` and ``status-task-<name>-<n>``:
  ``{"state": ..., "worker_id": ..., "trace": ...}``; and
  ``status-topic-<name as a JSON string>-<topic>``: ``{"topic": {"name": ...,
  "connector": ..., "task": ..., "discoverTimestamp": ...}}`` for each of the connector's
  active topics (Kafka Connect's record, KIP-558).

Configs are stored as written: the herder stores ``${env:...}``/``${file:...}``
references unresolved (it resolves them when it starts a connector), so secrets given
through references never reach the store; a literal password in a config is stored as
written. Task configs (derived from resolved configs) are not stored.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import attrs

from omconnect.config.types import Password
from omconnect.connector.lifecycle import State
from omconnect.transport.spi import KeyValueStore

__all__ = ["API", "COMMAND_LINE", "TARGET_STATES", "ConfigStore", "StatusStore",
           "StoredConnector"]

TARGET_STATES = (State.RUNNING, State.PAUSED, State.STOPPED)
COMMAND_LINE = "command-line"
"""Origin of a connector given as a file on ``omconnect standalone``'s command line."""
API = "api"
"""Origin of a connector created through the REST or Python API."""
_CONNECTOR = "connector-"


@attrs.frozen
class StoredConnector:
    """A connector as the config store holds it.

    Attributes:
        config: Its config, as written.
        target: Its target state.
        origin: :data:`COMMAND_LINE` or :data:`API`.

    """

    config: dict[str, Any]
    target: State
    origin: str = API


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

    def put(self, name: str, config: Mapping[str, Any], target: State,
            origin: str = API) -> None:
        """Store ``name``'s config, target state and origin together."""
        data = json.dumps({"config": dict(config), "target": target.value,
                           "origin": origin}, sort_keys=True, default=_jsonable)
        self._store.put(_CONNECTOR + name, data.encode())

    def delete(self, name: str) -> None:
        """Forget ``name``."""
        self._store.put(_CONNECTOR + name, None)

    def close(self) -> None:
        """Close the underlying store."""
        self._store.close()

    def get(self, name: str) -> StoredConnector | None:
        """``name`` as stored, or ``None``."""
        data = self._store.get(_CONNECTOR + name)
        return None if data is None else _decode(data)

    def all(self) -> dict[str, StoredConnector]:
        """Every stored connector, by name."""
        return {key[len(_CONNECTOR):]: _decode(value)
                for key, value in self._store.scan(_CONNECTOR)}


def _decode(data: bytes) -> StoredConnector:
    record = json.loads(data)
    return StoredConnector(config=dict(record["config"]),
                           target=State(record.get("target", "RUNNING")),
                           origin=str(record.get("origin") or API))


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

    def put_topic(self, name: str, topic: str, task: int, discovered_ms: int) -> None:
        """Record ``topic`` as an active topic of connector ``name``."""
        data = {"topic": {"name": topic, "connector": name, "task": task,
                          "discoverTimestamp": discovered_ms}}
        self._store.put(_topic_prefix(name) + topic, json.dumps(data).encode())

    def topics(self, name: str) -> list[str]:
        """The active topics recorded for connector ``name``."""
        prefix = _topic_prefix(name)
        return [key[len(prefix):] for key, _ in self._store.scan(prefix)]

    def delete_topics(self, name: str) -> None:
        """Forget connector ``name``'s active topics."""
        prefix = _topic_prefix(name)
        keys = [key for key, _ in self._store.scan(prefix)]
        if keys:
            self._store.put_many(dict.fromkeys(keys))

    def close(self) -> None:
        """Close the underlying store."""
        self._store.close()

    def delete(self, name: str) -> None:
        """Forget a connector's states, its tasks' and its active topics."""
        keys = [f"status-connector-{name}"] + [
            f"status-task-{name}-{n}" for n in self.tasks(name)]
        keys += [key for key, _ in self._store.scan(_topic_prefix(name))]
        self._store.put_many(dict.fromkeys(keys))


def _topic_prefix(name: str) -> str:
    # The name as a JSON string ends at its one unescaped quote, so no connector's prefix
    # is the start of another's ("a" vs "a-b").
    return f"status-topic-{json.dumps(name)}-"
