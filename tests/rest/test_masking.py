"""Secrets never leave the worker: PASSWORD-type and secret-looking config values are
masked in every response, and scrubbed from error messages and log lines.
"""

from __future__ import annotations

import logging

import httpx
import pytest
from rest_helpers import wait_for_state

SECRET_URL = "db://admin:hunter2-url@db.internal/orders"  # PASSWORD-typed key
BAD_URL = "mysql://admin:hunter2-bad@db.internal"  # quoted back by the connector
SECRET_PASSWORD = "hunter2-password"  # a key whose name looks secret
MASK = "[hidden]"
SECRETS = ("hunter2-url", "hunter2-bad", "hunter2-password")


def _config(url: str = SECRET_URL) -> dict[str, str]:
    return {"connector.class": "rest_connectors:SecretSource", "connection.url": url,
            "extra.password": SECRET_PASSWORD}


def _assert_clean(text: str) -> None:
    for secret in SECRETS:
        assert secret not in text


def test_every_response_masks_the_secrets(client: httpx.Client,
                                          caplog: pytest.LogCaptureFixture):
    caplog.set_level(logging.DEBUG)
    responses = [client.post("/connectors", json={"name": "db", "config": _config()})]
    assert responses[0].status_code == 201, responses[0].text
    wait_for_state(client, "db", "RUNNING")
    responses += [
        client.get("/connectors/db"),
        client.get("/connectors/db/config"),
        client.get("/connectors/db/tasks"),
        client.get("/connectors?expand=info&expand=status"),
        client.put("/connectors/db/config", json=_config()),
        client.patch("/connectors/db/config", json={"tasks.max": "2"}),
        client.put("/connector-plugins/rest_connectors:SecretSource/config/validate",
                   json=_config() | {"name": "db"}),
        client.post("/connectors/db", json=_config()),  # 409, echoing nothing
    ]
    for response in responses:
        _assert_clean(response.text)
    info = responses[1].json()
    assert info["config"]["connection.url"] == MASK
    assert info["config"]["extra.password"] == MASK
    assert info["config"]["connector.class"] == "rest_connectors:SecretSource"
    assert responses[2].json()["connection.url"] == MASK
    assert responses[3].json()[0]["config"]["connection.url"] == MASK
    assert responses[4].json()["db"]["info"]["config"]["connection.url"] == MASK
    validation = {item["value"]["name"]: item["value"]
                  for item in responses[7].json()["configs"]}
    assert validation["connection.url"]["value"] == MASK
    assert validation["connection.url"]["errors"] == []
    for record in caplog.records:
        _assert_clean(record.getMessage())


def test_error_messages_quoting_a_secret_are_scrubbed(client: httpx.Client,
                                                      caplog: pytest.LogCaptureFixture):
    caplog.set_level(logging.DEBUG)
    created = client.post("/connectors", json={"name": "db", "config": _config(BAD_URL)})
    assert created.status_code == 400
    assert f"cannot connect to {MASK}: expected a db:// url" in created.json()["message"]
    assert created.json()["errors"]["connection.url"] == [
        f"cannot connect to {MASK}: expected a db:// url"]
    validated = client.put(
        "/connector-plugins/rest_connectors:SecretSource/config/validate",
        json=_config(BAD_URL) | {"name": "db"})
    errors = {item["value"]["name"]: item["value"]["errors"]
              for item in validated.json()["configs"]}
    assert errors["connection.url"] == [f"cannot connect to {MASK}: expected a db:// url"]

    assert client.post("/connectors", json={"name": "db",
                                            "config": _config()}).status_code == 201
    patched = client.patch("/connectors/db/config", json={"connection.url": BAD_URL})
    assert patched.status_code == 400
    for response in (created, validated, patched):
        _assert_clean(response.text)
    for record in caplog.records:
        _assert_clean(record.getMessage())
