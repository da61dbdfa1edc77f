"""The answers docs/connector-spi.md and docs/data-model.md give connector authors run as
written: each example asserts what it claims (what validate, start and a task's start
receive, reading a struct generically, the millisecond precision of time types).
"""

from __future__ import annotations

import sys
import types
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"


def _example(page: str, name: str) -> str:
    text = (DOCS / page).read_text()
    marker = f"<!-- example: {name} -->"
    assert marker in text, f"{page} has no example {name!r}"
    return text.split(marker, 1)[1].split("```python\n", 1)[1].split("\n```", 1)[0]


def _run(page: str, name: str) -> dict[str, object]:
    module = types.ModuleType(f"doc_example_{name.replace('-', '_')}")
    sys.modules[module.__name__] = module  # connector.class=<module>:Class resolves
    try:
        exec(compile(_example(page, name), str(DOCS / page), "exec"), module.__dict__)
    finally:
        sys.modules.pop(module.__name__, None)
    return module.__dict__


@pytest.fixture(scope="module")
def config_flow() -> dict[str, object]:
    return _run("connector-spi.md", "config-flow")  # once: its memory namespace stays


def test_what_validate_start_and_a_tasks_start_receive(config_flow: dict[str, object]) -> None:
    seen = config_flow["SEEN"]
    assert isinstance(seen, dict) and {"validate", "start", "task"} <= seen.keys()


def test_the_rest_api_hides_a_password_a_task_config_holds(
        config_flow: dict[str, object]) -> None:
    httpx = pytest.importorskip("httpx")
    pytest.importorskip("fastapi")
    from omconnect.rest.server import RestServer
    from omconnect.runtime import StandaloneHerder

    namespace = config_flow
    sys.modules["doc_flow"] = module = types.ModuleType("doc_flow")
    module.TableSource = namespace["TableSource"]
    try:
        herder = StandaloneHerder({"transport": "memory", "memory.namespace": "rest-hides"})
        herder.start()
        server = RestServer(herder, port=0)
        server.start()
        try:
            herder.create_connector({"name": "tables", "connector.class": "doc_flow:TableSource",
                                     "db.password": "s3cret"})
            with httpx.Client(base_url=server.url, timeout=10) as client:
                tasks = client.get("/connectors/tables/tasks").json()
                config = client.get("/connectors/tables/config").json()
        finally:
            server.stop()
            herder.stop()
    finally:
        sys.modules.pop("doc_flow", None)
    assert tasks[0]["config"]["db.password"] == "[hidden]"
    assert config["db.password"] == "[hidden]"
    assert "s3cret" not in repr(tasks) + repr(config)


def test_reading_a_struct_generically() -> None:
    _run("data-model.md", "struct-generic")


def test_time_types_keep_milliseconds() -> None:
    _run("data-model.md", "time-precision")
