"""The omconnect pytest plugin: runs the conformance suite and summarises it.

Auto-loaded (entry point ``pytest11``) in every pytest run where omconnect is installed,
so it does nothing unless asked: it only adds options, and prints a summary when
conformance cases ran.

* ``--omconnect-transport NAME [--omconnect-transport-config FILE]`` collects the whole
  transport suite against that transport (instead of the project's own tests, unless
  test paths are also given).
* ``--omconnect-connector CLASS_OR_NAME --omconnect-connector-config FILE`` collects the
  connector acceptance suite.
* ``--omconnect-json FILE`` writes the case x outcome table as JSON.

Test classes that subclass the suite's (``TransportConformance``, ``ConnectorConformance``)
are summarised the same way.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

__all__ = ["CaseResult", "record_transport"]

_HERE = Path(__file__).resolve().parent
TRANSPORT_SUITE = _HERE / "suite_transport.py"
CONNECTOR_SUITE = _HERE / "suite_connector.py"
_RULE = re.compile(r"\b((?:TRANSPORT|CONNECTOR)-\d+)\b")
_KIT_BASES = (
    ("omconnect.testing.transport.base", "TransportCase"),
    ("omconnect.testing.connector", "ConnectorConformance"),
)
_results_key = pytest.StashKey[dict[str, "CaseResult"]]()
_transport_key = pytest.StashKey[dict[str, Any]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    """Add the suite's command-line options."""
    group = parser.getgroup("omconnect", "omconnect conformance suite")
    group.addoption("--omconnect-transport", metavar="NAME", default=None,
                    help="run the transport conformance suite against transport NAME "
                         "(an entry-point name or package.module:Class)")
    group.addoption("--omconnect-transport-config", metavar="FILE", default=None,
                    help="transport options for the suite (YAML, JSON or .properties); "
                         "'{tmp}' in a value becomes a fresh directory per case")
    group.addoption("--omconnect-connector", metavar="CLASS_OR_NAME", default=None,
                    help="run the connector acceptance suite against this connector")
    group.addoption("--omconnect-connector-config", metavar="FILE", default=None,
                    help="the connector's configuration for the acceptance suite")
    group.addoption("--omconnect-scale", type=float, default=None, metavar="X",
                    help="multiply the message counts of the volume cases (default 1)")
    group.addoption("--omconnect-timeout", type=float, default=None, metavar="SECONDS",
                    help="how long a case waits for messages that must arrive (default 30)")
    group.addoption("--omconnect-quiet", type=float, default=None, metavar="SECONDS",
                    help="how long a case polls to see that nothing more arrives "
                         "(default 0.5)")
    group.addoption("--omconnect-trials", type=int, default=None, metavar="N",
                    help="how many pipelines each pipeline case runs (default 2; the "
                         "promise is checked with 50)")
    group.addoption("--omconnect-idle", type=float, default=None, metavar="SECONDS",
                    help="the --stop-when-idle window of the pipeline cases' workers "
                         "(default 3)")
    group.addoption("--omconnect-json", metavar="FILE", default=None,
                    help="write the conformance summary (case x outcome) as JSON to FILE")
    group.addoption("--omconnect-json-quiet", action="store_true", default=False,
                    help=argparse.SUPPRESS)  # omconnect conformance: FILE is its scratch


def pytest_configure(config: pytest.Config) -> None:
    """Register the suite's marker; put the suites in the collection when their
    option is given.
    """
    config.addinivalue_line(
        "markers", "omconnect_pipeline: a pipeline case of the omconnect conformance suite "
        "(workers running a source and a sink on the transport; --omconnect-trials sets how "
        "many)")
    config.stash[_results_key] = {}
    config.pluginmanager.register(_Recorder(config), "omconnect-conformance-recorder")
    suites = []
    if config.getoption("omconnect_transport"):
        suites.append(str(TRANSPORT_SUITE))
    if config.getoption("omconnect_connector"):
        suites.append(str(CONNECTOR_SUITE))
    if not suites:
        return
    explicit = config.args_source == pytest.Config.ArgsSource.ARGS
    if not explicit:
        config.args[:] = []
    config.args.extend(s for s in suites if s not in config.args)


def _kit_item(item: pytest.Item) -> bool:
    cls = getattr(item, "cls", None)
    if cls is None:
        return False
    for module_name, base_name in _KIT_BASES:
        module = sys.modules.get(module_name)
        base = getattr(module, base_name, None)
        if base is not None and issubclass(cls, base):
            return True
    return False


class CaseResult:
    """One conformance case's outcome, for the summary.

    Attributes:
        nodeid: The pytest node id.
        suite: The test class that ran the case (the author's subclass).
        case: ``Class::test`` of the class that defines the case.
        rule: The spec rule the case checks (e.g. ``TRANSPORT-7``), from its docstring.
        outcome: ``pass``, ``fail``, ``error``, ``skip``, ``xfail`` or ``xpass``.
        reason: Why it was skipped, xfailed or failed.
        duration: Seconds the case took.

    """

    def __init__(self, nodeid: str, case: str, rule: str) -> None:
        self.nodeid = nodeid
        self.case = case
        self.rule = rule
        self.suite = ""
        self.outcome = "not run"
        self.reason = ""
        self.duration = 0.0

    def as_dict(self) -> dict[str, Any]:
        """The result as JSON-ready data."""
        return {"case": self.case, "suite": self.suite, "rule": self.rule, "outcome": self.outcome,
                "reason": self.reason, "duration": round(self.duration, 3),
                "nodeid": self.nodeid}


