"""``omconnect validate``, ``plugins``, ``offsets`` and ``conformance``: output and exit codes."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import ClassVar

import cli_connectors
import pytest

from omconnect import plugins
from omconnect.cli import build_parser, main
from omconnect.transport.memory import MemoryTransport


def _props(path: Path, **settings: object) -> str:
    path.write_text("".join(f"{k}={v}\n" for k, v in settings.items()), encoding="utf-8")
    return str(path)


def test_validate_a_valid_config_exits_zero(tmp_path, capsys):
    config = _props(tmp_path / "c.properties", **{
        "name": "src", "connector.class": "FileStreamSource", "file": "x", "topic": "t"})
    assert main(["validate", config]) == 0
    assert "valid source connector 'src'" in capsys.readouterr().out


def test_validate_prints_each_bad_key_and_exits_one(tmp_path, capsys):
    config = _props(tmp_path / "c.properties", **{
        "name": "src", "connector.class": "FileStreamSource", "file": "x",
        "batch.size": "-3", "errors.tolerance": "most"})
    assert main(["validate", config]) == 1
    out = capsys.readouterr().out
    assert "3 errors" in out
    for key in ("topic:", "batch.size:", "errors.tolerance:"):
        assert key in out


def test_validate_against_a_worker_checks_the_transport(tmp_path, capsys):
    worker = _props(tmp_path / "w.properties", transport="memory",
                    **{"memory.namespace": tmp_path})
    config = _props(tmp_path / "c.yaml", x="1")
    (tmp_path / "c.yaml").write_text(
        "name: out\nconnector.class: FileStreamSink\ntopics: [a, b]\nfile: o.txt\n")
    assert main(["validate", config, "--worker", worker]) == 0
    assert main(["validate", config, "--worker", worker, "--json"]) == 0
    result = json.loads(capsys.readouterr().out.split("\n", 1)[1])
    assert result["error_count"] == 0 and result["name"] == "FileStreamSink"


def test_validate_a_missing_file_is_a_usage_error(tmp_path, capsys):
    assert main(["validate", str(tmp_path / "nope.properties")]) == 2
    assert "not found" in capsys.readouterr().err


def test_plugins_lists_every_kind_with_versions(capsys):
    assert main(["plugins", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    by_name = {(p["kind"], p["name"]): p for p in listed}
    for kind, name in [("connector", "file-source"), ("connector", "datagen"),
                       ("transport", "embedded"), ("converter", "json"),
                       ("transform", "insert-field-value"), ("predicate", "has-header-key")]:
        assert (kind, name) in by_name
    assert by_name["connector", "file-sink"]["type"] == "sink"
    assert by_name["connector", "file-source"]["version"]
    assert main(["plugins", "--kind", "connector"]) == 0
    table = capsys.readouterr().out
    assert table.splitlines()[0].split()[:4] == ["KIND", "NAME", "TYPE", "VERSION"]
    assert "omconnect_file.source.FileStreamSourceConnector" in table


def test_offsets_show_and_reset_of_a_stopped_connector(tmp_path, capsys):
    (tmp_path / "in.txt").write_text("a\nbb\n")
    worker = _props(tmp_path / "w.properties", transport="embedded",
                    **{"embedded.path": tmp_path / "data"})
    source = _props(tmp_path / "s.properties", **{
        "name": "src", "connector.class": "FileStreamSource", "file": tmp_path / "in.txt",
        "topic": "t"})
    assert main(["standalone", worker, source, "--stop-when-idle", "1"]) == 0
    capsys.readouterr()
    assert main(["offsets", "show", "src", "--worker", worker]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["offsets"][0]["partition"] == {"filename": str(tmp_path / "in.txt")}
    assert shown["offsets"][0]["offset"]["position"] == 5
    assert main(["offsets", "reset", "src", "--worker", worker]) == 0
    capsys.readouterr()
    assert main(["offsets", "show", "src", "--worker", worker]) == 0
    assert json.loads(capsys.readouterr().out) == {"offsets": []}
    assert main(["offsets", "show", "nope", "--worker", worker]) == 1
    assert "no connector named 'nope'" in capsys.readouterr().err


def test_rest_port_without_a_rest_api_says_so(tmp_path, capsys, monkeypatch):
    import importlib.util

    if importlib.util.find_spec("omconnect.rest") is not None:
        pytest.skip("omconnect.rest is installed: the REST tests cover --rest-port")
    worker = _props(tmp_path / "w.properties", transport="memory",
                    **{"memory.namespace": tmp_path})
    assert main(["standalone", worker, "--rest-port", "0", "--stop-when-idle", "1"]) == 2
    err = capsys.readouterr().err
    assert "REST API" in err and "Nothing was started" in err


def test_every_subcommand_is_in_the_help():
    text = build_parser().format_help()
    for command in ("standalone", "validate", "plugins", "offsets", "status", "conformance"):
        assert command in text


def test_usage_errors_exit_two(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["standalone"])
    assert exc.value.code == 2
    with pytest.raises(SystemExit) as exc:
        main(["standalone", "w.properties", "--stop-when-idle", "-1"])
    assert exc.value.code == 2
    assert "more than 0" in capsys.readouterr().err


def test_sigterm_while_configs_load_stops_cleanly_before_anything_starts(tmp_path):
    # In this process's main thread, so the CLI's own SIGTERM handler is the one hit.
    worker = tmp_path / "worker.properties"
    worker.write_text(f"transport=embedded\nembedded.path={tmp_path / 'data'}\n")
    source = tmp_path / "source.properties"
    source.write_text("name=signalled\nconnector.class=cli_connectors:SignalWhileValidated\n")
    cli_connectors.STARTED.clear()
    cli_connectors.SIGNALLED.clear()
    assert main(["standalone", str(worker), str(source), "--no-progress"]) == 0
    assert cli_connectors.SIGNALLED, "the connector's validation did not run"
    assert cli_connectors.STARTED == [], "a connector started after the stop was asked for"


def test_client_libraries_log_at_warning_unless_the_worker_runs_at_debug(tmp_path):
    worker = tmp_path / "worker.properties"
    worker.write_text(f"transport=noisy\nnoisy.namespace={tmp_path}\n")
    noisy = logging.getLogger(NoisyTransport.client_loggers[0])
    noisy.setLevel(logging.NOTSET)
    assert main(["standalone", str(worker), "--stop-when-idle", "0.2", "--no-progress"]) == 0
    assert noisy.level == logging.WARNING
    assert main(["standalone", str(worker), "--stop-when-idle", "0.2", "--no-progress",
                 "--log-level", "DEBUG"]) == 0
    assert noisy.level == logging.DEBUG


class NoisyTransport(MemoryTransport):
    """The memory transport, declaring a client library logger of its own."""

    name: ClassVar[str] = "noisy"
    client_loggers: ClassVar[tuple[str, ...]] = ("omconnect.tests.noisy-client",)


plugins.register_alias(plugins.TRANSPORTS, "noisy", f"{__name__}:NoisyTransport")
