"""The REST API of the standalone runtime: OpenMessaging Connect's endpoints plus Kafka
Connect's set, served beside a running worker.

Start it next to a :class:`~omconnect.runtime.StandaloneHerder`::

    with StandaloneHerder(worker_config) as herder:
        server = start_server(herder, port=8083)   # 127.0.0.1 unless told otherwise
        ...
        server.stop()

or from the command line: ``omconnect standalone worker.properties --rest-port 8083``.
The endpoints, their JSON shapes, authentication and errors are in ``docs/rest-api.md``;
the OpenAPI document is ``specs/rest-api.yaml`` (``python -m omconnect.rest.openapi``).

This package needs the ``rest`` extra (FastAPI and uvicorn): importing it without them
raises :class:`~omconnect.errors.MissingExtraError` naming the extra.
"""

from __future__ import annotations

from omconnect.plugins import require

require("fastapi", plugin="REST API", extra="rest")
require("uvicorn", plugin="REST API", extra="rest")

from omconnect.rest.app import create_app  # noqa: E402
from omconnect.rest.auth import RestAuth  # noqa: E402
from omconnect.rest.server import RestServer, start_server  # noqa: E402

__all__ = ["RestAuth", "RestServer", "create_app", "start_server"]
