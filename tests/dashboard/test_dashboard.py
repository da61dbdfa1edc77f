"""The status dashboard (``GET /ui``) in headless Chromium: it loads without a console
error, shows a running pipeline's counts rising, and its buttons act through the REST API;
a worker of a cluster shows every worker and the counts of tasks running on the others.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from omconnect.config.types import Password
from omconnect.rest import RestServer, start_server
from omconnect.rest.auth import RestAuth
from omconnect.runtime import StandaloneHerder
from omconnect.runtime.distributed import DistributedHerder
from omconnect.testing.waiting import eventually

pytestmark = pytest.mark.browser

DOCS_SCREENSHOT = Path(__file__).resolve().parents[2] / "docs" / "images" / "dashboard.png"


@pytest.fixture
def worker(tmp_path: Path) -> Iterator[StandaloneHerder]:
    config = {"transport": "embedded", "embedded.path": str(tmp_path / "data"),
              "offset.flush.interval.ms": 200, "task.shutdown.graceful.timeout.ms": 2000}
    with StandaloneHerder(config) as herder:
        herder.create_connector({"name": "orders-source", "connector.class": "datagen",
                                 "quickstart": "orders", "topic": "orders", "rate": "200",
                                 "batch.size": "20"})
        herder.create_connector({"name": "orders-sink", "connector.class": "FileStreamSink",
                                 "topics": "orders", "file": str(tmp_path / "orders.txt")})
        yield herder


@pytest.fixture
def server(worker: StandaloneHerder) -> Iterator[RestServer]:
    served = start_server(worker, port=0)
    yield served
    served.stop()


def _records(page: Any, connector: str) -> int:
    text = page.locator(f'tr.connector[data-connector="{connector}"] td.records').inner_text()
    return int(text)


def _wait(condition: Any) -> None:
    eventually(condition, timeout=30, what="the page to show it", interval=0.2)


def test_the_dashboard_shows_counts_rising_and_pauses_through_the_api(
        browser: Any, server: RestServer) -> None:
    page = browser.new_page(viewport={"width": 1280, "height": 420})
    console_errors: list[str] = []
    page.on("console", lambda m: console_errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: console_errors.append(str(e)))
    page.goto(server.url + "/ui")
    row = page.locator('tr.connector[data-connector="orders-source"]')
    row.wait_for()
    _wait(lambda: row.locator("td.state").inner_text() == "RUNNING")
    first_source, first_sink = _records(page, "orders-source"), _records(page, "orders-sink")
    _wait(lambda: _records(page, "orders-source") > first_source + 100
          and _records(page, "orders-sink") > first_sink + 100)
    _wait(lambda: float(row.locator("td.rate").inner_text().replace("\u2013", "0")) > 0)
    if os.environ.get("OMCONNECT_UPDATE_SCREENSHOT"):  # the picture in docs/rest-api.md
        time.sleep(40)  # a chart with some history
        page.screenshot(path=str(DOCS_SCREENSHOT))

    row.get_by_role("button", name="Pause").click()
    _wait(lambda: row.locator("td.state").inner_text() == "PAUSED")
    status = httpx.get(server.url + "/connectors/orders-source/status").json()
    assert status["connector"]["state"] == "PAUSED"
    row.get_by_role("button", name="Resume").click()
    _wait(lambda: row.locator("td.state").inner_text() == "RUNNING")
    assert console_errors == []
    page.close()


def test_with_a_token_the_page_asks_for_it_and_then_acts_with_it(
        browser: Any, worker: StandaloneHerder) -> None:
    served = start_server(worker, port=0, auth=RestAuth(token=Password("s3cret")))
    try:
        assert httpx.get(served.url + "/summary").status_code == 401
        page = browser.new_page()
        page.goto(served.url + "/ui")  # the page itself holds no data: no credentials
        page.locator("#login").wait_for(state="visible")
        assert "authentication required" in page.locator("#error").inner_text()
        page.locator("#token").fill("s3cret")
        page.get_by_role("button", name="Use").click()
        row = page.locator('tr.connector[data-connector="orders-source"]')
        row.wait_for()
        row.get_by_role("button", name="Pause").click()
        _wait(lambda: row.locator("td.state").inner_text() == "PAUSED")
        assert worker.connector_status("orders-source").connector.state.value == "PAUSED"
        page.close()
    finally:
        served.stop()


@pytest.fixture
def cluster_servers(tmp_path: Path) -> Iterator[list[RestServer]]:
    """Two workers of one cluster in this process, each with its REST API."""
    herders: list[DistributedHerder] = []
    servers: list[RestServer] = []
    try:
        for worker in ("w1", "w2"):
            herder = DistributedHerder({
                "transport": "embedded", "embedded.path": str(tmp_path / "data"),
                "embedded.session.timeout.ms": 3000, "group.id": "shown",
                "worker.id": worker, "offset.flush.interval.ms": 200,
                "task.shutdown.graceful.timeout.ms": 2000})
            herders.append(herder)
            server = start_server(herder, port=0)
            servers.append(server)
            herder.advertise(server.url)
            herder.start()
        herders[0].create_connector({"name": "orders-source", "connector.class": "datagen",
                                     "quickstart": "orders", "topic": "orders",
                                     "rate": "200", "batch.size": "20", "tasks.max": "4"})
        yield servers
    finally:
        for server in servers:
            server.stop()
        for herder in herders:
            herder.stop()


def test_the_dashboard_of_one_worker_shows_the_whole_cluster(
        browser: Any, cluster_servers: list[RestServer]) -> None:
    page = browser.new_page(viewport={"width": 1280, "height": 600})
    console_errors: list[str] = []
    page.on("console", lambda m: console_errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: console_errors.append(str(e)))
    page.goto(cluster_servers[0].url + "/ui")
    workers = page.locator("tr.worker")
    _wait(lambda: workers.count() == 2)
    _wait(lambda: page.locator("tr.worker td.role").all_inner_texts().count("leader") == 1)
    _wait(lambda: sum(int(t) for t in page.locator("tr.worker td.tasks").all_inner_texts())
          == 4)
    assert page.locator("#title").inner_text() == "omconnect cluster"
    tasks = page.locator("tr.task")
    _wait(lambda: tasks.count() == 4)
    # Each worker runs two tasks, and the counts of the other worker's tasks rise too.
    _wait(lambda: sorted(set(r.locator("td").nth(3).inner_text()
                             for r in tasks.all())) == ["w1", "w2"])
    _wait(lambda: all(int(r.locator("td").nth(6).inner_text()) > 0 for r in tasks.all()))
    assert console_errors == []
    page.close()
