"""The ``omconnect standalone`` process: bad configs refused before anything starts,
SIGTERM stops cleanly with offsets committed, and exit codes.
"""

from __future__ import annotations

import json
import re
import signal
import time
import urllib.request

import pytest
from e2e_helpers import pipeline_files, run_cli, start_worker, write_properties

from omconnect.cli import main


def test_a_bad_connector_config_is_refused_before_anything_starts(tmp_path, capsys):
    (tmp_path / "in.txt").write_text("x\n")
    worker, source, sink = pipeline_files(tmp_path)
    write_properties(tmp_path / "sink.properties", {
        "name": "lines-out", "connector.class": "FileStreamSink",
        "file": tmp_path / "out.txt", "topics": "lines", "errors.tolerance": "some"})
    status = main(["standalone", worker, source, sink, "--stop-when-idle", "1"])
    err = capsys.readouterr().err
    assert status == 2
    assert "sink.properties" in err and "errors.tolerance" in err
    assert "Nothing was started" in err
    assert not (tmp_path / "out.txt").exists()
    # Not even the valid source was stored or run: the worker knows no connector.
    shown = run_cli(["offsets", "show", "lines-in", "--worker", worker])
    assert shown.returncode == 1 and "no connector named 'lines-in'" in shown.stderr


def test_an_unknown_connector_class_is_named_with_a_suggestion(tmp_path, capsys):
    worker, _, _ = pipeline_files(tmp_path)
    bad = write_properties(tmp_path / "bad.properties", {
        "name": "bad", "connector.class": "FileStreamSorce", "topic": "t"})
    assert main(["standalone", worker, str(bad)]) == 2
    err = capsys.readouterr().err
    assert "connector.class" in err and "FileStreamSource" in err


def test_a_bad_worker_config_names_the_key(tmp_path, capsys):
    worker = write_properties(tmp_path / "w.properties", {
        "transport": "embedded", "embedded.path": tmp_path / "d",
        "offset.flush.interval.ms": "often"})
    assert main(["standalone", str(worker)]) == 2
    assert "offset.flush.interval.ms" in capsys.readouterr().err


def test_sigterm_stops_cleanly_commits_offsets_and_exits_zero(tmp_path):
    lines = [f"line {i}" for i in range(3000)]
    (tmp_path / "in.txt").write_text("\n".join(lines) + "\n")
    # Offsets would be committed only every 10 minutes: only the stop can commit them.
    args = pipeline_files(tmp_path, flush_ms=600_000)
    worker = start_worker(args, tmp_path / "worker.log")
    try:
        deadline = time.monotonic() + 60
        out = tmp_path / "out.txt"
        while time.monotonic() < deadline:
            if out.exists() and out.read_text().count("\n") == len(lines):
                break
            time.sleep(0.1)
        worker.send_signal(signal.SIGTERM)
        assert worker.wait(timeout=30) == 0
    finally:
        if worker.poll() is None:
            worker.kill()
    assert out.read_text().splitlines() == lines
    log = (tmp_path / "worker.log").read_text()
    assert "stopping (signal received)" in log
    source = json.loads(run_cli(["offsets", "show", "lines-in", "--worker", args[0]]).stdout)
    assert source["offsets"][0]["offset"]["position"] == (tmp_path / "in.txt").stat().st_size
    sink = json.loads(run_cli(["offsets", "show", "lines-out", "--worker", args[0]]).stdout)
    assert [o["offset"] for o in sink["offsets"]] == [{"kafka_offset": len(lines)}]


def test_a_failed_task_makes_the_exit_status_non_zero(tmp_path):
    (tmp_path / "in.txt").write_text("x\n")
    worker, source, _ = pipeline_files(tmp_path)
    # A sink whose file cannot be opened fails its task at start.
    sink = write_properties(tmp_path / "sink.properties", {
        "name": "lines-out", "connector.class": "FileStreamSink",
        "file": tmp_path / "missing-dir" / "out.txt", "topics": "lines"})
    result = run_cli(["standalone", worker, source, str(sink), "--stop-when-idle", "1"])
    assert result.returncode == 1, result.stderr
    assert "state=FAILED" in result.stderr


def test_rest_port_serves_the_api_beside_the_worker(tmp_path):
    pytest.importorskip("omconnect.rest", exc_type=ImportError)
    (tmp_path / "in.txt").write_text("x\n")
    args = pipeline_files(tmp_path)
    log = tmp_path / "worker.log"
    worker = start_worker([*args, "--rest-port", "0"], log)
    try:
        deadline = time.monotonic() + 60
        port = None
        while port is None and time.monotonic() < deadline and worker.poll() is None:
            match = re.search(r"REST API listening on http://127\.0\.0\.1:(\d+)",
                              log.read_text())
            port = int(match.group(1)) if match else None
            time.sleep(0.05)
        assert port, log.read_text()
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/connectors", timeout=10) as r:
            assert sorted(json.loads(r.read())) == ["lines-in", "lines-out"]
        worker.send_signal(signal.SIGTERM)
        assert worker.wait(timeout=30) == 0
    finally:
        if worker.poll() is None:
            worker.kill()
