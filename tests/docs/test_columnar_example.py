"""Runs the columnar example of docs/connector-spi.md on the runtime: every row arrives
as Arrow batches, with no per-record step, and a restarted source resumes after its last
batch.
"""

from __future__ import annotations

import sys
import time
import types
import uuid
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pyarrow")

from omconnect.runtime import StandaloneHerder
from omconnect.testing.waiting import eventually

DOC = Path(__file__).resolve().parents[2] / "docs" / "connector-spi.md"
MODULE = "columnar_example"


@pytest.fixture(scope="module")
def example() -> types.ModuleType:
    block = DOC.read_text().split("<!-- example: columnar -->", 1)[1]
    code = block.split("```python\n", 1)[1].split("\n```", 1)[0]
    module = types.ModuleType(MODULE)
    sys.modules[MODULE] = module
    exec(compile(code, str(DOC), "exec"), module.__dict__)
    return module


def _worker(tmp_path: Path) -> dict[str, Any]:
    return {"transport": "embedded", "embedded.path": str(tmp_path / "log.db"),
            "offset.flush.interval.ms": 50, "key.converter": "string",
            "value.converter": "string"}


def _rows(example: types.ModuleType) -> list[str]:
    return [v for batch in example.RECEIVED for v in batch.column("value").to_pylist()]


def test_the_columnar_example_moves_every_row_as_batches(example, tmp_path) -> None:
    example.RECEIVED.clear()
    topic = f"rows-{uuid.uuid4().hex[:6]}"
    with StandaloneHerder(_worker(tmp_path)) as herder:
        herder.create_connector({"name": "rows", "connector.class":
                                 f"{MODULE}:RowsConnector", "topic": topic, "rows": 950,
                                 "batch": 100})
        herder.create_connector({"name": "arrow-list", "connector.class":
                                 f"{MODULE}:ArrowListConnector", "topics": topic})
        eventually(lambda: len(_rows(example)) == 950, timeout=30)
        eventually(lambda: [o["offset"] for o in herder.offsets("rows").offsets]
                   == [{"next": 950}])
        metrics = {m.connector: m for m in herder.metrics()}
        assert metrics["rows"].columnar == 950 and metrics["rows"].columnar_fallback == 0
        assert metrics["arrow-list"].columnar == 950
    assert sorted(_rows(example)) == sorted(f"row-{n}" for n in range(950))
    assert all(batch.schema.field("value").type.equals(__import__("pyarrow").string())
               for batch in example.RECEIVED)
    with StandaloneHerder(_worker(tmp_path)) as herder:
        herder.put_connector_config("rows", {"name": "rows", "connector.class":
                                             f"{MODULE}:RowsConnector", "topic": topic,
                                             "rows": 1000, "batch": 100})
        eventually(lambda: len(_rows(example)) == 1000, timeout=30)
        time.sleep(0.3)
    assert sorted(_rows(example)) == sorted(f"row-{n}" for n in range(1000)), \
        "the restarted source resumed after its last batch: nothing lost or repeated"
