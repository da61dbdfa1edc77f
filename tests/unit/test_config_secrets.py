"""The one rule for secret config values, and the helpers that keep configs as written."""

from __future__ import annotations

from pathlib import Path

import pytest

from omconnect.config import ConfigDef, ConfigType, Password, load_config_file
from omconnect.config.files import load_config_file_as_written
from omconnect.config.providers import (
    anchor_file_references,
    references_in,
    resolve_config,
    resolve_references,
)
from omconnect.config.secrets import looks_secret, scrub, secret_values

ENV = {"DB_PASSWORD": "pa55word", "DB_HOST": "db.local", "USER": "svc"}


@pytest.mark.parametrize("name", [
    "connection.password", "ssl.key.password", "sasl.jaas.config", "aws.secret.access.key",
    "rest.auth.token", "google.credentials.json", "service.api.key", "apiKey", "x.api_key",
    "ssh.private.key", "DB_PASSWD",
])
def test_names_that_look_secret(name: str) -> None:
    assert looks_secret(name)
    assert ConfigDef.masked({name: "v"}) == {name: "[hidden]"}


@pytest.mark.parametrize("name", [
    "record.key", "print.key", "key.converter", "topic", "tls.key.file", "routing_key",
])
def test_ordinary_names_are_not_secret(name: str) -> None:
    assert not looks_secret(name)
    assert ConfigDef.masked({name: "v"}) == {name: "v"}


def test_secret_values_are_resolved_never_the_reference_text() -> None:
    config = {"db.password": "${env:DB_PASSWORD}", "url": "${env:DB_HOST}",
              "sasl.jaas.config": 'user="${env:USER}" password="literal-pw"',
              "api.token": "${env:UNSET_VARIABLE}", "short.secret": "abc"}
    secrets = secret_values(config, environ=ENV)
    assert secrets == sorted(secrets, key=len, reverse=True)
    assert set(secrets) == {"pa55word", 'user="svc" password="literal-pw"'}
    text = 'login failed for user="svc" password="literal-pw" (pa55word)'
    assert scrub(text, secrets) == "login failed for [hidden] ([hidden])"
    partly = {"sasl.jaas.config": 'password="literal-pw" user="${env:UNSET_VARIABLE}"'}
    assert secret_values(partly, environ=ENV) == [partly["sasl.jaas.config"]]


def test_secret_values_honour_password_types_and_resolved_configs() -> None:
    definition = ConfigDef().define("connection.url", ConfigType.PASSWORD)
    assert secret_values({"connection.url": "db://u:p@host"}, definition) == ["db://u:p@host"]
    assert secret_values({"x": Password("hunter2")}) == ["hunter2"]
    resolved = resolve_config({"db.password": "${env:DB_PASSWORD}"}, environ=ENV)
    assert secret_values(resolved, environ={}) == ["pa55word"]


def test_resolve_references_reports_per_key_instead_of_raising() -> None:
    config, errors = resolve_references(
        {"a": "${env:DB_HOST}", "b": "${env:NOPE}", "c": "$${env:HOME}"}, environ=ENV)
    assert config == {"a": "db.local", "b": "${env:NOPE}", "c": "${env:HOME}"}
    assert list(errors) == ["b"]
    assert errors["b"][0].startswith("cannot resolve ${env:NOPE}: environment variable NOPE")


def test_as_written_gives_back_the_references_and_escapes() -> None:
    written = {"a": "${env:DB_HOST}:1", "b": "$${env:HOME}", "c": "plain",
               "d": ["${env:USER}", "x"], "e": 3}
    resolved = resolve_config(written, environ=ENV)
    assert resolved.as_written() == written
    assert resolve_config(resolved.as_written(), environ=ENV) == resolved


def test_references_in() -> None:
    assert references_in("a ${env:A} $${env:B} ${file:/p:k}") == ["${env:A}", "${file:/p:k}"]
    assert references_in(["${env:A}", 3]) == ["${env:A}"]
    assert references_in("${topic}") == []


def test_file_references_are_anchored_at_the_config_files_directory(tmp_path: Path) -> None:
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "s.properties").write_text("pw=from-file\n", encoding="utf-8")
    path = tmp_path / "conf" / "c.properties"
    path.write_text("a=${file:s.properties:pw}\nb=${file:/abs/s.properties:pw}\n"
                    "c=${env:DB_HOST}\nd=$${file:rel:k}\n", encoding="utf-8")
    written = load_config_file_as_written(path)
    assert written == {"a": f"${{file:{tmp_path / 'conf' / 's.properties'}:pw}}",
                       "b": "${file:/abs/s.properties:pw}", "c": "${env:DB_HOST}",
                       "d": "$${file:rel:k}"}
    resolved, _ = resolve_references(written, base_dir="/elsewhere", environ=ENV)
    assert resolved["a"] == "from-file"
    assert load_config_file(path, resolve=False)["a"] == "${file:s.properties:pw}"
    assert anchor_file_references({"x": 1}, tmp_path) == {"x": 1}
