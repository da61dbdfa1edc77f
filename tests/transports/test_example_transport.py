"""The example transport of docs/writing-a-transport.md (examples/sqlite_transport), a
third-party package built on the log-transport base: it is registered by entry point,
passes the conformance suite through ``omconnect conformance`` and stays small.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from omconnect import plugins

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "sqlite_transport"


def test_it_is_registered_under_its_name() -> None:
    from omconnect_example_sqlite import SqliteLogTransport

    assert plugins.load(plugins.TRANSPORTS, "sqlite-log") is SqliteLogTransport
    assert SqliteLogTransport.name == "sqlite-log"


def test_it_is_a_small_program() -> None:
    lines = (EXAMPLE / "omconnect_example_sqlite" / "__init__.py").read_text().splitlines()
    code = [line for line in lines if line.strip() and not line.strip().startswith("#")]
    assert len(code) <= 350, f"the example has {len(code)} lines"


@pytest.mark.slow
def test_it_passes_the_whole_conformance_kit(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    result = subprocess.run(
        [sys.executable, "-m", "omconnect.cli", "conformance", "--transport", "sqlite-log",
         "--json", str(report)], cwd=tmp_path, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    cases = json.loads(report.read_text())["cases"]
    outcomes = {case["case"]: case["outcome"] for case in cases}
    skipped = {name for name, outcome in outcomes.items() if outcome != "pass"}
    # Only the cases that restart a broker or reach for an absent one cannot run: the
    # example has no broker.
    assert skipped == {
        "FailureCases::test_broker_restart_loses_no_acknowledged_message",
        "FailureCases::test_unreachable_broker_fails_within_timeout",
        "FailureCases::test_consumer_keeps_going_across_a_broker_restart",
        "PipelineCases::test_a_broker_restart_mid_pipeline_loses_nothing",
    }, {name: outcomes[name] for name in skipped}
    assert len(outcomes) >= 56
