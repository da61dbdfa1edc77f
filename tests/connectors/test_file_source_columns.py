"""The file source's columnar poll (poll_batch): the same lines as poll, one Arrow batch
per poll, the batch's offset the byte position after its last line.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest
from connector_helpers import JsonOffsets, start_tasks
from omconnect_file.line_columns import line_column
from omconnect_file.source import FileStreamSourceConnector

from omconnect.data import STRING_SCHEMA

pytest.importorskip("pyarrow")

MIXED = "first\nünïcödé ✓\n\nwindows line\r\n".encode() + b"not utf-8 \xff\xfe\n" + b"x\r\r\n"


def _start(path: Path, offsets: JsonOffsets | None = None, **extra: object):
    offsets = offsets if offsets is not None else JsonOffsets()
    (task,) = start_tasks(FileStreamSourceConnector(),
                          {"name": "src", "file": str(path), "topic": "lines", **extra}, offsets)
    return task, offsets


def _batches(task) -> list:
    batches = []
    while (batch := task.poll_batch()) is not None:
        batches.append(batch)
    return batches


def _values(batches) -> list[str]:
    return [v for b in batches for v in b.records.column("value").to_pylist()]


def test_lines_are_those_poll_gives_in_one_string_column(tmp_path: Path) -> None:
    path = tmp_path / "in.txt"
    path.write_bytes(MIXED)
    per_record, _ = _start(path)
    expected = [r.value for r in per_record.poll()]
    per_record.stop()
    task, _ = _start(path)
    (batch,) = _batches(task)
    assert _values([batch]) == expected
    assert expected[3] == "windows line" and expected[5] == "x\r"  # one \r dropped, as poll
    assert batch.topic == "lines" and batch.value_schema == STRING_SCHEMA
    assert batch.source_partition == {"filename": str(path)}
    assert batch.source_offset == {"position": len(MIXED), "inode": os.stat(path).st_ino}
    assert batch.records.column("timestamp").null_count == 0
    task.stop()


def test_batch_size_caps_each_batch_and_offsets_follow_the_lines(tmp_path: Path) -> None:
    path = tmp_path / "in.txt"
    data = "".join(f"line {i}\n" for i in range(25)).encode()
    path.write_bytes(data)
    task, _ = _start(path, **{"batch.size": 10})
    batches = _batches(task)
    assert [b.num_rows for b in batches] == [10, 10, 5]
    assert _values(batches) == [f"line {i}" for i in range(25)]
    ends = [data.index(b"line 10"), data.index(b"line 20"), len(data)]
    assert [b.source_offset["position"] for b in batches] == ends
    task.stop()


def test_a_restart_resumes_after_the_last_committed_batch(tmp_path: Path) -> None:
    path = tmp_path / "in.txt"
    path.write_text("".join(f"line {i}\n" for i in range(10)))
    task, offsets = _start(path, **{"batch.size": 4})
    first = task.poll_batch()
    offsets.commit_batch(first)
    task.poll_batch()  # polled but not committed: must come again
    task.stop()
    again, _ = _start(path, offsets)
    assert _values(_batches(again)) == [f"line {i}" for i in range(4, 10)]
    again.stop()


def test_a_last_line_waits_for_its_newline(tmp_path: Path) -> None:
    path = tmp_path / "in.txt"
    path.write_bytes(b"one\ntw")
    task, _ = _start(path)
    assert _values(_batches(task)) == ["one"]
    with path.open("ab") as f:
        f.write(b"o\n")
    assert _values(_batches(task)) == ["two"]
    task.stop()


def test_rotation_delivers_the_old_files_last_line_then_the_new_file(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "in.txt"
    path.write_bytes(b"a\nb\nunfinished")
    task, _ = _start(path)
    assert _values(_batches(task)) == ["a", "b"]
    path.rename(tmp_path / "in.txt.1")
    path.write_bytes(b"new 1\nnew 2\n")
    with caplog.at_level(logging.WARNING):
        old_last = task.poll_batch()
        rest = _batches(task)
    assert _values([old_last]) == ["unfinished"]
    assert old_last.source_offset["position"] == len(b"a\nb\nunfinished")
    assert _values(rest) == ["new 1", "new 2"]
    assert rest[-1].source_offset == {"position": 12, "inode": os.stat(path).st_ino}
    task.stop()


def test_the_column_splits_without_a_per_line_step_when_the_bytes_are_utf8() -> None:
    column = line_column(b"a\r\nb\n\n")
    assert column.to_pylist() == ["a", "b", ""]
    assert str(column.type) == "string"
