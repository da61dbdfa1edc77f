"""Each broken connector is caught by the acceptance case meant to catch it."""

from __future__ import annotations

import json

import pytest
from nested_suite import plugin_args

pytest_plugins = ["pytester"]

SUITES = '''
from pathlib import Path

from omconnect.testing import ConnectorConformance
import broken_connectors as bc


class SourceBase(ConnectorConformance):
    def connector_config(self, workdir):
        path = workdir / "in.txt"
        path.write_text("".join(f"line {i}\\n" for i in range(23)))
        return {"path": str(path), "topic": "lines"}


class TestLines(SourceBase):
    connector_class = bc.LinesSource


class TestSkipping(SourceBase):
    connector_class = bc.SkippingSource


class TestStubborn(SourceBase):
    connector_class = bc.StubbornSource
    graceful_timeout = 1.0


class TestUndocumented(SourceBase):
    connector_class = bc.UndocumentedSource


class SinkBase(ConnectorConformance):
    def connector_config(self, workdir):
        return {"path": str(workdir / "out.txt")}

    def sink_state(self, config):
        path = Path(config["path"])
        return path.read_text() if path.exists() else ""


class TestAppend(SinkBase):
    connector_class = bc.AppendSink


class TestLazy(SinkBase):
    connector_class = bc.LazySink
'''

CAUGHT_BY = {
    "TestSkipping": "test_restarted_source_task_resumes_without_loss",
    "TestStubborn": "test_stop_returns_promptly_while_poll_blocks",
    "TestUndocumented": "test_config_def_documents_every_key",
    "TestLazy": "test_committed_data_survives_a_crash",
}


def test_each_defect_is_caught_by_its_case(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_suites=SUITES)
    report = pytester.path / "out.json"
    pytester.runpytest(*plugin_args(), "-p", "no:cacheprovider", "-q",
                       "--omconnect-json", str(report))
    cases = json.loads(report.read_text())["cases"]
    failed = {(c["suite"], c["case"].split("::")[-1]) for c in cases if c["outcome"] == "fail"}
    expected = set(CAUGHT_BY.items())
    assert failed == expected, f"unexpected: {failed - expected}; missed: {expected - failed}"
    by_suite: dict[str, set[str]] = {}
    for case in cases:
        by_suite.setdefault(case["suite"], set()).add(case["outcome"])
    assert by_suite["TestLines"] <= {"pass", "skip"}
    assert by_suite["TestAppend"] <= {"pass", "skip", "xfail"}
