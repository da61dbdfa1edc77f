"""The conformance suite's connector acceptance cases pass for the object-store source."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from objectstore_helpers import write_jsonl


@pytest.mark.slow
def test_connector_acceptance_cases_pass(tmp_path):
    for n in range(5):
        write_jsonl(tmp_path / "in" / f"part-{n}.jsonl", ({"n": n, "i": i} for i in range(100)))
    settings = {"name": "acceptance-objectstore", "connector.class": "objectstore-source",
                "objectstore.url": tmp_path / "in", "topic": "lines", "input.format": "jsonl",
                "tasks.max": 2}
    config = tmp_path / "connector.properties"
    config.write_text("".join(f"{k}={v}\n" for k, v in settings.items()))
    summary = tmp_path / "summary.json"
    done = subprocess.run(
        [sys.executable, "-m", "omconnect.cli", "conformance", "--connector",
         "objectstore-source", "--config", str(config), "--json", str(summary)],
        capture_output=True, text=True, timeout=300, check=False, cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    result = json.loads(summary.read_text())
    assert result["counts"].get("fail", 0) == 0, result["cases"]
    assert result["counts"].get("pass", 0) >= 10  # every case for sources
