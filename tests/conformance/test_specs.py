"""specs/transport.md, specs/connector.md and specs/distributed.md name real cases, and
every case is listed."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
RULE = re.compile(r"\*\*((?:TRANSPORT|CONNECTOR|DISTRIBUTED)-\d+)\*\*(.*?)(?=\n- \*\*|\n## |\Z)",
                  re.S)
CASE = re.compile(r"`([\w/.]+\.py)::(\w+)(?:::(\w+))?`")
SPECS = {"transport.md": "omconnect/testing/transport/", "connector.md": "omconnect/testing/",
         "distributed.md": "tests/"}


def _rules(spec: str) -> dict[str, list[tuple[str, str, str | None]]]:
    text = (REPO / "specs" / spec).read_text()
    return {rule: CASE.findall(body) for rule, body in RULE.findall(text)}


@pytest.mark.parametrize("spec", sorted(SPECS))
def test_every_rule_names_a_case_that_checks_it(spec: str) -> None:
    for rule, cases in _rules(spec).items():
        assert cases, f"{rule} names no test"
        for path, owner, name in cases:
            if path.startswith("tests/"):
                test = name or owner
                assert f"def {test}(" in (REPO / path).read_text(), f"{rule}: {path}::{test}"
                continue
            module = (SPECS[spec] + path).removesuffix(".py").replace("/", ".")
            function = getattr(getattr(importlib.import_module(module), owner), name or "")
            assert rule in (function.__doc__ or "").split(":")[0], \
                f"{rule}: {module}.{owner}.{name} says it checks {function.__doc__[:20]!r}"


def test_every_case_is_in_the_specs() -> None:
    from omconnect.testing import ConnectorConformance, TransportConformance

    listed = set(_rules("transport.md")) | set(_rules("connector.md"))
    for cls in (TransportConformance, ConnectorConformance):
        for name in dir(cls):
            if name.startswith("test_"):
                doc = getattr(cls, name).__doc__ or ""
                rule = re.match(r"((?:TRANSPORT|CONNECTOR)-\d+)", doc)
                assert rule, f"{cls.__name__}.{name} names no rule"
                assert rule.group(1) in listed, f"{rule.group(1)} ({name}) is not in specs/"
