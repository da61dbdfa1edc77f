"""Helpers for the suite's self-tests: run the suite in a nested pytest and read its table."""

from __future__ import annotations

import importlib.metadata
import json
from pathlib import Path
from typing import Any

import pytest

# pytester's inline runs forget the modules first imported inside them, and numpy refuses
# a second import in one process ("cannot load module more than once"): the columnar
# cases import it (through pyarrow's compute and the transports' column code), so it is
# imported here, outside every inline run, when the extra is installed.
try:
    import numpy  # noqa: F401
    import pyarrow.compute  # noqa: F401
except ImportError:  # the columnar cases skip themselves without the extra
    pass

MEMORY = "omconnect.transport.memory:MemoryTransport"


def plugin_args() -> list[str]:
    """``-p omconnect.testing.plugin`` when the plugin is not installed as an entry point."""
    installed = any(ep.value == "omconnect.testing.plugin"
                    for ep in importlib.metadata.entry_points(group="pytest11"))
    return [] if installed else ["-p", "omconnect.testing.plugin"]


def run_suite(pytester: pytest.Pytester, *args: str, timeout: float = 3.0
              ) -> tuple[Any, dict[str, Any]]:
    """Run pytest with ``args`` in ``pytester``'s directory; the result and the JSON table.

    ``timeout`` is the suite's delivery deadline: short, because a broken transport makes
    some cases wait for messages that never come.
    """
    report = Path(pytester.path) / "conformance.json"
    result = pytester.runpytest(*plugin_args(), "-p", "no:cacheprovider", "-q",
                                "--omconnect-timeout", str(timeout),
                                "--omconnect-json", str(report), *args)
    data = json.loads(report.read_text()) if report.exists() else {"cases": []}
    return result, data


def outcomes(data: dict[str, Any]) -> dict[str, str]:
    """Test name -> outcome, from the JSON table."""
    return {case["case"].split("::")[-1]: case["outcome"] for case in data["cases"]}