class _Recorder:
    """Records the outcome of every conformance case of one run."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        """Note every conformance case that will run (after deselection)."""
        results = self.config.stash[_results_key]
        for item in session.items:
            if not _kit_item(item):
                continue
            function = getattr(item, "function", None)
            qualname = getattr(function, "__qualname__", item.name)
            case = qualname.replace(".", "::")
            match = _RULE.search(getattr(function, "__doc__", None) or "")
            result = CaseResult(item.nodeid, case, match.group(1) if match else "")
            result.suite = getattr(getattr(item, "cls", None), "__name__", "")
            results[item.nodeid] = result

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Record each conformance case's outcome."""
        result = self.config.stash[_results_key].get(report.nodeid)
        if result is None:
            return
        result.duration += report.duration
        wasxfail = getattr(report, "wasxfail", None)
        if report.when == "call" or (report.when == "setup" and not report.passed):
            if wasxfail is not None:
                result.outcome = "xfail" if report.skipped else "xpass"
                result.reason = str(wasxfail)
            elif report.skipped:
                result.outcome, result.reason = "skip", _reason(report)
            elif report.failed:
                result.outcome = "fail" if report.when == "call" else "error"
                result.reason = _reason(report)
            else:
                result.outcome, result.reason = "pass", ""
        elif report.when == "teardown" and report.failed and result.outcome == "pass":
            result.outcome, result.reason = "error", _reason(report)


def _reason(report: pytest.TestReport) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple):
        return str(longrepr[2]).removeprefix("Skipped: ")
    crash = getattr(longrepr, "reprcrash", None)
    if crash is not None:
        return str(crash.message).splitlines()[0][:400]
    return str(longrepr).splitlines()[-1][:400] if longrepr else ""


def record_transport(config: pytest.Config, transport: Any) -> None:
    """Remember the transport a case ran on (name, class, capabilities) for the summary."""
    if _transport_key in config.stash:
        return
    import attrs

    capabilities = transport.capabilities
    config.stash[_transport_key] = {
        "name": getattr(transport, "name", type(transport).__name__),
        "class": f"{type(transport).__module__}:{type(transport).__qualname__}",
        "capabilities": attrs.asdict(capabilities) if attrs.has(type(capabilities)) else {},
    }


def _rule_order(result: CaseResult) -> tuple[str, str, int, str]:
    prefix, _, number = result.rule.partition("-")
    return (result.suite, prefix or "~", int(number) if number.isdigit() else 0, result.case)


def summary(config: pytest.Config) -> dict[str, Any]:
    """The run's conformance summary as JSON-ready data."""
    results = sorted(config.stash.get(_results_key, {}).values(), key=_rule_order)
    counts: dict[str, int] = {}
    for result in results:
        counts[result.outcome] = counts.get(result.outcome, 0) + 1
    return {
        "transport": config.stash.get(_transport_key, None),
        "connector": config.getoption("omconnect_connector"),
        "counts": counts,
        "cases": [r.as_dict() for r in results],
    }


def format_table(data: dict[str, Any]) -> list[str]:
    """The summary as text table lines."""
    several = len({c["suite"] for c in data["cases"]}) > 1
    rows = [(f"{c['suite']}: {c['case']}" if several else c["case"], c["rule"], c["outcome"],
             c["reason"]) for c in data["cases"]]
    headers = ("case", "rule", "outcome", "reason")
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(headers[:3])]
    lines = ["  ".join(h.ljust(w) for h, w in zip(headers[:3], widths, strict=True))
             + "  reason"]
    lines.append("  ".join("-" * w for w in widths) + "  ------")
    for row in rows:
        lines.append("  ".join(v.ljust(w) for v, w in zip(row[:3], widths, strict=True))
                     + "  " + row[3])
    counts = ", ".join(f"{n} {k}" for k, n in sorted(data["counts"].items()))
    lines.append(f"{len(rows)} cases: {counts}")
    return lines


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config
                            ) -> None:
    """Print the case x outcome table (and write it as JSON when asked)."""
    if not config.stash.get(_results_key, None):
        return
    data = summary(config)
    transport = data["transport"]
    title = "omconnect conformance"
    if transport:
        title += f": transport {transport['name']}"
    elif data["connector"]:
        title += f": connector {data['connector']}"
    terminalreporter.write_sep("=", title)
    for line in format_table(data):
        terminalreporter.write_line(line)
    target = config.getoption("omconnect_json")
    if target:
        Path(target).write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
        if not config.getoption("omconnect_json_quiet"):
            terminalreporter.write_line(f"conformance summary written to {target}")
