"""Helpers of the REST API's tests."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import httpx
import pytest


def eventually(condition: Callable[[], Any], timeout: float = 15.0,
               what: str = "condition") -> Any:
    """Poll ``condition`` until it is truthy; fail the test after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.05)


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
