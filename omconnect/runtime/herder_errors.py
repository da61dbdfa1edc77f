"""Errors of the herder's API, each mapping to one HTTP status in the REST API.

::

    ConnectError
    ├── ConfigError (ValueError)             400: invalid config or request (names the key)
    ├── ConnectorNotFoundError (LookupError) 404: no connector (or task) of that name
    ├── DisabledByWorkerError (PermissionError) 403: turned off in the worker config
    └── IllegalStateError (RuntimeError)
        ├── ConnectorExistsError             409: create of a name already in use
        └── ConnectorStateError              409: not allowed in the current state
"""

from __future__ import annotations

from omconnect.errors import ConnectError, IllegalStateError

__all__ = ["ConnectorExistsError", "ConnectorNotFoundError", "ConnectorStateError",
           "DisabledByWorkerError"]


class ConnectorNotFoundError(ConnectError, LookupError):
    """No connector (or task) of that name."""


class DisabledByWorkerError(ConnectError, PermissionError):
    """The worker config turns this operation off (e.g. ``topic.tracking.allow.reset``)."""


class ConnectorExistsError(IllegalStateError):
    """A connector of that name already exists."""


class ConnectorStateError(IllegalStateError):
    """The operation is not allowed in the connector's current state (e.g. changing the
    offsets of a running connector).
    """
