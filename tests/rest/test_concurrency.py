"""Concurrent requests on one connector are serialised: no change is lost, and a status
read is never half way through a change.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
from rest_helpers import wait_for_state

from omconnect.rest import RestServer
from omconnect.rest.locks import KeyedLocks


def _create(client: httpx.Client, tmp_path: Path) -> None:
    (tmp_path / "in.txt").write_text("x\n")
    response = client.post("/connectors", json={"name": "reader", "config": {
        "connector.class": "FileStreamSource", "file": str(tmp_path / "in.txt"),
        "topic": "lines"}})
    assert response.status_code == 201, response.text
    wait_for_state(client, "reader", "RUNNING")


def test_concurrent_patches_of_one_connector_lose_no_change(server: RestServer,
                                                            client: httpx.Client,
                                                            tmp_path: Path):
    # Validation takes a while (as when a connector checks a remote system), so each
    # PATCH's read-merge-write spans time in which the others run.
    response = client.post("/connectors", json={"name": "slow", "config": {
        "connector.class": "rest_connectors:SlowValidatingSource",
        "validate.delay.ms": "50"}})
    assert response.status_code == 201, response.text
    keys = [f"note.{n}" for n in range(6)]

    def patch(key: str) -> int:
        with httpx.Client(base_url=server.url, timeout=60) as own:
            return own.patch("/connectors/slow/config", json={key: "set"}).status_code

    with ThreadPoolExecutor(len(keys)) as pool:
        assert list(pool.map(patch, keys)) == [200] * len(keys)
    config = client.get("/connectors/slow/config").json()
    assert {key: config.get(key) for key in keys} == dict.fromkeys(keys, "set")
    wait_for_state(client, "slow", "RUNNING")


def test_a_status_read_during_pauses_and_resumes_is_consistent(server: RestServer,
                                                               client: httpx.Client,
                                                               tmp_path: Path):
    _create(client, tmp_path)
    done = threading.Event()
    seen: list[tuple[str, list[str]]] = []

    def read() -> None:
        with httpx.Client(base_url=server.url, timeout=60) as own:
            while not done.is_set():
                status = own.get("/connectors/reader/status").json()
                seen.append((status["connector"]["state"],
                             [task["state"] for task in status["tasks"]]))

    reader = threading.Thread(target=read)
    reader.start()
    try:
        for _ in range(15):
            assert client.put("/connectors/reader/pause").status_code == 202
            assert client.put("/connectors/reader/resume").status_code == 202
    finally:
        done.set()
        reader.join()
    assert seen
    for connector, tasks in seen:
        assert tasks == [connector], f"connector {connector} with tasks {tasks}"


def test_per_connector_locks_are_dropped_when_unused():
    locks = KeyedLocks()
    order: list[str] = []
    with locks.hold("a"):
        other = threading.Thread(target=lambda: _hold(locks, "a", order))
        other.start()
        with locks.hold("b"):  # another connector does not wait for "a"
            order.append("b")
        order.append("a-first")
    other.join()
    assert order == ["b", "a-first", "a-second"]
    assert len(locks) == 0


def _hold(locks: KeyedLocks, key: str, order: list[str]) -> None:
    with locks.hold(key):
        order.append(f"{key}-second")
