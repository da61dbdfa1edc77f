"""The conformance suite's connector acceptance cases pass for every built-in connector."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest


def _properties(path, settings) -> str:
    path.write_text("".join(f"{k}={v}\n" for k, v in settings.items()), encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("name, settings", [
    ("file-source", {"topic": "lines"}),
    ("file-sink", {"topics": "lines"}),
    ("datagen", {"topic": "orders", "max.messages": 700, "batch.size": 64}),
    ("console", {"topics": "x"}),
    ("null", {"topics": "x"}),
])
def test_acceptance_cases_pass(tmp_path, name, settings):
    settings = {"name": f"acceptance-{name}", "connector.class": name, **settings}
    if name == "file-source":
        (tmp_path / "in.txt").write_text("".join(f"line {i} ✓\n" for i in range(300)))
        settings["file"] = tmp_path / "in.txt"
    if name == "file-sink":
        settings["file"] = tmp_path / "out.txt"
    config = _properties(tmp_path / "connector.properties", settings)
    summary = tmp_path / "summary.json"
    done = subprocess.run(
        [sys.executable, "-m", "omconnect.cli", "conformance", "--connector", name,
         "--config", config, "--json", str(summary)],
        capture_output=True, text=True, timeout=300, check=False, cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    result = json.loads(summary.read_text())
    assert result["counts"].get("fail", 0) == 0, result["cases"]
    assert result["counts"].get("pass", 0) >= 6  # the cases that apply to every connector
