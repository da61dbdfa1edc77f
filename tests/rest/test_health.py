"""``GET /health`` (KIP-1017): 200 once the worker runs and its herder answers, 503 while
it is not started or when the herder does not answer in time."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import httpx
import pytest

from omconnect.rest import RestServer, server_api, start_server
from omconnect.runtime import StandaloneHerder


def test_a_running_worker_is_healthy(client: httpx.Client) -> None:
    response = client.get("/health")
    assert response.status_code == 200
    assert response.json() == {
        "status": "healthy",
        "message": "Worker has completed startup and is ready to handle requests."}


def test_a_worker_not_started_answers_503_until_it_starts(
        worker_config: dict[str, Any]) -> None:
    herder = StandaloneHerder(worker_config)
    herder.open()
    served = start_server(herder, port=0)
    try:
        response = httpx.get(served.url + "/health", timeout=30)
        assert response.status_code == 503
        assert response.json()["status"] == "starting"
        herder.start()
        assert httpx.get(served.url + "/health", timeout=30).status_code == 200
    finally:
        served.stop()
        herder.stop()


def test_a_herder_busy_beyond_the_timeout_answers_503_unhealthy(
        server: RestServer, client: httpx.Client, monkeypatch: pytest.MonkeyPatch,
        tmp_path: Path) -> None:
    monkeypatch.setattr(server_api, "HEALTH_TIMEOUT_S", 0.3)
    started = threading.Event()

    def create() -> None:
        with httpx.Client(base_url=server.url, timeout=60) as own:
            started.set()
            own.post("/connectors", json={"name": "slow", "config": {
                "connector.class": "rest_connectors:SlowStartingSource",
                "start.delay.ms": "3000"}})

    creating = threading.Thread(target=create)
    creating.start()
    started.wait(10)
    try:
        seen = [client.get("/health") for _ in range(6)]
        busy = [r for r in seen if r.status_code == 503]
        assert busy, [r.status_code for r in seen]
        assert busy[0].json()["status"] == "unhealthy"
    finally:
        creating.join(60)
    assert client.get("/health").status_code == 200
