"""The file source through the SPI: lines, byte positions, resume, truncation, rotation."""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path

import pytest
from connector_helpers import JsonOffsets, poll_until_idle, start_tasks
from omconnect_file.source import FileStreamSourceConnector, FileStreamSourceTask
from omconnect_file.tail import FileTail, StreamLines

from omconnect.connector import resolve_connector_class
from omconnect.data import STRING_SCHEMA


def _config(path: Path, **extra: object) -> dict[str, object]:
    return {"name": "src", "file": str(path), "topic": "lines", **extra}


def _start(path: Path, offsets: JsonOffsets | None = None, **extra: object):
    offsets = offsets if offsets is not None else JsonOffsets()
    (task,) = start_tasks(FileStreamSourceConnector(), _config(path, **extra), offsets)
    return task, offsets


def test_each_line_becomes_a_string_record_with_the_byte_position_after_it(tmp_path):
    path = tmp_path / "in.txt"
    lines = ["first", "ünïcödé ✓", "", "windows line"]
    path.write_bytes("first\nünïcödé ✓\n\nwindows line\r\n".encode())
    task, _ = _start(path)
    records = poll_until_idle(task)
    assert [r.value for r in records] == lines
    assert all(r.value_schema == STRING_SCHEMA and r.topic == "lines" for r in records)
    assert {r.source_partition["filename"] for r in records} == {str(path)}
    data = path.read_bytes()
    positions = [r.source_offset["position"] for r in records]
    expected, at = [], 0
    for _ in lines:
        at = data.index(b"\n", at) + 1
        expected.append(at)
    assert positions == expected
    task.stop()


def test_a_last_line_without_newline_waits_for_its_newline(tmp_path):
    path = tmp_path / "in.txt"
    path.write_bytes(b"one\ntw")
    task, _ = _start(path)
    assert [r.value for r in poll_until_idle(task)] == ["one"]
    with path.open("ab") as f:
        f.write(b"o\nthree")
    assert [r.value for r in poll_until_idle(task)] == ["two"]
    with path.open("ab") as f:
        f.write(b"\n")
    assert [r.value for r in poll_until_idle(task)] == ["three"]
    task.stop()


def test_batch_size_caps_each_poll_and_nothing_is_skipped(tmp_path):
    path = tmp_path / "in.txt"
    path.write_text("".join(f"line {i}\n" for i in range(25)))
    task, _ = _start(path, **{"batch.size": 10})
    sizes, values = [], []
    while True:
        batch = task.poll()
        if not batch:
            break
        sizes.append(len(batch))
        values += [r.value for r in batch]
    assert sizes == [10, 10, 5]
    assert values == [f"line {i}" for i in range(25)]
    task.stop()


def test_a_restarted_task_continues_after_the_committed_position(tmp_path):
    path = tmp_path / "in.txt"
    path.write_text("".join(f"line {i}\n" for i in range(10)))
    task, offsets = _start(path, **{"batch.size": 4})
    first = task.poll()
    offsets.commit(first)  # only the first batch is committed
    task.poll()  # polled but never committed: must come again
    task.stop()
    with path.open("a") as f:
        f.write("line 10\n")
    again, _ = _start(path, offsets)
    assert [r.value for r in poll_until_idle(again)] == [f"line {i}" for i in range(4, 11)]
    again.stop()


def test_a_truncated_file_is_read_again_from_the_start(tmp_path, caplog):
    path = tmp_path / "in.txt"
    path.write_text("a long first line\nanother long line\n")
    task, _ = _start(path)
    assert len(poll_until_idle(task)) == 2
    with caplog.at_level(logging.WARNING), path.open("w") as f:  # truncates, same inode
        f.write("new\n")
    records = poll_until_idle(task)
    assert [r.value for r in records] == ["new"]
    assert records[0].source_offset["position"] == 4
    assert "truncated" in caplog.text
    task.stop()


def test_a_committed_position_beyond_the_end_restarts_from_zero(tmp_path, caplog):
    path = tmp_path / "in.txt"
    path.write_text("one\ntwo\nthree\n")
    task, offsets = _start(path)
    offsets.commit(poll_until_idle(task))
    task.stop()
    path.write_text("x\n")  # truncated while nothing read it
    with caplog.at_level(logging.WARNING):
        again, _ = _start(path, offsets)
        assert [r.value for r in poll_until_idle(again)] == ["x"]
    assert "truncated" in caplog.text
    again.stop()


def test_rotation_finishes_the_old_file_then_reads_the_new_one_from_zero(tmp_path, caplog):
    path = tmp_path / "app.log"
    path.write_text("old 1\nold 2\n")
    task, offsets = _start(path)
    assert [r.value for r in poll_until_idle(task, offsets)] == ["old 1", "old 2"]
    with path.open("a") as old:
        old.write("old 3\nold partial")  # written after the last read, before the rotation
    os.rename(path, tmp_path / "app.log.1")
    path.write_text("new 1\n")
    with caplog.at_level(logging.WARNING):
        records = poll_until_idle(task, offsets)
    assert [r.value for r in records] == ["old 3", "old partial", "new 1"]
    assert records[-1].source_offset["position"] == 6
    assert records[-1].source_offset["inode"] != records[0].source_offset["inode"]
    assert "rotated" in caplog.text
    task.stop()
    # Restarting resumes in the new file at the committed position.
    with path.open("a") as f:
        f.write("new 2\n")
    again, _ = _start(path, offsets)
    assert [r.value for r in poll_until_idle(again)] == ["new 2"]
    again.stop()


