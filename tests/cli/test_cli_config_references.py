"""``${env:...}``/``${file:...}`` references in the CLI's connector configs: stored as
written, resolved when the worker starts the connector, rejected before anything starts
when they cannot be resolved; ``omconnect validate`` resolves them too.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from omconnect.cli import main
from omconnect.records import TopicPartition
from omconnect.runtime.storage_namespaces import derive_standalone_id
from omconnect.transport.embedded import EmbeddedTransport

IN_VAR = "OMC_CLI_REFS_INPUT"
SECRET_VAR = "OMC_CLI_REFS_SECRET"
SECRET = "cli-s3cr3t-from-the-environment"


def _props(path: Path, **settings: object) -> str:
    path.write_text("".join(f"{k}={v}\n" for k, v in settings.items()), encoding="utf-8")
    return str(path)


def _files(tmp_path: Path) -> tuple[str, str]:
    """A worker config and a file-source config holding references."""
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "names.properties").write_text("topic=lines\n", encoding="utf-8")
    worker = _props(tmp_path / "w.properties", transport="embedded",
                    **{"embedded.path": tmp_path / "data"})
    source = _props(tmp_path / "conf" / "s.properties", **{
        "name": "src", "connector.class": "FileStreamSource", "file": f"${{env:{IN_VAR}}}",
        "topic": "${file:names.properties:topic}",  # relative to the config file
        "extra.password": f"${{env:{SECRET_VAR}}}"})
    return worker, source


def _lines(data: Path, topic: str) -> list[Any]:
    with EmbeddedTransport({"path": str(data)}) as transport:
        if topic not in transport.admin().list_topics():
            return []
        consumer = transport.consumer()
        consumer.assign([TopicPartition(topic, 0)])
        values: list[Any] = []
        while batch := consumer.poll(10_000, 0.1):
            values.extend(json.loads(m.value)["payload"] for m in batch if m.value)
        consumer.close()
    return values


def _stored(data: Path) -> dict[str, Any]:
    # The worker file w.properties (see _files) names the worker's own namespaces.
    worker = data.parent / "w.properties"
    with EmbeddedTransport({"path": str(data)}) as transport:
        store = transport.kv_store(f"connect-configs-{derive_standalone_id(worker)}")
        return {key: json.loads(value)["config"] for key, value in store.scan("connector-")}


def test_standalone_stores_references_and_runs_with_their_values(tmp_path, monkeypatch,
                                                                 capsys):
    worker, source = _files(tmp_path)
    (tmp_path / "a.txt").write_text("a1\na2\n", encoding="utf-8")
    (tmp_path / "b.txt").write_text("b1\n", encoding="utf-8")
    monkeypatch.setenv(IN_VAR, str(tmp_path / "a.txt"))
    monkeypatch.setenv(SECRET_VAR, SECRET)
    monkeypatch.chdir(tmp_path)  # not the config's directory: ${file:} still resolves
    assert main(["standalone", worker, source, "--stop-when-idle", "1"]) == 0
    assert _lines(tmp_path / "data", "lines") == ["a1", "a2"]
    stored = _stored(tmp_path / "data")["connector-src"]
    assert stored["file"] == f"${{env:{IN_VAR}}}"
    assert stored["extra.password"] == f"${{env:{SECRET_VAR}}}"
    names = tmp_path / "conf" / "names.properties"
    assert stored["topic"] == f"${{file:{names}:topic}}"  # anchored at the config's dir

    monkeypatch.setenv(IN_VAR, str(tmp_path / "b.txt"))  # rotated between runs
    assert main(["standalone", worker, source, "--stop-when-idle", "1"]) == 0
    assert _lines(tmp_path / "data", "lines") == ["a1", "a2", "b1"]
    assert _stored(tmp_path / "data")["connector-src"]["file"] == f"${{env:{IN_VAR}}}"
    stored_bytes = b"".join(f.read_bytes() for f in (tmp_path / "data").rglob("*")
                            if f.is_file())
    assert f"${{env:{SECRET_VAR}}}".encode() in stored_bytes
    assert SECRET.encode() not in stored_bytes
    assert SECRET not in "".join(capsys.readouterr())


def test_standalone_rejects_an_unset_variable_naming_the_key(tmp_path, monkeypatch, capsys):
    worker, source = _files(tmp_path)
    monkeypatch.delenv(IN_VAR, raising=False)
    monkeypatch.setenv(SECRET_VAR, SECRET)
    assert main(["standalone", worker, source, "--stop-when-idle", "1"]) == 2
    err = capsys.readouterr().err
    assert f"{source}: invalid connector config (1 error):" in err
    assert f"  file: cannot resolve ${{env:{IN_VAR}}}: environment variable {IN_VAR} is " \
        "not set" in err
    assert "Nothing was started." in err
    assert _stored(tmp_path / "data") == {}


def test_validate_resolves_references(tmp_path, monkeypatch, capsys):
    _, source = _files(tmp_path)
    monkeypatch.setenv(IN_VAR, str(tmp_path / "in.txt"))
    monkeypatch.setenv(SECRET_VAR, SECRET)
    assert main(["validate", source]) == 0
    assert "valid source connector 'src'" in capsys.readouterr().out
    monkeypatch.delenv(IN_VAR)
    assert main(["validate", source]) == 1
    out = capsys.readouterr().out
    assert f"  file: cannot resolve ${{env:{IN_VAR}}}: environment variable {IN_VAR}" in out


@pytest.mark.parametrize("key", ["sasl.jaas.config", "db.password"])
def test_validate_json_masks_undeclared_secret_keys(tmp_path, monkeypatch, capsys, key):
    _, source = _files(tmp_path)
    monkeypatch.setenv(IN_VAR, str(tmp_path / "in.txt"))
    monkeypatch.delenv(SECRET_VAR, raising=False)
    with open(source, "a", encoding="utf-8") as file:
        file.write(f'{key}=password="hunter2-literal" ${{env:{SECRET_VAR}}}\n')
    assert main(["validate", source, "--json"]) == 1
    out = capsys.readouterr().out
    assert "hunter2-literal" not in out
    shown = {item["value"]["name"]: item["value"] for item in json.loads(out)["configs"]}
    assert shown[key]["value"] == "[hidden]"
    assert shown[key]["errors"] == [
        f"cannot resolve ${{env:{SECRET_VAR}}}: environment variable {SECRET_VAR} is not "
        f"set; set it, or give a default with ${{env:{SECRET_VAR}:-default}}"]
