"""References in configs sent to the REST API: stored and returned as written (never
resolved), resolved for validation (an unresolvable one is an error of its key), and
secret-looking undeclared keys masked.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from rest_helpers import wait_for_state

from omconnect.runtime.storage_namespaces import derive_standalone_id
from omconnect.transport.embedded import EmbeddedTransport

TOPIC_VAR = "OMC_REST_REFS_TOPIC"
SECRET_VAR = "OMC_REST_REFS_SECRET"
SECRET = "rest-s3cr3t-from-the-environment"
JAAS = 'org.example.Login required user="svc" password="hunter2-jaas";'
MASK = "[hidden]"
VALIDATE = "/connector-plugins/rest_connectors:SecretSource/config/validate"


def _config(**extra: Any) -> dict[str, Any]:
    return {"connector.class": "rest_connectors:SecretSource",
            "connection.url": "db://reader@db.internal/orders",
            "topic": f"${{env:{TOPIC_VAR}}}",
            "extra.password": f"${{env:{SECRET_VAR}}}",
            "sasl.jaas.config": JAAS, **extra}


def _stored(data: Path) -> dict[str, Any]:
    with EmbeddedTransport({"path": str(data)}) as transport:
        # A herder built without a worker file keeps its configs in its own namespace.
        store = transport.kv_store(f"connect-configs-{derive_standalone_id(None)}")
        return {key: json.loads(value)["config"] for key, value in store.scan("connector-")}


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(TOPIC_VAR, "orders-out")
    monkeypatch.setenv(SECRET_VAR, SECRET)


def test_configs_are_stored_and_returned_with_their_references(client: httpx.Client,
                                                                tmp_path: Path):
    created = client.post("/connectors", json={"name": "refs", "config": _config()})
    assert created.status_code == 201, created.text
    wait_for_state(client, "refs", "RUNNING")
    config = client.get("/connectors/refs/config").json()
    assert config["topic"] == f"${{env:{TOPIC_VAR}}}"
    assert config["extra.password"] == MASK  # undeclared, named like a secret
    assert config["sasl.jaas.config"] == MASK
    assert config["connection.url"] == MASK  # declared PASSWORD
    [task] = client.get("/connectors/refs/tasks").json()
    assert task["config"]["topic"] == f"${{env:{TOPIC_VAR}}}"
    assert task["config"]["sasl.jaas.config"] == MASK
    stored = _stored(tmp_path / "data")["connector-refs"]
    assert stored["topic"] == f"${{env:{TOPIC_VAR}}}"
    assert stored["extra.password"] == f"${{env:{SECRET_VAR}}}"
    for response in (created, client.get("/connectors/refs"),
                     client.get("/connectors?expand=info"),
                     client.get("/connectors/refs/tasks")):
        assert SECRET not in response.text and "hunter2-jaas" not in response.text
        assert "orders-out" not in response.text  # never shown resolved


def test_an_unresolvable_reference_is_a_per_key_error(client: httpx.Client,
                                                       monkeypatch: pytest.MonkeyPatch,
                                                       tmp_path: Path):
    monkeypatch.delenv(SECRET_VAR)
    expected = (f"cannot resolve ${{env:{SECRET_VAR}}}: environment variable {SECRET_VAR} "
                f"is not set; set it, or give a default with ${{env:{SECRET_VAR}:-default}}")
    created = client.post("/connectors", json={"name": "refs", "config": _config()})
    assert created.status_code == 400
    assert created.json()["errors"] == {"extra.password": [expected]}
    put = client.put("/connectors/refs/config", json=_config())
    assert put.status_code == 400
    assert put.json()["errors"] == {"extra.password": [expected]}
    assert client.get("/connectors").json() == []
    assert _stored(tmp_path / "data") == {}

    validated = client.put(VALIDATE, json=_config(name="refs"))
    assert validated.status_code == 200
    assert validated.json()["error_count"] == 1
    shown = {item["value"]["name"]: item["value"] for item in validated.json()["configs"]}
    assert shown["extra.password"]["errors"] == [expected]
    assert shown["extra.password"]["value"] == MASK
    assert shown["topic"]["value"] == f"${{env:{TOPIC_VAR}}}"


def test_validation_masks_undeclared_secret_keys_and_scrubs_resolved_secrets(
        client: httpx.Client):
    bad_url = f"${{env:{SECRET_VAR}}}"  # resolves to a value SecretSource quotes back
    validated = client.put(VALIDATE, json=_config(**{
        "name": "refs", "connection.url": bad_url,
        "sasl.jaas.config": JAAS + f" ${{env:{TOPIC_VAR}X}}"}))
    assert validated.status_code == 200
    assert SECRET not in validated.text and "hunter2-jaas" not in validated.text
    shown = {item["value"]["name"]: item["value"] for item in validated.json()["configs"]}
    assert shown["connection.url"]["errors"] == [
        f"cannot connect to {MASK}: expected a db:// url"]
    assert shown["sasl.jaas.config"]["value"] == MASK
    assert shown["sasl.jaas.config"]["errors"] == [
        f"cannot resolve ${{env:{TOPIC_VAR}X}}: environment variable {TOPIC_VAR}X is not "
        f"set; set it, or give a default with ${{env:{TOPIC_VAR}X:-default}}"]


def test_a_task_config_value_derived_from_a_secret_is_masked(client: httpx.Client):
    config = {"connector.class": "rest_connectors:DsnSource",
              "db.user": f"${{env:{TOPIC_VAR}}}", "db.password": f"${{env:{SECRET_VAR}}}"}
    assert client.post("/connectors", json={"name": "dsn", "config": config}).status_code \
        == 201
    wait_for_state(client, "dsn", "RUNNING")
    [task] = client.get("/connectors/dsn/tasks").json()
    assert task["config"] == {"dsn": MASK, "db.user": f"${{env:{TOPIC_VAR}}}"}
