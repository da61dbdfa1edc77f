"""Three ``omconnect distributed`` processes on the embedded transport (one data
directory, several processes): the scenarios of :mod:`cluster_scenarios`.
"""

from __future__ import annotations

import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cluster_scenarios import (
    check_failover,
    conflicting_writes,
    joining_moves_few,
    kill_trial,
    new_cluster,
    spread_and_visible,
    wait_spread,
)

from omconnect.cli import main
from omconnect.testing.cluster import ProcessCluster
from omconnect.testing.waiting import eventually

CI_TRIALS = 2


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("cluster")


@pytest.fixture(scope="module")
def cluster(workdir: Path, embedded_settings: dict[str, object]) -> Iterator[ProcessCluster]:
    with new_cluster(workdir, embedded_settings) as running:
        running.start_all()
        yield running


def test_a_connector_created_through_one_worker_is_visible_on_all_and_spread(
        cluster: ProcessCluster, workdir: Path) -> None:
    spread_and_visible(cluster, workdir)


def test_killed_workers_tasks_run_elsewhere_and_the_pipeline_loses_nothing(
        cluster: ProcessCluster, workdir: Path) -> None:
    outcomes = [kill_trial(cluster, workdir, trial) for trial in range(CI_TRIALS)]
    print("\n".join(o.row() for o in outcomes))
    check_failover(outcomes)


def test_conflicting_writes_to_two_workers_end_with_one_config(
        cluster: ProcessCluster, workdir: Path) -> None:
    conflicting_writes(cluster, workdir)


def test_a_joining_worker_moves_few_tasks(cluster: ProcessCluster, workdir: Path) -> None:
    joining_moves_few(cluster, workdir)


def test_any_worker_describes_the_whole_cluster(cluster: ProcessCluster, workdir: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    info = cluster.get(2, "/")
    assert info["mode"] == "distributed" and info["group_id"] == cluster.group
    assert info["worker_id"] == cluster.worker_id(2)
    cluster.create(0, "counted", {"connector.class": "datagen", "topic": "counted",
                                  "tasks.max": 6, "rate": 300, "quickstart": "users"})
    placement = wait_spread(cluster, "counted", [0, 1, 2])
    owners = {owner for _, owner in placement.values()}
    assert owners == {cluster.worker_id(i) for i in range(3)}

    def counted_everywhere() -> dict[str, Any] | None:
        summary = cluster.get(1, "/summary")
        tasks = next(c for c in summary["connectors"] if c["name"] == "counted")["tasks"]
        return summary if all(t["records"] > 0 for t in tasks) else None

    summary = eventually(counted_everywhere, 60, "counts of every worker's tasks")
    assert {w["id"]: (w["state"], w["reachable"]) for w in summary["workers"]} == \
        {cluster.worker_id(i): ("alive", True) for i in range(3)}
    assert sum(w["leader"] for w in summary["workers"]) == 1
    workers = cluster.get(0, "/workers")
    assert sum(w["tasks"] for w in workers["workers"]) == 6
    assert all(w["rebalances"] >= 1 for w in workers["workers"])
    text = _text(cluster, 0, "/metrics")
    mine = sum(1 for _, owner in placement.values() if owner == cluster.worker_id(0))
    assert f'omconnect_worker_assigned_tasks{{worker="{cluster.worker_id(0)}"}} {mine}' in text
    assert "omconnect_worker_rebalances_total" in text

    capsys.readouterr()
    assert main(["status", "--url", cluster.url(2), "--interval", "0"]) == 0
    table = capsys.readouterr().out
    assert "counted" in table and "REBALANCES" in table
    assert all(cluster.worker_id(i) in table for i in range(3))
    assert main(["status", "--worker", str(cluster.worker_file(0))]) == 0
    recorded = capsys.readouterr().out
    assert "counted" in recorded and "RUNNING" in recorded
    assert cluster.request(0, "DELETE", "/connectors/counted")[0] == 204


def _text(cluster: ProcessCluster, index: int, path: str) -> str:
    with urllib.request.urlopen(cluster.url(index) + path, timeout=30) as response:
        return response.read().decode()


def test_offsets_of_a_stopped_connector_change_through_any_worker_or_the_cli(
        cluster: ProcessCluster, workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = workdir / "offsets-in.txt"
    source.write_text("a\nb\nc\n", encoding="utf-8")
    cluster.create(0, "rewind", {"connector.class": "FileStreamSource", "file": source,
                                 "topic": "rewind"})
    committed = {"partition": {"filename": str(source)}, "offset": {"position": 6}}

    def offsets_committed() -> bool:
        status, body = cluster.request(1, "GET", "/connectors/rewind/offsets")
        listed = body["offsets"] if status == 200 else []  # 404 until worker 1 read it
        return bool(listed) and listed[0]["offset"]["position"] == 6

    eventually(offsets_committed, 60, "the source's offsets committed")
    body = {"offsets": [{"partition": committed["partition"], "offset": {"position": 2}}]}
    assert cluster.request(2, "PATCH", "/connectors/rewind/offsets", body)[0] == 409
    assert cluster.request(2, "PUT", "/connectors/rewind/stop")[0] == 204
    status, answer = cluster.request(2, "PATCH", "/connectors/rewind/offsets", body)
    assert status == 200, answer
    assert cluster.get(0, "/connectors/rewind/offsets")["offsets"][0]["offset"][
        "position"] == 2
    capsys.readouterr()
    assert main(["offsets", "reset", "rewind", "--worker", str(cluster.worker_file(1))]) == 0
    assert cluster.get(2, "/connectors/rewind/offsets") == {"offsets": []}
    assert cluster.request(0, "DELETE", "/connectors/rewind")[0] == 204
