"""The suite works from an installed wheel, outside this repository."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _run(*command: object, cwd: Path | None = None, timeout: float = 600
         ) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    done = subprocess.run([str(c) for c in command], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout, check=False)
    assert done.returncode in (0, 1), f"{command} failed:\n{done.stdout[-2000:]}\n" \
                                      f"{done.stderr[-2000:]}"
    return done


@pytest.mark.slow
def test_kit_runs_from_an_installed_wheel_outside_the_repository(tmp_path: Path) -> None:
    dist, venv, outside = tmp_path / "dist", tmp_path / "venv", tmp_path / "elsewhere"
    outside.mkdir()
    uv = shutil.which("uv")
    python = venv / "bin" / "python"
    if uv:
        _run(uv, "build", "--wheel", "--out-dir", dist, REPO)
        _run(uv, "venv", "--python", sys.executable, venv)
        [wheel] = dist.glob("omconnect-*.whl")
        _run(uv, "pip", "install", "--python", python, wheel, "pytest")
    else:  # no uv: a stdlib venv has pip (ensurepip), which builds the wheel too
        _run(sys.executable, "-m", "venv", venv)
        _run(python, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", dist, REPO)
        [wheel] = dist.glob("omconnect-*.whl")
        _run(python, "-m", "pip", "install", "--quiet", wheel, "pytest")
    report = tmp_path / "report.json"
    done = _run(python, "-m", "pytest", "--omconnect-transport", "embedded", "-q",
                "-p", "no:cacheprovider", "--omconnect-json", report, cwd=outside)
    assert done.returncode == 0, done.stdout[-3000:]
    data = json.loads(report.read_text())
    assert data["transport"]["name"] == "embedded"
    assert data["counts"].get("fail", 0) == 0 and data["counts"]["pass"] >= 35
    where = _run(python, "-c", "import omconnect.testing; print(omconnect.testing.__file__)",
                 cwd=outside)
    assert str(venv) in where.stdout, "the suite came from the installed wheel"
