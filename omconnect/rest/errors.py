"""Errors as JSON ``{"error_code": <HTTP status>, "message": "..."}``, from every source.

::

    ConfigError                      400  invalid config or request (names the key)
    ConnectorNotFoundError           404  no such connector or task
    DisabledByWorkerError            403  turned off in the worker config
    ConnectorExistsError             409  create of a name in use
    ConnectorStateError              409  not allowed in the current state
    RequestValidationError           400  bad JSON, wrong types, unknown fields (names them)
    starlette HTTPException          its status (404 no route, 405 method not allowed, ...)
    ApiError                         its status (401, 415, ...)
    any other ConnectError           500  the worker failed (e.g. its transport)
    any other exception              500  a bug; logged with its trace

A ``ConfigError`` listing problems per key adds ``"errors": {key: [messages]}``.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from omconnect.errors import ConfigError, ConnectError, IllegalStateError
from omconnect.runtime.herder_errors import ConnectorNotFoundError, DisabledByWorkerError

__all__ = ["ApiError", "error_response", "install_error_handlers", "status_of"]

_log = logging.getLogger("omconnect.rest")


class ApiError(Exception):
    """An error the API answers with ``status`` and ``message`` (and per-key ``errors``).

    Args:
        status: The HTTP status.
        message: What is wrong and how to fix it.
        errors: Messages per config key, if any.
        headers: Extra response headers (e.g. ``WWW-Authenticate``).

    """

    def __init__(self, status: int, message: str, *,
                 errors: Mapping[str, Sequence[str]] | None = None,
                 headers: Mapping[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.errors = {k: list(v) for k, v in (errors or {}).items()}
        self.headers = dict(headers or {})


def status_of(error: ConnectError) -> int:
    """The HTTP status of an omconnect error (see the module docstring)."""
    if isinstance(error, ConfigError):
        return 400
    if isinstance(error, ConnectorNotFoundError):
        return 404
    if isinstance(error, DisabledByWorkerError):
        return 403
    if isinstance(error, IllegalStateError):
        return 409
    return 500


def error_response(status: int, message: str, *,
                   errors: Mapping[str, Sequence[str]] | None = None,
                   headers: Mapping[str, str] | None = None) -> JSONResponse:
    """The JSON error response ``{"error_code": status, "message": message}``."""
    body: dict[str, Any] = {"error_code": status, "message": message}
    if errors:
        body["errors"] = {k: list(v) for k, v in errors.items()}
    return JSONResponse(body, status_code=status, headers=dict(headers or {}))


def _api_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, ApiError)
    if exc.status >= 500:
        # Not the cause's traceback: its message may hold the secrets scrubbed from this one.
        _log.error("%s %s failed: %s", request.method, request.url.path, exc.message)
    return error_response(exc.status, exc.message, errors=exc.errors, headers=exc.headers)


def _connect_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, ConnectError)
    status = status_of(exc)
    if status >= 500:
        _log.error("%s %s failed: %s", request.method, request.url.path, exc, exc_info=exc)
    errors = exc.errors if isinstance(exc, ConfigError) else None
    return error_response(status, str(exc), errors=errors)


def _validation_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    problems = [_describe(error) for error in exc.errors()]
    message = problems[0] if len(problems) == 1 else \
        f"{len(problems)} problems in the request: " + "; ".join(problems)
    return error_response(400, message)


def _http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    message = str(exc.detail)
    if exc.status_code == 404 and message == "Not Found":
        message = f"no endpoint {request.url.path}; see GET /openapi.json for the endpoints"
    elif exc.status_code == 405:
        message = f"{request.method} is not allowed on {request.url.path}"
    return error_response(exc.status_code, message, headers=getattr(exc, "headers", None))


def _unexpected(request: Request, exc: Exception) -> JSONResponse:
    _log.error("%s %s failed unexpectedly", request.method, request.url.path, exc_info=exc)
    return error_response(500, f"internal error: {type(exc).__name__}: {exc}")


def install_error_handlers(app: FastAPI) -> None:
    """Make every error of ``app`` a JSON error response."""
    app.add_exception_handler(ApiError, _api_error)
    app.add_exception_handler(ConnectError, _connect_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(Exception, _unexpected)


def _describe(error: Mapping[str, Any]) -> str:
    """One pydantic/FastAPI validation error as a sentence naming where it is."""
    kind = str(error.get("type", ""))
    location = list(error.get("loc", ()))
    if kind == "json_invalid":
        position = location[1] if len(location) > 1 else "?"
        reason = (error.get("ctx") or {}).get("error", "invalid JSON")
        return f"the request body is not valid JSON: {reason} (at character {position})"
    where = _location(location)
    message = str(error.get("msg", "invalid"))
    if kind == "missing":
        return f"{where} is missing; add it"
    if kind == "extra_forbidden":
        return f"{where} is not a known field; remove it"
    if kind in ("model_attributes_type", "dict_type") and location == ["body"]:
        return f"the request body must be a JSON object: {message}"
    return f"{where}: {message}"


def _location(location: Iterable[Any]) -> str:
    parts = list(location)
    if not parts:
        return "the request"
    source, rest = parts[0], parts[1:]
    if source == "body":
        if not rest:
            return "the request body"
        path = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in rest)
        return "body" + path
    if source in ("query", "path", "header") and rest:
        return f"{source} parameter {rest[0]!r}"
    return ".".join(str(p) for p in parts)
