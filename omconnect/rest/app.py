"""The FastAPI application: routes, error handlers, authentication, OpenAPI document.

FastAPI was chosen because it generates the OpenAPI document from the code (so
``specs/rest-api.yaml`` is checked against the code in CI and fuzzed with schemathesis),
validates request bodies against typed models (a wrong shape is a 400 naming the field),
and is well kept. Route functions are plain ``def``: FastAPI runs them on a thread pool,
where they may wait on the herder (stopping tasks takes up to the graceful timeout)
without holding up other requests.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI

from omconnect import __version__
from omconnect.rest.admin_api import router as admin_router
from omconnect.rest.auth import AuthMiddleware, RestAuth
from omconnect.rest.connectors_api import router as connectors_router
from omconnect.rest.errors import install_error_handlers
from omconnect.rest.locks import KeyedLocks
from omconnect.rest.plugins_api import router as plugins_router
from omconnect.rest.server_api import router as server_router
from omconnect.rest.server_api import server_info
from omconnect.runtime.herder_api import Herder

__all__ = ["build_app", "create_app", "openapi_document"]

_DESCRIPTION = (
    "Manage and monitor the connectors of an omconnect worker: OpenMessaging Connect's "
    "endpoints plus Kafka Connect's set, with Kafka Connect's JSON shapes. Errors are "
    '`{"error_code": <HTTP status>, "message": "..."}`. When the worker sets '
    "`rest.auth.token` or `rest.auth.basic.*`, every request must authenticate "
    "(401 otherwise). See docs/rest-api.md.")

_TAGS = [
    {"name": "connectors", "description": "Create, inspect, change and control connectors."},
    {"name": "tasks", "description": "A connector's tasks."},
    {"name": "offsets", "description": "Committed offsets (changed only while STOPPED)."},
    {"name": "plugins", "description": "Installed plugins; config validation."},
    {"name": "server", "description": "Version and metrics."},
]


def build_app() -> FastAPI:
    """The application with its routes and error handlers, serving no herder yet.

    :func:`create_app` attaches a herder; the OpenAPI document comes from this alone.
    """
    app = FastAPI(title="omconnect REST API", version=__version__, description=_DESCRIPTION,
                  openapi_tags=_TAGS, docs_url=None, redoc_url=None,
                  strict_content_type=False)
    app.include_router(server_router)
    app.include_router(connectors_router)
    app.include_router(plugins_router)
    app.include_router(admin_router)
    install_error_handlers(app)

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = openapi_document(app)
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
    return app


def create_app(herder: Herder, *, auth: RestAuth | None = None) -> FastAPI:
    """The REST API of ``herder`` as an ASGI application.

    Args:
        herder: The herder to serve (started, or only opened for offline use).
        auth: Who may call it; default the worker config's ``rest.auth.*`` settings.

    Raises:
        ConfigError: The ``rest.auth.*`` settings are invalid.

    """
    auth = auth if auth is not None else RestAuth.from_worker_config(herder.config.values)
    app = build_app()
    app.state.herder = herder
    app.state.locks = KeyedLocks()
    app.state.server_info = server_info(herder)
    app.state.auth = auth
    if auth.enabled:
        app.add_middleware(AuthMiddleware, auth=auth)
    return app


def openapi_document(app: FastAPI) -> dict[str, Any]:
    """FastAPI's OpenAPI document of ``app``, with the error responses as they are served.

    FastAPI documents a 422 for every validation error; this API answers 400 (Kafka
    Connect's code), so 422 becomes 400. Every operation may answer 401 (when
    authentication is configured) and 500 (the worker failed, e.g. its transport).
    """
    from fastapi.openapi.utils import get_openapi

    document = get_openapi(title=app.title, version=app.version, description=app.description,
                           routes=app.routes, tags=app.openapi_tags)
    def response(text: str) -> dict[str, Any]:
        return {"description": text, "content": {"application/json": {
            "schema": {"$ref": "#/components/schemas/ErrorResponse"}}}}

    for path in document["paths"].values():
        for operation in path.values():
            summary, _, details = _unwrapped(operation.get("description", "")).partition(
                "\n\n")
            operation["summary"] = summary.rstrip(".")
            operation["description"] = details or summary
            responses = operation["responses"]
            if responses.pop("422", None) is not None:
                responses.setdefault("400", response(
                    "Bad request: invalid JSON or parameters, naming the field."))
            responses["401"] = response("Authentication required or invalid credentials "
                                        "(only when the worker configures rest.auth.*).")
            responses["500"] = response("The worker failed (e.g. its transport); the "
                                        "message says why.")
            operation["security"] = [{}, {"bearerAuth": []}, {"basicAuth": []}]
    schemas = document.setdefault("components", {}).setdefault("schemas", {})
    for unused in ("HTTPValidationError", "ValidationError"):
        schemas.pop(unused, None)
    document["components"]["securitySchemes"] = {
        "bearerAuth": {"type": "http", "scheme": "bearer",
                       "description": "The worker's rest.auth.token."},
        "basicAuth": {"type": "http", "scheme": "basic",
                      "description": "The worker's rest.auth.basic.user and password."},
    }
    return document


def _unwrapped(docstring: str) -> str:
    """A docstring's paragraphs as single lines, its ``literals`` in Markdown's quotes."""
    paragraphs = [" ".join(p.split()) for p in docstring.strip().split("\n\n")]
    return "\n\n".join(paragraphs).replace("``", "`")
