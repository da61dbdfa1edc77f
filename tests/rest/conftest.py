"""A running worker (herder on the embedded transport in tmp_path) with its REST API on a
free port, and an httpx client talking to it over a real connection. Needs the ``rest``
extra (the unit tox environment installs it).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from omconnect.rest import RestServer, start_server
from omconnect.runtime import StandaloneHerder


@pytest.fixture
def worker_config(tmp_path: Path) -> dict[str, Any]:
    return {
        "transport": "embedded",
        "embedded.path": str(tmp_path / "data"),
        "offset.flush.interval.ms": 100,
        "task.shutdown.graceful.timeout.ms": 2000,
        "offset.flush.timeout.ms": 1000,
    }


@pytest.fixture
def herder(worker_config: dict[str, Any]) -> Iterator[StandaloneHerder]:
    with StandaloneHerder(worker_config) as running:
        yield running


@pytest.fixture
def server(herder: StandaloneHerder) -> Iterator[RestServer]:
    served = start_server(herder, port=0)
    yield served
    served.stop()


@pytest.fixture
def client(server: RestServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, timeout=30) as http:
        yield http
