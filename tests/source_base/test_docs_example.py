"""Runs the complete example of docs/source-base.md: a directory source on the base.

Covers resume through the offset manager after a restart (offsets stored as JSON, as the
runtime does), errors.tolerance on a malformed line, new files being picked up, and the
distribution of files over tasks.
"""

from __future__ import annotations

import gzip
import json
import sys
import types
from pathlib import Path
from typing import Any

import pytest
from source_helpers import Context, DictOffsetStore, FakeClock, acknowledge

from omconnect.errors import DataError
from omconnect.records import SourceRecord

DOC = Path(__file__).resolve().parents[2] / "docs" / "source-base.md"


@pytest.fixture(scope="module")
def example() -> types.ModuleType:
    text = DOC.read_text()
    block = text.split("<!-- example: directory-source -->", 1)[1]
    code = block.split("```python\n", 1)[1].split("\n```", 1)[0]
    module = types.ModuleType("directory_source_example")
    sys.modules[module.__name__] = module
    exec(compile(code, str(DOC), "exec"), module.__dict__)
    return module


def write_jsonl(path: Path, start: int, count: int) -> None:
    lines = "".join(json.dumps({"n": i}) + "\n" for i in range(start, start + count))
    if path.suffix == ".gz":
        path.write_bytes(gzip.compress(lines.encode()))
    else:
        path.write_text(lines)


def start_task(example: types.ModuleType, directory: Path, store: DictOffsetStore,
               **settings: Any) -> Any:
    task = example.DirectorySourceTask(clock=FakeClock())
    config = {"directory": str(directory), "topic": "numbers", "input.format": "jsonl",
              **{k.replace("_", "."): v for k, v in settings.items()}}
    task.initialize(Context(store, config))
    task.start(config)
    return task


def drain(task: Any, polls: int = 20) -> list[SourceRecord]:
    records: list[SourceRecord] = []
    for _ in range(polls):
        records += task.poll() or []
    return records


def numbers(records: list[SourceRecord]) -> list[int]:
    return [r.value["n"] for r in records]


@pytest.fixture
def directory(tmp_path: Path) -> Path:
    write_jsonl(tmp_path / "a.jsonl", 0, 10)
    write_jsonl(tmp_path / "b.jsonl.gz", 10, 25)
    write_jsonl(tmp_path / "c.jsonl", 35, 5)
    return tmp_path


def test_reads_every_file_once_with_partition_and_offset(example: types.ModuleType,
                                                         directory: Path) -> None:
    task = start_task(example, directory, DictOffsetStore())
    records = drain(task)
    assert numbers(records) == list(range(40))
    first_b = records[10]
    assert first_b.source_partition == {"file": "b.jsonl.gz"}
    assert first_b.source_offset == {"records": 1, "done": False}
    assert records[34].source_offset == {"records": 25, "done": True}
    assert first_b.key == "b.jsonl.gz"
    task.stop()


def test_a_restarted_task_resumes_inside_a_half_read_file(example: types.ModuleType,
                                                          directory: Path) -> None:
    store = DictOffsetStore()
    first = start_task(example, directory, store, max_poll_records=7)
    delivered: list[SourceRecord] = []
    for _ in range(3):  # 21 records: all of a.jsonl and 11 of b.jsonl.gz
        batch = first.poll() or []
        acknowledge(first, store, batch)
        delivered += batch
    in_flight = first.poll() or []  # read and sent, never acknowledged: lost on a crash
    assert in_flight
    first.stop()

    second = start_task(example, directory, store, max_poll_records=7)
    resumed = drain(second)
    assert numbers(delivered) == list(range(21))
    assert numbers(resumed) == list(range(21, 40))  # no loss, no duplicate
    assert resumed[0].source_offset == {"records": 12, "done": False}
    second.stop()


def test_acknowledged_entries_leave_the_cache_yet_finished_files_stay_finished(
        example: types.ModuleType, directory: Path) -> None:
    store = DictOffsetStore()
    task = start_task(example, directory, store)
    records = drain(task)
    acknowledge(task, store, records)
    task.poll()  # the first poll after commit() evicts what storage now holds
    assert len(task.offset_manager) == 0
    write_jsonl(directory / "d.jsonl", 40, 3)
    assert numbers(drain(task)) == [40, 41, 42]  # a new file is picked up, old ones not reread
    task.stop()


def test_a_malformed_line_fails_the_task_naming_file_and_line(example: types.ModuleType,
                                                              directory: Path) -> None:
    (directory / "b.jsonl.gz").unlink()
    (directory / "bad.jsonl").write_text('{"n": 100}\n{"n": \n{"n": 101}\n')
    task = start_task(example, directory, DictOffsetStore())
    assert numbers(task.poll() or []) == [*range(10), 100]
    with pytest.raises(DataError) as info:
        task.poll()
    assert info.value.context == {"object": "bad.jsonl", "line": 2}
    task.stop()


def test_with_errors_tolerance_all_the_malformed_line_is_skipped(example: types.ModuleType,
                                                                 directory: Path) -> None:
    (directory / "b.jsonl.gz").unlink()
    (directory / "bad.jsonl").write_text('{"n": 100}\n{"n": \n{"n": 101}\n')
    task = start_task(example, directory, DictOffsetStore(), errors_tolerance="all")
    assert numbers(drain(task)) == [*range(10), 100, 101, *range(35, 40)]
    task.stop()


def test_three_tasks_share_thirty_files_each_read_exactly_once(example: types.ModuleType,
                                                               tmp_path: Path) -> None:
    for i in range(30):
        write_jsonl(tmp_path / f"part-{i:02d}.jsonl", i * 10, 10)
    connector = example.DirectorySourceConnector()
    connector.start({"directory": str(tmp_path), "topic": "numbers", "input.format": "jsonl"})
    seen: list[int] = []
    for config in connector.task_configs(3):
        task = connector.task_class()(clock=FakeClock())
        store = DictOffsetStore()
        task.initialize(Context(store, config))
        task.start(config)
        got = numbers(drain(task))
        assert got, "every task gets some files"
        seen += got
        task.stop()
    assert sorted(seen) == list(range(300))
