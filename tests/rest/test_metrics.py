"""``GET /metrics``: the runtime's per-task metrics in Prometheus' text format."""

from __future__ import annotations

import re
from pathlib import Path

import attrs
import httpx
from rest_helpers import eventually, wait_for_state

from omconnect.rest.prometheus import TASK_METRICS
from omconnect.runtime import TaskMetricsSnapshot

# The text exposition format: comments, and samples `name{label="value",...} number`.
_SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)\{((?:[a-zA-Z_][a-zA-Z0-9_]*="'
                     r'(?:[^"\\\n]|\\[\\"n])*",?)*)\} (-?[0-9.e+]+)$')
_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"')


def _parse(text: str) -> tuple[dict[str, str], dict[tuple[str, frozenset[tuple[str, str]]],
                                                     float]]:
    """The TYPE of each family and the value of each sample, checking every line."""
    types: dict[str, str] = {}
    samples: dict[tuple[str, frozenset[tuple[str, str]]], float] = {}
    assert text.endswith("\n")
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split(" ")
            assert kind in ("counter", "gauge")
            types[name] = kind
        elif line.startswith("# HELP "):
            assert len(line.split(" ", 3)) == 4
        else:
            match = _SAMPLE.match(line)
            assert match, f"not a sample line: {line!r}"
            name, labels, value = match.groups()
            assert name in types, f"{name} has no TYPE line before it"
            unescaped = frozenset((k, v.replace('\\"', '"').replace("\\\\", "\\"))
                                  for k, v in _LABEL.findall(labels))
            samples[(name, unescaped)] = float(value)
    return types, samples


def _labels(**labels: str) -> frozenset[tuple[str, str]]:
    return frozenset(labels.items())


def test_metrics_count_what_the_tasks_moved(client: httpx.Client, tmp_path: Path):
    source_file = tmp_path / "in.txt"
    source_file.write_text("".join(f"line {n}\n" for n in range(25)))
    name = 'lines "all" of them'
    assert client.post("/connectors", json={"name": name, "config": {
        "connector.class": "FileStreamSource", "file": str(source_file),
        "topic": "lines"}}).status_code == 201
    assert client.post("/connectors/writer", json={
        "connector.class": "FileStreamSink", "file": str(tmp_path / "out.txt"),
        "topics": "lines"}).status_code == 201
    wait_for_state(client, name, "RUNNING")
    task = _labels(connector=name, task="0")

    def metrics() -> tuple[dict[str, str], dict[tuple[str, frozenset[tuple[str, str]]],
                                                 float]]:
        response = client.get("/metrics")
        assert response.status_code == 200
        assert response.headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8"
        return _parse(response.text)

    eventually(lambda: metrics()[1].get(("omconnect_task_put_total", _labels(
        connector="writer", task="0"))) == 25, what="the sink to put 25 records")
    eventually(lambda: metrics()[1].get(("omconnect_task_acknowledged_total", task)) == 25,
               what="the source to see its 25 records acknowledged")
    types, samples = metrics()
    assert samples[("omconnect_task_polled_total", task)] == 25
    assert samples[("omconnect_task_acknowledged_total", task)] == 25
    assert types["omconnect_task_polled_total"] == "counter"
    assert types["omconnect_task_in_flight_records"] == "gauge"
    assert samples[("omconnect_connector_state", _labels(connector=name,
                                                         state="RUNNING"))] == 1
    assert samples[("omconnect_connector_state", _labels(connector=name,
                                                         state="PAUSED"))] == 0
    assert samples[("omconnect_task_state", _labels(connector=name, task="0",
                                                    state="RUNNING"))] == 1

    assert client.put("/connectors/writer/pause").status_code == 202
    _, samples = metrics()
    assert samples[("omconnect_task_state", _labels(connector="writer", task="0",
                                                    state="PAUSED"))] == 1


def test_every_task_metric_of_the_runtime_is_exported():
    numbers = {field.name for field in attrs.fields(TaskMetricsSnapshot)
               if field.type in ("int", "float", "int | None", "float | None")}
    exported = {metric.field for metric in TASK_METRICS}
    assert numbers - {"task", "taken_at"} == exported
    for metric in TASK_METRICS:
        assert metric.name.startswith("omconnect_task_")
        assert metric.name.endswith("_total") == (metric.kind == "counter")


def test_without_connectors_only_the_workers_own_metrics_have_samples(
        client: httpx.Client):
    types, samples = _parse(client.get("/metrics").text)
    assert {name for name, _ in samples} == {
        "omconnect_worker_rebalances_total", "omconnect_worker_rebalance_seconds_total",
        "omconnect_worker_rebalancing", "omconnect_worker_assigned_connectors",
        "omconnect_worker_assigned_tasks", "omconnect_worker_leader"}
    assert samples[("omconnect_worker_assigned_tasks",
                    frozenset({("worker", client.get("/").json()["worker_id"])}))] == 0
    assert "omconnect_task_polled_total" in types
