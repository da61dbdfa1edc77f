"""Every connector endpoint, driven over HTTP against a running worker with the built-in
file connectors: lines go from a file through the embedded log into another file.
"""

from __future__ import annotations

from pathlib import Path

import httpx
from rest_helpers import eventually, state_of, wait_for_state

from omconnect import __version__
from omconnect.runtime.storage_namespaces import derive_standalone_id


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def _source(name: str, source_file: Path) -> dict[str, object]:
    return {"name": name, "config": {"connector.class": "FileStreamSource",
                                     "file": str(source_file), "topic": "lines"}}


def test_a_connector_lives_through_every_endpoint(client: httpx.Client, tmp_path: Path):
    source_file, sink_file = tmp_path / "in.txt", tmp_path / "out.txt"
    source_file.write_text("one\ntwo\nthree\n")

    # Create: Kafka Connect's POST /connectors and OpenMessaging's POST /connectors/{name}.
    created = client.post("/connectors", json=_source("reader", source_file))
    assert created.status_code == 201, created.text
    assert created.headers["location"] == "/connectors/reader"
    assert created.json() == {
        "name": "reader", "type": "source", "tasks": [{"connector": "reader", "task": 0}],
        "config": {"connector.class": "FileStreamSource", "file": str(source_file),
                   "topic": "lines", "name": "reader"}}
    created = client.post("/connectors/writer", json={
        "connector.class": "FileStreamSink", "file": str(sink_file), "topics": "lines"})
    assert created.status_code == 201, created.text
    assert created.json()["type"] == "sink"

    assert client.get("/connectors").json() == ["reader", "writer"]
    wait_for_state(client, "reader", "RUNNING")
    wait_for_state(client, "writer", "RUNNING")
    eventually(lambda: _lines(sink_file) == ["one", "two", "three"], what="lines copied")

    # Reads.
    info = client.get("/connectors/reader").json()
    assert info["config"]["file"] == str(source_file)
    assert client.get("/connectors/reader/config").json() == info["config"]
    tasks = client.get("/connectors/reader/tasks").json()
    assert tasks == [{"id": {"connector": "reader", "task": 0},
                      "config": {"file": str(source_file), "topic": "lines",
                                 "batch.size": "2000"}}]
    task_status = client.get("/connectors/reader/tasks/0/status").json()
    assert task_status["id"] == 0 and task_status["state"] == "RUNNING"
    assert task_status["worker_id"] == client.get("/").json()["worker_id"]
    expanded = client.get("/connectors", params=[("expand", "status"),
                                                 ("expand", "info")]).json()
    assert set(expanded) == {"reader", "writer"}
    assert expanded["reader"]["status"]["connector"]["state"] == "RUNNING"
    assert expanded["writer"]["info"]["config"]["topics"] == "lines"
    assert set(client.get("/connectors?expand=status").json()["reader"]) == {"status"}

    # Pause: the state says so, and lines appended meanwhile wait for the resume.
    assert client.put("/connectors/reader/pause").status_code == 202
    wait_for_state(client, "reader", "PAUSED")
    with source_file.open("a") as out:
        out.write("four\n")
    assert client.put("/connectors/reader/resume").status_code == 202
    wait_for_state(client, "reader", "RUNNING")
    eventually(lambda: _lines(sink_file)[-1:] == ["four"], what="line written after resume")

    # Restart: the connector alone (204), then with its tasks (202 and the status).
    assert client.post("/connectors/reader/restart").status_code == 204
    restarted = client.post("/connectors/reader/restart", params={"includeTasks": "true"})
    assert restarted.status_code == 202
    assert restarted.json()["name"] == "reader"
    wait_for_state(client, "reader", "RUNNING")
    assert client.post("/connectors/reader/tasks/0/restart").status_code == 204
    wait_for_state(client, "reader", "RUNNING")

    # Stop: no tasks, and the offsets can now be read and changed.
    assert client.put("/connectors/reader/stop").status_code == 204
    assert state_of(client, "reader") == ("STOPPED", [])
    offsets = client.get("/connectors/reader/offsets").json()["offsets"]
    assert len(offsets) == 1
    assert offsets[0]["partition"] == {"filename": str(source_file)}
    assert offsets[0]["offset"]["position"] == len("one\ntwo\nthree\nfour\n")

    # Rewind the source to byte 0: after a resume every line is read and copied again.
    rewound = client.patch("/connectors/reader/offsets", json={"offsets": [
        {"partition": {"filename": str(source_file)}, "offset": {"position": 0}}]})
    assert rewound.status_code == 200, rewound.text
    assert rewound.json() == {
        "message": "The offsets for this connector have been altered successfully"}
    assert client.get("/connectors/reader/offsets").json()["offsets"] == [
        {"partition": {"filename": str(source_file)}, "offset": {"position": 0}}]
    assert client.put("/connectors/reader/resume").status_code == 202
    wait_for_state(client, "reader", "RUNNING")
    eventually(lambda: _lines(sink_file) == ["one", "two", "three", "four"] * 2,
               what="lines copied again after the rewind")

    # Reset: the offsets are gone.
    assert client.put("/connectors/reader/stop").status_code == 204
    reset = client.delete("/connectors/reader/offsets")
    assert reset.status_code == 200
    assert client.get("/connectors/reader/offsets").json() == {"offsets": []}

    # Delete.
    assert client.delete("/connectors/reader").status_code == 204
    assert client.get("/connectors/reader").status_code == 404
    assert client.get("/connectors").json() == ["writer"]


