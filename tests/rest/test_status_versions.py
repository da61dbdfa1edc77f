"""Connector and task versions in statuses (Kafka Connect 4.1): shown while they run."""

from __future__ import annotations

from pathlib import Path

import httpx
from rest_helpers import wait_for_state

from omconnect import __version__


def test_a_running_connector_and_its_tasks_show_their_versions(client: httpx.Client,
                                                               tmp_path: Path) -> None:
    (tmp_path / "in.txt").write_text("a\n")
    response = client.post("/connectors", json={"name": "reader", "config": {
        "connector.class": "FileStreamSource", "file": str(tmp_path / "in.txt"),
        "topic": "lines"}})
    assert response.status_code == 201, response.text
    wait_for_state(client, "reader", "RUNNING")
    status = client.get("/connectors/reader/status").json()
    assert status["connector"]["version"] == __version__
    assert [task["version"] for task in status["tasks"]] == [__version__]
    assert client.get("/connectors/reader/tasks/0/status").json()["version"] == __version__


def test_a_stopped_connector_shows_no_version(client: httpx.Client, tmp_path: Path) -> None:
    (tmp_path / "in.txt").write_text("a\n")
    response = client.post("/connectors", json={"name": "reader", "initial_state": "STOPPED",
                                                "config": {
        "connector.class": "FileStreamSource", "file": str(tmp_path / "in.txt"),
        "topic": "lines"}})
    assert response.status_code == 201, response.text
    status = client.get("/connectors/reader/status").json()
    assert status["connector"]["state"] == "STOPPED"
    assert "version" not in status["connector"]
