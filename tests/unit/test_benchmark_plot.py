"""benchmarks/plot.py: the benchmarks' JSON lines become a PNG of their ratios."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

PLOT = Path(__file__).resolve().parents[2] / "benchmarks" / "plot.py"
LINES = [
    {"benchmark": "runtime_loop", "transport": "embedded", "records": 200000, "ratio": 0.52},
    {"benchmark": "transports", "load_average": 1.5,
     "transports": {"kafka": {"ratio": 0.23, "records_per_s": 220000},
                    "memory": {"ratio": 0.9}}},
]


def test_every_ratio_becomes_a_labelled_bar_in_a_png(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib", reason="tox -e unit installs matplotlib")
    figures = tmp_path / "figures.jsonl"
    figures.write_text("noise before\n" + "".join(json.dumps(x) + "\n" for x in LINES))
    out = tmp_path / "figures.png"
    result = subprocess.run([sys.executable, str(PLOT), str(figures), "--out", str(out)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "3 bar(s)" in result.stdout
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_metric_matching_nothing_is_an_error_naming_it(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib", reason="tox -e unit installs matplotlib")
    figures = tmp_path / "figures.jsonl"
    figures.write_text(json.dumps(LINES[0]) + "\n")
    result = subprocess.run([sys.executable, str(PLOT), str(figures), "--out",
                             str(tmp_path / "x.png"), "--metric", "latency"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 1
    assert "no numeric field matches 'latency'" in result.stderr
