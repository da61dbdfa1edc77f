"""``GET /connector-plugins/{plugin}/config`` (KIP-769): a connector's own config keys."""

from __future__ import annotations

import httpx
from omconnect_file.source import FileStreamSourceConnector


def test_a_connectors_keys_are_listed_in_kafka_connects_shape(client: httpx.Client) -> None:
    for name in ("FileStreamSource", "org.apache.kafka.connect.file.FileStreamSourceConnector",
                 "omconnect_file.source:FileStreamSourceConnector"):
        response = client.get(f"/connector-plugins/{name}/config")
        assert response.status_code == 200, response.text
        keys = response.json()
        assert [k["name"] for k in keys] == FileStreamSourceConnector().config_def().names()
        topic = next(k for k in keys if k["name"] == "topic")
        assert set(topic) == {"name", "type", "required", "default_value", "importance",
                              "documentation", "group", "width", "display_name",
                              "dependents", "order"}
        assert topic["type"] == "STRING" and topic["documentation"]


def test_an_unknown_plugin_is_a_404_naming_it(client: httpx.Client) -> None:
    response = client.get("/connector-plugins/NoSuchConnector/config")
    assert response.status_code == 404
    assert "NoSuchConnector" in response.json()["message"]
