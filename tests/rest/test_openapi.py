"""``specs/rest-api.yaml`` is the OpenAPI document the code generates, kept current."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import httpx
import yaml

from omconnect.rest.openapi import document

SPEC = Path(__file__).resolve().parents[2] / "specs" / "rest-api.yaml"
REGENERATE = "python -m omconnect.rest.openapi > specs/rest-api.yaml"


def test_the_committed_spec_is_what_the_code_generates():
    committed = yaml.safe_load(SPEC.read_text())
    assert committed == document(), f"specs/rest-api.yaml is out of date; run: {REGENERATE}"
    assert SPEC.read_text().startswith("# The omconnect REST API. Generated from the code")


def test_the_script_prints_the_spec():
    printed = subprocess.run([sys.executable, "-m", "omconnect.rest.openapi"],
                             capture_output=True, text=True, check=True).stdout
    assert yaml.safe_load(printed) == document()


def test_the_server_serves_the_same_document(client: httpx.Client):
    assert client.get("/openapi.json").json() == document()


def test_every_endpoint_of_the_issue_is_documented():
    paths = document()["paths"]
    wanted = {
        ("/", "get"), ("/health", "get"), ("/metrics", "get"), ("/summary", "get"),
        ("/ui", "get"), ("/workers", "get"),
        ("/connectors", "get"), ("/connectors", "post"),
        ("/connectors/{name}", "post"), ("/connectors/{name}", "get"),
        ("/connectors/{name}", "delete"),
        ("/connectors/{name}/config", "get"), ("/connectors/{name}/config", "put"),
        ("/connectors/{name}/config", "patch"),
        ("/connectors/{name}/status", "get"),
        ("/connectors/{name}/pause", "put"), ("/connectors/{name}/resume", "put"),
        ("/connectors/{name}/stop", "put"), ("/connectors/{name}/restart", "post"),
        ("/connectors/{name}/tasks", "get"), ("/connectors/{name}/tasks/{task}/status", "get"),
        ("/connectors/{name}/tasks/{task}/restart", "post"),
        ("/connectors/{name}/offsets", "get"), ("/connectors/{name}/offsets", "patch"),
        ("/connectors/{name}/offsets", "delete"),
        ("/connectors/{name}/topics", "get"), ("/connectors/{name}/topics/reset", "put"),
        ("/connector-plugins", "get"), ("/connector-plugins/{plugin}/config", "get"),
        ("/connector-plugins/{plugin}/config/validate", "put"),
        ("/admin/loggers", "get"), ("/admin/loggers/{logger}", "get"),
        ("/admin/loggers/{logger}", "put"),
    }
    documented = {(path, method) for path, item in paths.items() for method in item}
    assert documented == wanted


def test_errors_are_documented_as_served():
    for path, item in document()["paths"].items():
        for method, operation in item.items():
            responses = operation["responses"]
            assert "422" not in responses, f"{method} {path} documents FastAPI's 422"
            for status in ("401", "500"):
                assert responses[status]["content"]["application/json"]["schema"] == {
                    "$ref": "#/components/schemas/ErrorResponse"}
