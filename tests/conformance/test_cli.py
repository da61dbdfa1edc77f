"""run_conformance: what `omconnect conformance` does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from nested_suite import MEMORY

from omconnect.testing.cli import run_conformance


def test_json_to_stdout_and_exit_code_zero(capsys: pytest.CaptureFixture[str]) -> None:
    code = run_conformance(["--transport", MEMORY, "--json", "-k", "test_round_trip or put_get"])
    out, err = capsys.readouterr()
    assert code == 0
    assert "omconnect conformance" in err, "pytest's table goes to standard error"
    assert "written to" not in err, "no scratch path is printed"
    data = json.loads(out)
    assert data["exit_code"] == 0
    assert {c["case"] for c in data["cases"]} == {"MessagingCases::test_round_trip",
                                                   "KeyValueCases::test_put_get"}
    assert data["transport"]["capabilities"]["replayable"] is True


def test_a_failing_case_makes_the_exit_code_non_zero(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    report = tmp_path / "report.json"
    code = run_conformance(["--transport", "broken_transports:ReordersWithinKey",
                            "--json", str(report), "-k", "order_per_key"])
    out = capsys.readouterr().out
    assert code == 1
    assert "test_order_per_key" in out and "fail" in out, "the table is printed"
    assert json.loads(report.read_text())["counts"] == {"fail": 1}
    assert json.loads(report.read_text())["exit_code"] == 1
    assert f"conformance summary written to {report}" in out, "the path printed is the user's"
    assert [line for line in out.splitlines() if "written to" in line] == [
        f"conformance summary written to {report}"], "no scratch path is printed"


def test_connector_mode_reads_its_config_file(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "in.txt"
    data.write_text("".join(f"line {i}\n" for i in range(30)))
    config = tmp_path / "source.properties"
    config.write_text(f"name=local-file-source\nconnector.class=FileStreamSource\n"
                      f"tasks.max=1\nfile={data}\ntopic=lines\n")
    code = run_conformance(["--connector", "FileStreamSource", "--config", str(config),
                            "--json", "-k", "json_offsets or resumes or documents"])
    result = json.loads(capsys.readouterr().out)
    assert code == 0, result
    assert {c["outcome"] for c in result["cases"]} == {"pass"}
    assert len(result["cases"]) == 3


def test_connector_without_config_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        run_conformance(["--connector", "FileStreamSource"])
    assert exited.value.code == 2
    assert "--connector needs --config" in capsys.readouterr().err