def test_rotation_while_stopped_reads_the_new_file_from_zero(tmp_path, caplog):
    path = tmp_path / "app.log"
    path.write_text("".join(f"old {i}\n" for i in range(5)))
    task, offsets = _start(path)
    offsets.commit(poll_until_idle(task))
    task.stop()
    os.rename(path, tmp_path / "app.log.1")
    path.write_text("".join(f"new {i}\n" for i in range(9)))  # longer than the old position
    with caplog.at_level(logging.WARNING):
        again, _ = _start(path, offsets)
        assert [r.value for r in poll_until_idle(again)] == [f"new {i}" for i in range(9)]
    assert "rotated" in caplog.text
    again.stop()


def test_an_offset_without_inode_is_used_as_a_plain_byte_position(tmp_path):
    path = tmp_path / "in.txt"
    path.write_text("aaa\nbbb\nccc\n")
    offsets = JsonOffsets()
    offsets.stored[f'[["filename", "{path}"]]'] = '{"position": 4}'
    task, _ = _start(path, offsets)
    assert [r.value for r in poll_until_idle(task)] == ["bbb", "ccc"]
    task.stop()


def test_a_missing_file_is_waited_for(tmp_path):
    path = tmp_path / "later.txt"
    task, _ = _start(path)
    assert task.poll() is None
    path.write_text("here\n")
    assert [r.value for r in poll_until_idle(task)] == ["here"]
    task.stop()


def test_stop_from_another_thread_ends_a_waiting_poll(tmp_path):
    task, _ = _start(tmp_path / "never.txt")  # a missing file: poll waits 1 s each time
    done = threading.Event()

    def poll_forever() -> None:
        while not done.is_set():
            task.poll()

    thread = threading.Thread(target=poll_forever)
    thread.start()
    task.stop()
    done.set()
    thread.join(timeout=0.5)  # well under the 1 s poll wait
    assert not thread.is_alive()
    assert task.poll() is None


def test_records_polled_in_one_run_cover_a_file_being_appended_concurrently(tmp_path):
    path = tmp_path / "in.txt"
    path.write_bytes(b"")
    task, _ = _start(path, **{"batch.size": 7})
    expected = [f"{i}-{'x' * (i % 13)}" for i in range(2000)]
    writer_done = threading.Event()

    def write() -> None:
        with path.open("ab", buffering=0) as f:
            for line in expected:
                data = (line + "\n").encode()
                f.write(data[:3])  # lines arrive in pieces
                f.write(data[3:])
        writer_done.set()

    thread = threading.Thread(target=write)
    thread.start()
    got: list[str] = []
    while not writer_done.is_set():
        got += [r.value for r in task.poll() or []]
    got += [r.value for r in poll_until_idle(task)]
    thread.join()
    assert got == expected
    task.stop()


@pytest.mark.parametrize("config, key", [
    ({"file": "x"}, "topic"),
    ({"file": "x", "topic": "a,b"}, "topic"),
    ({"file": "x", "topic": "t", "batch.size": "0"}, "batch.size"),
    ({"file": "x", "topic": "t", "batch.size": "many"}, "batch.size"),
])
def test_bad_configs_are_rejected_naming_the_key(config, key):
    errors = FileStreamSourceConnector().validate(config)
    assert errors[key], errors
    assert key in " ".join(errors[key])


def test_one_task_whatever_tasks_max_and_kafka_connect_names_resolve(tmp_path):
    connector = FileStreamSourceConnector()
    connector.start(_config(tmp_path / "f"))
    assert len(connector.task_configs(8)) == 1
    assert connector.task_class() is FileStreamSourceTask
    for name in ("file-source", "FileStreamSource", "FileStreamSourceConnector",
                 "org.apache.kafka.connect.file.FileStreamSourceConnector"):
        assert resolve_connector_class(name) is FileStreamSourceConnector


def test_tail_holds_back_lines_beyond_the_limit_without_losing_them(tmp_path):
    path = tmp_path / "in.txt"
    path.write_bytes(b"a\r\nb\nc\nd\n")
    tail = FileTail(str(path))
    assert tail.read_lines(1) == [(b"a", 3)]
    assert tail.read_lines(2) == [(b"b", 5), (b"c", 7)]
    assert tail.read_lines(9) == [(b"d", 9)]
    assert tail.position == 9
    tail.close()


def test_standard_input_is_read_through_a_pipe_until_its_end():
    read_fd, write_fd = os.pipe()
    try:
        stream = StreamLines(read_fd)
        assert stream.read_lines(10, 0.01) == []
        os.write(write_fd, b"one\ntw")
        assert [line for line, _ in stream.read_lines(10, 0.5)] == [b"one"]
        os.write(write_fd, b"o\nlast")
        os.close(write_fd)
        write_fd = -1
        got = []
        while not stream.eof:
            got += [line for line, _ in stream.read_lines(10, 0.5)]
        assert got == [b"two", b"last"]
    finally:
        os.close(read_fd)
        if write_fd >= 0:
            os.close(write_fd)
