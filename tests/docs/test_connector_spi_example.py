"""Runs the complete example of docs/connector-spi.md, on its own and on the runtime."""

from __future__ import annotations

import glob
import json
import sys
import threading
import types
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pytest

from omconnect.connector import OffsetStorageReader, SourceTaskContext, freeze_partition
from omconnect.records import JsonScalar, TopicPartition

DOC = Path(__file__).resolve().parents[2] / "docs" / "connector-spi.md"
MODULE = "connector_spi_example"


@pytest.fixture(scope="module")
def example() -> types.ModuleType:
    text = DOC.read_text()
    block = text.split("<!-- example: connector-spi -->", 1)[1]
    code = block.split("```python\n", 1)[1].split("\n```", 1)[0]
    module = types.ModuleType(MODULE)
    sys.modules[MODULE] = module  # so connector.class=connector_spi_example:... resolves
    exec(compile(code, str(DOC), "exec"), module.__dict__)
    return module


class _Offsets(OffsetStorageReader):
    def __init__(self, stored: Mapping[int, int]) -> None:
        self.stored = {freeze_partition({"block": b}): {"next": n} for b, n in stored.items()}

    def offsets(
        self, partitions: Iterable[Mapping[str, JsonScalar]]
    ) -> dict[tuple[tuple[str, JsonScalar], ...], dict[str, Any]]:
        keys = [freeze_partition(p) for p in partitions]
        return {k: self.stored[k] for k in keys if k in self.stored}


class _Context(SourceTaskContext):
    def __init__(self, stored: Mapping[int, int]) -> None:
        self.reader = _Offsets(stored)

    @property
    def offset_storage_reader(self) -> OffsetStorageReader:
        return self.reader

    @property
    def configs(self) -> Mapping[str, Any]:
        return {}


def _connector_configs(example: types.ModuleType, count: int,
                       max_tasks: int) -> list[dict[str, Any]]:
    connector = example.CounterConnector()
    connector.start(example.COUNTER_CONFIG.parse({"topic": "numbers", "count": count}))
    return connector.task_configs(max_tasks)  # type: ignore[no-any-return]


def _drain(example: types.ModuleType, config: Mapping[str, Any],
           stored: Mapping[int, int] | None = None) -> list[int]:
    task = example.CounterTask()
    task.initialize(_Context(stored or {}))
    task.start(config)
    values: list[int] = []
    while task.todo:
        values += [r.value for r in task.poll() or []]
    return values


@pytest.mark.parametrize(("count", "max_tasks"), [(1000, 3), (50, 4), (0, 2), (250, 1)])
def test_task_configs_honour_max_tasks_and_cover_the_job(example: types.ModuleType,
                                                         count: int, max_tasks: int) -> None:
    configs = _connector_configs(example, count, max_tasks)
    assert 1 <= len(configs) <= max_tasks
    produced = [v for config in configs for v in _drain(example, config)]
    assert sorted(produced) == list(range(count))
    json.dumps(configs)  # task configs are stored by the runtime: JSON-serialisable


def test_a_task_resumes_from_its_committed_offsets(example: types.ModuleType) -> None:
    [config] = _connector_configs(example, 300, 1)
    # block 0 done up to 42, block 1 finished, block 2 not started
    assert _drain(example, config, {0: 42, 1: 200}) == [*range(42, 100), *range(200, 300)]


def test_records_carry_json_partitions_and_resume_offsets(example: types.ModuleType) -> None:
    [config] = _connector_configs(example, 5, 1)
    task = example.CounterTask()
    task.initialize(_Context({}))
    task.start(config)
    records = task.poll()
    assert [r.source_offset for r in records] == [{"next": n} for n in range(1, 6)]
    assert {json.dumps(dict(r.source_partition)) for r in records} == {'{"block": 0}'}


def test_stop_wakes_a_blocked_poll(example: types.ModuleType) -> None:
    [config] = _connector_configs(example, 0, 1)
    task = example.CounterTask()
    task.initialize(_Context({}))
    task.start(config)
    polled = threading.Event()

    def poll_forever() -> None:
        while not task.stopping.is_set():
            task.poll()
        polled.set()

    thread = threading.Thread(target=poll_forever, daemon=True)
    thread.start()
    task.stop()
    assert polled.wait(5), "poll() did not return after stop()"


def test_stop_before_start_is_harmless(example: types.ModuleType) -> None:
    example.CounterTask().stop()
    example.JsonLinesSinkTask().stop()


def test_the_sink_flushes_to_disk_and_returns_the_offsets(example: types.ModuleType,
                                                          tmp_path: Path) -> None:
    from omconnect.records import SinkRecord

    task = example.JsonLinesSinkTask()
    task.start({"file": str(tmp_path / "out.0")})
    task.put([SinkRecord(topic="t", partition=0, offset=7, key="7", value=7)])
    offsets = {TopicPartition("t", 0): 8}
    assert task.pre_commit(offsets) == offsets
    assert json.loads((tmp_path / "out.0").read_text()) == {
        "topic": "t", "partition": 0, "offset": 7, "key": "7", "value": 7}
    task.stop()


def _lines(directory: Path) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for path in glob.glob(str(directory / "numbers.jsonl.*")):
        found += [json.loads(line) for line in Path(path).read_text().splitlines()]
    return found


def test_the_example_runs_on_the_runtime_and_resumes_after_restarts(
    example: types.ModuleType, tmp_path: Path,
) -> None:
    assert example.run(str(tmp_path), 450) == list(range(450))
    assert sorted(line["value"] for line in _lines(tmp_path)) == list(range(450))
    # Restart with the same settings: nothing new, nothing repeated.
    assert example.run(str(tmp_path), 450) == list(range(450))
    assert len(_lines(tmp_path)) == 450
    # Raise the count: only the new numbers are produced, and the blocks that were
    # complete stay complete.
    assert example.run(str(tmp_path), 720) == list(range(720))
    assert sorted(line["value"] for line in _lines(tmp_path)) == list(range(720))
