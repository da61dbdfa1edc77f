"""Every client mistake gets a JSON error with the right status and a message that says
what is wrong; none gets a 5xx.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
from rest_helpers import wait_for_state

from omconnect.errors import ConfigError
from omconnect.runtime import StandaloneHerder


def _error(response: httpx.Response, status: int) -> str:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert body["error_code"] == status
    message: str = body["message"]
    return message


@pytest.fixture
def running(client: httpx.Client, tmp_path: Path) -> str:
    (tmp_path / "in.txt").write_text("x\n")
    response = client.post("/connectors", json={"name": "reader", "config": {
        "connector.class": "FileStreamSource", "file": str(tmp_path / "in.txt"),
        "topic": "lines"}})
    assert response.status_code == 201, response.text
    wait_for_state(client, "reader", "RUNNING")
    return "reader"


def test_bad_json_is_a_400_saying_so(client: httpx.Client):
    response = client.post("/connectors", content=b'{"name": "x", ',
                           headers={"content-type": "application/json"})
    assert "not valid JSON" in _error(response, 400)
    response = client.put("/connectors/x/config", content=b"[1, 2",
                          headers={"content-type": "application/json"})
    assert "not valid JSON" in _error(response, 400)


def test_a_body_of_the_wrong_shape_is_a_400_naming_the_field(client: httpx.Client):
    assert "must be a JSON object" in _error(client.post("/connectors", json=[1]), 400)
    assert "body.name is missing" in _error(client.post("/connectors", json={}), 400)
    message = _error(client.post("/connectors", json={"name": "x", "config": {},
                                                      "initialState": "PAUSED"}), 400)
    assert "body.initialState is not a known field" in message
    message = _error(client.post("/connectors", json={"name": "x", "config": {
        "file": {"nested": "object"}}}), 400)
    assert "body.config.file" in message
    message = _error(client.post("/connectors", json={"name": "x", "config": {},
                                                      "initial_state": "RUNNIG"}), 400)
    assert "initial_state" in message
    message = _error(client.patch("/connectors/x/offsets", json={"offsets": [{}]}), 400)
    assert "body.offsets[0].partition is missing" in message


@pytest.mark.parametrize("raw", [b'{"name": "x", "config": {"n": NaN}}',
                                 b'{"name": "x", "config": {"n": 1e999}}',
                                 b'{"name": "x", "config": {"n": 99999999999999999999}}'])
def test_numbers_the_worker_cannot_store_are_a_400(client: httpx.Client, raw: bytes):
    response = client.post("/connectors", content=raw,
                           headers={"content-type": "application/json"})
    message = _error(response, 400)
    assert "body.n" in message


def test_an_invalid_config_is_a_400_naming_each_key(client: httpx.Client, tmp_path: Path):
    response = client.post("/connectors", json={"name": "bad", "config": {
        "connector.class": "FileStreamSource", "batch.size": "lots"}})
    message = _error(response, 400)
    assert "topic: missing required setting; set topic" in message
    assert "batch.size" in message
    assert set(response.json()["errors"]) == {"topic", "batch.size"}
    assert client.get("/connectors").json() == []

    response = client.post("/connectors", json={"name": "bad", "config": {
        "connector.class": "FileStreamSorce", "topic": "t"}})
    assert "did you mean" in _error(response, 400)
    response = client.post("/connectors/bad", json={"connector.class": "FileStreamSource"})
    assert "topic" in _error(response, 400)


def test_a_config_naming_another_connector_is_a_400(client: httpx.Client):
    body = {"connector.class": "FileStreamSource", "topic": "t", "name": "other"}
    message = _error(client.put("/connectors/mine/config", json=body), 400)
    assert "does not match" in message
    assert "does not match" in _error(client.post("/connectors/mine", json=body), 400)
    message = _error(client.post("/connectors", json={"name": "mine", "config": body}), 400)
    assert "does not match" in message


def test_a_name_the_runtime_refuses_is_a_400(client: httpx.Client):
    response = client.post("/connectors", json={"name": "a\\b", "config": {
        "connector.class": "FileStreamSource", "topic": "t"}})
    assert "name" in _error(response, 400)
    response = client.post("/connectors", json={"name": "", "config": {
        "connector.class": "FileStreamSource", "topic": "t"}})
    assert "name" in _error(response, 400)


@pytest.mark.parametrize(("method", "path", "body"), [
    ("GET", "/connectors/nope", None),
    ("DELETE", "/connectors/nope", None),
    ("GET", "/connectors/nope/config", None),
    ("PATCH", "/connectors/nope/config", {"topic": "t"}),
    ("GET", "/connectors/nope/status", None),
    ("PUT", "/connectors/nope/pause", None),
    ("PUT", "/connectors/nope/resume", None),
    ("PUT", "/connectors/nope/stop", None),
    ("POST", "/connectors/nope/restart", None),
    ("GET", "/connectors/nope/tasks", None),
    ("GET", "/connectors/nope/tasks/0/status", None),
    ("POST", "/connectors/nope/tasks/0/restart", None),
    ("GET", "/connectors/nope/offsets", None),
    ("PATCH", "/connectors/nope/offsets",
     {"offsets": [{"partition": {"filename": "x"}, "offset": {"position": 0}}]}),
    ("DELETE", "/connectors/nope/offsets", None),
])
def test_an_unknown_connector_is_a_404_naming_it(client: httpx.Client, method: str,
                                                 path: str, body: Any):
    response = client.request(method, path, json=body)
    assert "'nope'" in _error(response, 404)


def test_an_unknown_task_is_a_404(client: httpx.Client, running: str):
    assert "no task 3" in _error(client.get(f"/connectors/{running}/tasks/3/status"), 404)
    assert "no task 3" in _error(client.post(f"/connectors/{running}/tasks/3/restart"), 404)
    message = _error(client.get(f"/connectors/{running}/tasks/zero/status"), 400)
    assert "path parameter 'task'" in message


def test_creating_an_existing_connector_is_a_409(client: httpx.Client, running: str):
    body = {"name": running, "config": {"connector.class": "FileStreamSource", "topic": "t"}}
    assert "already exists" in _error(client.post("/connectors", json=body), 409)
    body = {"connector.class": "FileStreamSource", "topic": "t"}
    assert "already exists" in _error(client.post(f"/connectors/{running}", json=body), 409)


def test_changing_offsets_of_a_running_connector_is_a_409(client: httpx.Client,
                                                          running: str):
    message = _error(client.patch(f"/connectors/{running}/offsets", json={"offsets": [
        {"partition": {"filename": "x"}, "offset": {"position": 0}}]}), 409)
    assert "only while it is stopped" in message
    assert "only while it is stopped" in _error(
        client.delete(f"/connectors/{running}/offsets"), 409)
    assert client.put(f"/connectors/{running}/pause").status_code == 202
    _error(client.delete(f"/connectors/{running}/offsets"), 409)


def test_pausing_or_restarting_a_stopped_connector_is_a_409(client: httpx.Client,
                                                            running: str):
    assert client.put(f"/connectors/{running}/stop").status_code == 204
    assert "stopped" in _error(client.put(f"/connectors/{running}/pause"), 409)
    assert "stopped" in _error(client.post(f"/connectors/{running}/restart"), 409)
    assert "stopped" in _error(client.post(f"/connectors/{running}/tasks/0/restart"), 409)


def test_a_malformed_sink_offset_is_a_400_naming_the_entry(client: httpx.Client,
                                                           tmp_path: Path):
    assert client.post("/connectors", json={"name": "writer", "initial_state": "STOPPED",
                                            "config": {"connector.class": "FileStreamSink",
                                                       "file": str(tmp_path / "out"),
                                                       "topics": "t"}}).status_code == 201
    response = client.patch("/connectors/writer/offsets", json={"offsets": [
        {"partition": {"kafka_topic": "t"}, "offset": {"kafka_offset": 0}}]})
    assert "offsets[0].partition" in _error(response, 400)


def test_altering_no_offsets_is_a_400_pointing_to_reset(client: httpx.Client,
                                                        herder: StandaloneHerder,
                                                        running: str):
    assert client.put(f"/connectors/{running}/stop").status_code == 204
    message = _error(client.patch(f"/connectors/{running}/offsets", json={"offsets": []}), 400)
    assert "offsets" in message and "at least 1" in message
    # the Python API refuses it too, pointing to the reset
    with pytest.raises(ConfigError, match="reset the offsets instead") as raised:
        herder.alter_offsets(running, [])
    assert raised.value.context["key"] == "offsets"


def test_query_parameters_are_checked(client: httpx.Client, running: str):
    message = _error(client.post(f"/connectors/{running}/restart",
                                 params={"includeTasks": "maybe"}), 400)
    assert "query parameter 'includeTasks'" in message
    message = _error(client.get("/connectors", params={"expand": "everything"}), 400)
    assert "query parameter 'expand'" in message


def test_a_body_that_is_not_json_is_a_415(client: httpx.Client):
    response = client.post("/connectors", content=b"name=x",
                           headers={"content-type": "application/x-www-form-urlencoded"})
    assert "Content-Type: application/json" in _error(response, 415)


def test_a_body_without_a_content_type_is_read_as_json(client: httpx.Client):
    response = client.post("/connectors", content=b'{"name": "x", "config": {}}')
    assert "connector.class" in _error(response, 400)  # parsed, then validated


def test_unknown_paths_and_methods_are_json_errors(client: httpx.Client):
    assert "no endpoint /connector" in _error(client.get("/connector"), 404)
    assert "DELETE is not allowed on /connectors" in _error(client.delete("/connectors"), 405)


def test_validate_with_an_unknown_or_mismatched_plugin(client: httpx.Client):
    message = _error(client.put("/connector-plugins/FileStreamSorce/config/validate",
                                json={}), 404)
    assert "did you mean" in message
    message = _error(client.put("/connector-plugins/FileStreamSource/config/validate",
                                json={"connector.class": "FileStreamSink"}), 400)
    assert "does not name the connector in the path" in message
