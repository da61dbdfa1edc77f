"""A published Kafka Connect REST client, kafka-connect-py, drives a live worker: every
call it offers succeeds and answers what Kafka Connect would."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from omconnect.rest import RestServer
from omconnect.testing.waiting import eventually

kafka_connect = pytest.importorskip("kafka_connect", reason="tox -e unit installs "
                                    "kafka-connect-py")


def _until(condition: Any) -> None:
    eventually(condition, timeout=30, what="the worker to get there", interval=0.1)


def test_every_call_of_the_client_succeeds(server: RestServer, tmp_path: Path) -> None:
    client = kafka_connect.KafkaConnect(url=server.url)
    assert client.get_cluster_info()["version"]
    source_file = tmp_path / "in.txt"
    source_file.write_text("".join(f"line {n}\n" for n in range(50)))
    source = {"name": "reader", "config": {"connector.class": "FileStreamSource",
                                           "file": str(source_file), "topic": "lines"}}
    sink = {"name": "writer", "config": {"connector.class": "FileStreamSink",
                                         "topics": "lines", "file": str(tmp_path / "out.txt")}}
    assert client.create_connector(source)["name"] == "reader"
    assert client.create_connector(sink)["name"] == "writer"
    assert sorted(client.list_connectors()) == ["reader", "writer"]
    assert set(client.list_connectors(expand="status")) == {"reader", "writer"}
    assert client.get_connector("reader")["type"] == "source"
    assert client.get_connector_config("writer")["topics"] == "lines"

    def running(name: str) -> bool:
        status = client.get_connector_status(name)
        return status["connector"]["state"] == "RUNNING" and \
            [t["state"] for t in status["tasks"]] == ["RUNNING"]

    _until(lambda: running("reader") and running("writer"))
    _until(lambda: (tmp_path / "out.txt").exists()
           and len((tmp_path / "out.txt").read_text().splitlines()) == 50)
    assert client.list_connector_topics("reader") == {"reader": {"topics": ["lines"]}}
    assert client.list_connector_topics("writer") == {"writer": {"topics": ["lines"]}}
    assert client.reset_connector_topics("writer") is None
    assert client.list_connector_topics("writer") == {"writer": {"topics": []}}

    assert [t["id"]["task"] for t in client.list_connector_tasks("reader")] == [0]
    assert client.get_connector_task_status("reader", 0)["state"] == "RUNNING"
    client.restart_connector_task("reader", 0)
    client.restart_connector("reader", include_tasks=True, only_failed=False)
    _until(lambda: running("reader"))

    client.pause_connector("writer")
    _until(lambda: client.get_connector_status("writer")["connector"]["state"] == "PAUSED")
    client.resume_connector("writer")
    _until(lambda: running("writer"))
    client.stop_connector("writer")
    _until(lambda: client.get_connector_status("writer")["connector"]["state"] == "STOPPED")
    client.resume_connector("writer")
    _until(lambda: running("writer"))

    updated = dict(sink["config"], **{"tasks.max": "1"})
    assert client.update_connector("writer", updated)["config"]["tasks.max"] == "1"
    plugins = {p["class"] for p in client.list_connector_plugins()}
    assert {"omconnect_file.source.FileStreamSourceConnector",
            "omconnect_file.sink.FileStreamSinkConnector"} <= plugins
    validation = client.validate_connector_config(
        "FileStreamSink", {"connector.class": "FileStreamSink", "name": "check",
                           "topics": "lines"})
    assert validation["error_count"] == 0, validation
    invalid = client.validate_connector_config(
        "FileStreamSink", {"connector.class": "FileStreamSink", "name": "check"})
    assert invalid["error_count"] == 1, invalid

    client.pause_all_connectors()
    _until(lambda: all(client.get_connector_status(n)["connector"]["state"] == "PAUSED"
                       for n in ("reader", "writer")))
    client.resume_all_connectors()
    _until(lambda: running("reader") and running("writer"))
    client.restart_all_connectors()
    _until(lambda: running("reader") and running("writer"))
    client.stop_all_connectors()
    _until(lambda: all(client.get_connector_status(n)["connector"]["state"] == "STOPPED"
                       for n in ("reader", "writer")))
    client.delete_connector("reader")
    client.delete_all_connectors()
    assert client.list_connectors() == []
