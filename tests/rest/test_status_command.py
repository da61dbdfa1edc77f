"""``omconnect status``: the dashboard's table as text, from a live worker's REST API or
from a worker config's recorded statuses."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from rest_helpers import wait_for_state

from omconnect.cli import main
from omconnect.config.types import Password
from omconnect.rest import RestServer, start_server
from omconnect.rest.auth import RestAuth
from omconnect.runtime import StandaloneHerder


def _pipeline(herder: StandaloneHerder, tmp_path: Path) -> None:
    herder.create_connector({"name": "orders", "connector.class": "datagen",
                             "quickstart": "orders", "topic": "orders", "rate": "500",
                             "batch.size": "50"})
    herder.create_connector({"name": "copy", "connector.class": "FileStreamSink",
                             "topics": "orders", "file": str(tmp_path / "orders.txt")})


def _rows(out: str) -> dict[str, list[str]]:
    lines = out.strip().splitlines()
    return {line.split()[0]: line.split() for line in lines[1:] if not line.startswith(" ")}


def test_the_table_shows_states_rates_and_counts_of_a_live_worker(
        herder: StandaloneHerder, server: RestServer, client: Any, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    _pipeline(herder, tmp_path)
    wait_for_state(client, "orders", "RUNNING")
    time.sleep(1.0)
    assert main(["status", "--url", server.url, "--interval", "1"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].split()[:4] == ["CONNECTOR/TASK", "TYPE", "STATE", "WORKER"]
    rows = _rows(out)
    assert rows["orders"][1:3] == ["source", "RUNNING"]
    assert rows["copy"][1:3] == ["sink", "RUNNING"]
    assert float(rows["orders"][4]) > 0, "records/s of a running source"
    assert int(rows["orders"][5]) > 0
    assert "task 0" in out


def test_json_prints_the_summary(herder: StandaloneHerder, server: RestServer, client: Any,
                                 tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _pipeline(herder, tmp_path)
    wait_for_state(client, "copy", "RUNNING")
    assert main(["status", "--url", server.url, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert {c["name"]: c["state"] for c in data["connectors"]} == {
        "copy": "RUNNING", "orders": "RUNNING"}


def test_a_token_comes_from_the_environment(herder: StandaloneHerder, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    served = start_server(herder, port=0, auth=RestAuth(token=Password("s3cret")))
    try:
        assert main(["status", "--url", served.url, "--interval", "0"]) == 1
        assert "OMCONNECT_REST_TOKEN" in capsys.readouterr().err
        monkeypatch.setenv("OMCONNECT_REST_TOKEN", "s3cret")
        assert main(["status", "--url", served.url, "--interval", "0"]) == 0
    finally:
        served.stop()


def test_an_unreachable_worker_is_an_error_naming_it(capsys: pytest.CaptureFixture[str]
                                                     ) -> None:
    assert main(["status", "--url", "http://127.0.0.1:9", "--interval", "0"]) == 1
    assert "cannot reach http://127.0.0.1:9" in capsys.readouterr().err


def test_the_worker_option_shows_recorded_states_without_a_rest_api(
        worker_config: dict[str, Any], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    worker_file = tmp_path / "worker.properties"
    worker_file.write_text("".join(f"{k}={v}\n" for k, v in worker_config.items()))
    from omconnect.config.files import load_config_file
    from omconnect.runtime.worker_config import WorkerConfig

    config = WorkerConfig.parse(load_config_file(str(worker_file)), origin=str(worker_file))
    with StandaloneHerder(config) as herder:
        _pipeline(herder, tmp_path)
        herder.pause_connector("copy")
        assert main(["status", "--worker", str(worker_file)]) == 0
    rows = _rows(capsys.readouterr().out)
    assert rows["copy"][1:3] == ["sink", "PAUSED"]
    assert rows["orders"][1:3] == ["source", "RUNNING"]
    assert rows["orders"][4:] == ["-", "-", "-", "-", "-"]
