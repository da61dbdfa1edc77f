"""Helpers of the REST API's tests."""

from __future__ import annotations

import httpx

from omconnect.testing.waiting import eventually


def state_of(client: httpx.Client, name: str) -> tuple[str, list[str]]:
    """The connector's state and its tasks' states, read through the API."""
    response = client.get(f"/connectors/{name}/status")
    assert response.status_code == 200, response.text
    status = response.json()
    return status["connector"]["state"], [task["state"] for task in status["tasks"]]


def wait_for_state(client: httpx.Client, name: str, state: str, tasks: int = 1) -> None:
    """Wait until the connector and ``tasks`` tasks are all in ``state``."""
    eventually(lambda: state_of(client, name) == (state, [state] * tasks), 15,
               f"{name} to be {state} with {tasks} task(s) {state}")
