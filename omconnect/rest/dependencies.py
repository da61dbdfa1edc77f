"""What route functions receive: the herder, the per-connector locks, JSON-only bodies,
and the documented error responses.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, Request

from omconnect.rest.errors import ApiError
from omconnect.rest.locks import KeyedLocks
from omconnect.rest.models import ErrorResponse
from omconnect.runtime.herder_api import Herder as RuntimeHerder

__all__ = ["Herder", "Locks", "error_responses", "require_json"]

_ERROR_TEXT = {
    400: "Bad request: invalid JSON, a wrong field, or an invalid config (naming the key).",
    403: "Turned off in the worker config (e.g. topic.tracking.enable=false).",
    404: "No such connector, task or plugin.",
    409: "Conflicts with the connector's state (e.g. it exists, or is not stopped).",
    415: "The body is not JSON (send Content-Type: application/json).",
}


def _herder(request: Request) -> RuntimeHerder:
    herder: RuntimeHerder = request.app.state.herder
    return herder


def _locks(request: Request) -> KeyedLocks:
    locks: KeyedLocks = request.app.state.locks
    return locks


Herder = Annotated[RuntimeHerder, Depends(_herder)]
"""The herder the app serves."""

Locks = Annotated[KeyedLocks, Depends(_locks)]
"""The per-connector locks of the app."""


def require_json(request: Request) -> None:
    """Refuse a body declared as anything but JSON (no Content-Type means JSON).

    Raises:
        ApiError: 415, naming the content type to send.

    """
    declared = request.headers.get("content-type")
    if declared is None:
        return
    media = declared.split(";", 1)[0].strip().lower()
    if media == "application/json" or (media.startswith("application/")
                                       and media.endswith("+json")):
        return
    raise ApiError(415, f"the body must be JSON; send Content-Type: application/json "
                   f"(got {declared!r})")


def error_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """The OpenAPI ``responses`` entries of these error statuses."""
    return {status: {"model": ErrorResponse, "description": _ERROR_TEXT[status]}
            for status in statuses}