def test_a_sink_reads_again_from_an_offset_set_through_the_api(client: httpx.Client,
                                                               tmp_path: Path):
    source_file, sink_file = tmp_path / "in.txt", tmp_path / "out.txt"
    source_file.write_text("a\nb\nc\n")
    assert client.post("/connectors", json=_source("reader", source_file)).status_code == 201
    assert client.put("/connectors/writer/config", json={
        "connector.class": "FileStreamSink", "file": str(sink_file),
        "topics": "lines"}).status_code == 201
    eventually(lambda: _lines(sink_file) == ["a", "b", "c"], what="lines copied")

    assert client.put("/connectors/writer/stop").status_code == 204
    position = {"kafka_topic": "lines", "kafka_partition": 0}
    eventually(lambda: client.get("/connectors/writer/offsets").json() == {
        "offsets": [{"partition": position, "offset": {"kafka_offset": 3}}]},
        what="the sink's committed position")
    assert client.patch("/connectors/writer/offsets", json={"offsets": [
        {"partition": position, "offset": {"kafka_offset": 1}}]}).status_code == 200
    assert client.put("/connectors/writer/resume").status_code == 202
    eventually(lambda: _lines(sink_file) == ["a", "b", "c", "b", "c"],
               what="the sink to write from offset 1 again")


def test_created_stopped_or_paused_with_initial_state(client: httpx.Client, tmp_path: Path):
    (tmp_path / "in.txt").write_text("x\n")
    body = _source("stopped", tmp_path / "in.txt") | {"initial_state": "STOPPED"}
    assert client.post("/connectors", json=body).status_code == 201
    assert state_of(client, "stopped") == ("STOPPED", [])
    body = _source("paused", tmp_path / "in.txt") | {"initial_state": "PAUSED"}
    assert client.post("/connectors", json=body).status_code == 201
    wait_for_state(client, "paused", "PAUSED")


def test_config_put_replaces_and_patch_changes_and_restarts(client: httpx.Client,
                                                            tmp_path: Path):
    first, second = tmp_path / "first.txt", tmp_path / "second.txt"
    first.write_text("1\n")
    second.write_text("2\n")
    assert client.post("/connectors", json=_source("reader", first)).status_code == 201
    replaced = client.put("/connectors/reader/config", json={
        "connector.class": "FileStreamSource", "file": str(second), "topic": "lines"})
    assert replaced.status_code == 200
    assert replaced.json()["config"]["file"] == str(second)
    patched = client.patch("/connectors/reader/config",
                           json={"batch.size": "10", "file": str(first)})
    assert patched.status_code == 200, patched.text
    assert patched.json()["config"]["batch.size"] == "10"
    assert patched.json()["config"]["file"] == str(first)
    removed = client.patch("/connectors/reader/config", json={"batch.size": None})
    assert "batch.size" not in removed.json()["config"]
    wait_for_state(client, "reader", "RUNNING")
    assert client.get("/connectors/reader/tasks").json()[0]["config"]["file"] == str(first)


def test_a_failed_task_shows_its_trace_and_only_failed_restarts_it(client: httpx.Client):
    created = client.post("/connectors", json={"name": "failing", "config": {
        "connector.class": "rest_connectors:FailingSource"}})
    assert created.status_code == 201, created.text
    eventually(lambda: state_of(client, "failing") == ("RUNNING", ["FAILED"]),
               what="the task to fail")
    status = client.get("/connectors/failing/tasks/0/status").json()
    assert "the source went away" in status["trace"]
    assert "trace" not in client.get("/connectors/failing/status").json()["connector"]

    restarted = client.post("/connectors/failing/restart",
                            params={"includeTasks": "true", "onlyFailed": "true"})
    assert restarted.status_code == 202
    assert restarted.json()["connector"]["state"] == "RUNNING"
    eventually(lambda: state_of(client, "failing") == ("RUNNING", ["FAILED"]),
               what="the restarted task to fail again")


def test_the_root_names_the_version_and_the_plugins_are_listed(client: httpx.Client):
    root = client.get("/").json()
    assert root["version"] == __version__
    assert root["transport"] == "embedded"
    # The config namespace is this worker's own: others on the transport never share it.
    assert root["kafka_cluster_id"] == \
        f"embedded:connect-configs-{derive_standalone_id(None)}"
    assert root["commit"]

    plugins = client.get("/connector-plugins").json()
    by_name = {plugin["name"]: plugin for plugin in plugins}
    assert by_name["file-source"]["type"] == "source"
    assert by_name["file-source"]["class"] == (
        "omconnect_file.source.FileStreamSourceConnector")
    assert by_name["file-sink"]["type"] == "sink"
    assert {plugin["kind"] for plugin in plugins} == {"connector"}
    everything = client.get("/connector-plugins", params={"connectorsOnly": "false"}).json()
    assert {"connector", "transport", "converter"} <= {p["kind"] for p in everything}
    assert any(p["name"] == "embedded" for p in everything)


def test_validate_answers_kafka_connects_shape(client: httpx.Client, tmp_path: Path):
    response = client.put("/connector-plugins/FileStreamSource/config/validate",
                          json={"name": "v", "file": str(tmp_path / "in.txt")})
    assert response.status_code == 200, response.text
    result = response.json()
    assert result["name"] == "FileStreamSource"
    assert result["error_count"] == 1
    by_key = {item["value"]["name"]: item for item in result["configs"]}
    assert by_key["topic"]["value"]["errors"] == [
        "missing required setting; set topic (The topic to write each line to)"]
    assert by_key["topic"]["definition"]["required"] is True
    assert by_key["file"]["value"] == {"name": "file", "value": str(tmp_path / "in.txt"),
                                       "recommended_values": [], "errors": [],
                                       "visible": True}
    assert "Common" in result["groups"]
    assert client.get("/connectors").json() == []  # nothing was created

    valid = client.put("/connector-plugins/file-source/config/validate",
                       json={"name": "v", "topic": "t",
                             "connector.class": "FileStreamSource"}).json()
    assert valid["error_count"] == 0
