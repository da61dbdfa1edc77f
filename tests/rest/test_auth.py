"""Optional authentication: a bearer token and/or basic auth from the worker config."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from omconnect.errors import ConfigError
from omconnect.rest import RestAuth, RestServer, start_server
from omconnect.runtime import StandaloneHerder

PATHS = ["/", "/connectors", "/metrics", "/openapi.json", "/connectors/x/status",
         "/no/such/path"]


@pytest.fixture
def secured(worker_config: dict[str, Any]) -> Iterator[RestServer]:
    config = worker_config | {"rest.auth.token": "s3cret-token",
                              "rest.auth.basic.user": "admin",
                              "rest.auth.basic.password": "pa55word"}
    with StandaloneHerder(config) as herder:
        server = start_server(herder, port=0)
        yield server
        server.stop()


@pytest.mark.parametrize("path", PATHS)
def test_without_credentials_every_path_is_a_401_with_a_challenge(secured: RestServer,
                                                                  path: str):
    response = httpx.get(secured.url + path)
    assert response.status_code == 401
    assert response.json()["error_code"] == 401
    assert "authentication required" in response.json()["message"]
    assert response.headers["www-authenticate"] == (
        'Bearer realm="omconnect", Basic realm="omconnect"')


@pytest.mark.parametrize("headers", [
    {"Authorization": "Bearer wrong"},
    {"Authorization": "Bearer s3cret-token-and-more"},
    {"Authorization": "Basic !!!not-base64"},
    {"Authorization": "Digest s3cret-token"},
    {"Authorization": "s3cret-token"},
])
def test_wrong_credentials_are_a_401(secured: RestServer, headers: dict[str, str]):
    response = httpx.get(secured.url + "/connectors", headers=headers)
    assert response.status_code == 401
    assert "invalid credentials" in response.json()["message"]


def test_wrong_basic_credentials_are_a_401(secured: RestServer):
    assert httpx.get(secured.url + "/connectors",
                     auth=("admin", "wrong")).status_code == 401
    assert httpx.get(secured.url + "/connectors",
                     auth=("root", "pa55word")).status_code == 401


def test_the_token_or_the_basic_credentials_let_a_request_through(secured: RestServer):
    by_token = httpx.get(secured.url + "/connectors",
                         headers={"Authorization": "Bearer s3cret-token"})
    assert by_token.status_code == 200
    assert by_token.json() == []
    by_basic = httpx.get(secured.url + "/connectors", auth=("admin", "pa55word"))
    assert by_basic.status_code == 200
    lower_case_scheme = httpx.get(secured.url + "/", headers={
        "Authorization": "bearer s3cret-token"})
    assert lower_case_scheme.status_code == 200


def test_the_worker_config_shows_the_secrets_masked(worker_config: dict[str, Any]):
    herder = StandaloneHerder(worker_config | {"rest.auth.token": "s3cret-token"})
    assert "s3cret-token" not in repr(herder.config.values)


def test_without_settings_no_credentials_are_needed(client: httpx.Client):
    assert client.get("/connectors").status_code == 200


def test_auth_given_in_code_overrides_the_worker_config(herder: StandaloneHerder):
    server = start_server(herder, port=0, auth=RestAuth(token="code-token"))
    try:
        assert httpx.get(server.url + "/").status_code == 401
        assert httpx.get(server.url + "/", headers={
            "Authorization": "Bearer code-token"}).status_code == 200
    finally:
        server.stop()


def test_a_misspelt_auth_key_stops_the_api_from_starting(worker_config: dict[str, Any]):
    with StandaloneHerder(worker_config | {"rest.auth.tokn": "x"}) as herder, \
            pytest.raises(ConfigError, match=r"rest.auth.tokn .*did you mean rest.auth.token"):
        start_server(herder, port=0)


def test_half_configured_basic_auth_is_refused(worker_config: dict[str, Any]):
    with StandaloneHerder(worker_config | {"rest.auth.basic.user": "admin"}) as herder, \
            pytest.raises(ConfigError, match=r"set rest\.auth\.basic\.password"):
        start_server(herder, port=0)
