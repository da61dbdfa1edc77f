"""The file sink through the SPI: one line per value, appended, durable on flush."""

from __future__ import annotations

import threading

import pytest
from omconnect_file.sink import FileStreamSinkConnector, FileStreamSinkTask, line_of

from omconnect.connector import resolve_connector_class
from omconnect.data import SchemaBuilder, Struct
from omconnect.errors import IllegalStateError
from omconnect.records import SinkRecord, TopicPartition


def _records(values, topic="lines"):
    return [SinkRecord(topic=topic, partition=0, offset=i, value=v) for i, v in enumerate(values)]


def _task(path) -> FileStreamSinkTask:
    connector = FileStreamSinkConnector()
    config = {"name": "sink", "topics": "lines", "file": str(path)}
    assert not any(connector.validate(config).values())
    connector.start(config)
    (task_config,) = connector.task_configs(4)
    task = connector.task_class()()
    task.start(task_config)
    return task


def test_values_are_appended_as_lines_and_on_disk_after_flush(tmp_path):
    path = tmp_path / "out.txt"
    path.write_text("kept\n")
    task = _task(path)
    task.put(_records(["a", "ünï ✓", ""]))
    task.put(_records(["last"]))
    task.flush({TopicPartition("lines", 0): 1})
    assert path.read_text() == "kept\na\nünï ✓\n\nlast\n"
    task.stop()


def test_values_that_are_not_strings_are_written_like_kafka_connect_does():
    schema = SchemaBuilder.struct().field("id", SchemaBuilder.int32().build()).build()
    assert line_of(None) == b"null"
    assert line_of(True) == b"true"
    assert line_of(b"\x00raw") == b"\x00raw"
    assert line_of(42) == b"42"
    assert line_of(Struct(schema, {"id": 7})) == b"Struct{id=7}"


def test_stop_writes_out_and_a_put_after_stop_fails_instead_of_dropping(tmp_path):
    path = tmp_path / "out.txt"
    task = _task(path)
    task.put(_records(["x"]))
    task.stop()
    assert path.read_text() == "x\n"
    with pytest.raises(IllegalStateError, match="stopped"):
        task.put(_records(["lost?"]))
    task.flush({})  # nothing left to write: no error
    assert path.read_text() == "x\n"


def test_stop_from_another_thread_during_puts_loses_no_put_line(tmp_path):
    path = tmp_path / "out.txt"
    task = _task(path)
    written: list[str] = []

    def put_until_stopped() -> None:
        i = 0
        while True:
            try:
                task.put(_records([f"v{i}"]))
            except IllegalStateError:
                return
            written.append(f"v{i}")
            i += 1

    thread = threading.Thread(target=put_until_stopped)
    thread.start()
    while len(written) < 200:
        pass
    task.stop()
    thread.join()
    assert path.read_text().splitlines() == written


def test_one_task_and_kafka_connect_names_resolve(tmp_path):
    connector = FileStreamSinkConnector()
    connector.start({"file": str(tmp_path / "o")})
    assert connector.task_configs(3) == [{"file": str(tmp_path / "o")}]
    for name in ("file-sink", "FileStreamSink", "FileStreamSinkConnector",
                 "org.apache.kafka.connect.file.FileStreamSinkConnector"):
        assert resolve_connector_class(name) is FileStreamSinkConnector


def test_a_file_in_a_missing_directory_fails_at_start(tmp_path):
    with pytest.raises(FileNotFoundError):
        _task(tmp_path / "no" / "such" / "dir.txt")


@pytest.mark.parametrize("tail", [b"tri", b"\xe2\x9c", b"x" * 200_000])
def test_a_torn_last_line_from_an_interrupted_write_is_removed_on_start(tmp_path, tail):
    # A SIGKILL can cut a multi-page write() short: the file ends in part of a line whose
    # record was never committed, so it comes again and must start a line of its own.
    path = tmp_path / "out.txt"
    path.write_bytes(b"one\ntwo\n" + tail)
    task = _task(path)
    task.put(_records(["three"]))
    task.flush({TopicPartition("lines", 0): 1})
    task.stop()
    assert path.read_bytes() == b"one\ntwo\nthree\n"


def test_a_file_holding_only_a_torn_line_is_emptied_and_a_whole_file_kept(tmp_path):
    torn = tmp_path / "torn.txt"
    torn.write_bytes(b"half a li")
    whole = tmp_path / "whole.txt"
    whole.write_bytes(b"kept\n")
    for path in (torn, whole):
        task = _task(path)
        task.put(_records(["new"]))
        task.stop()
    assert torn.read_bytes() == b"new\n"
    assert whole.read_bytes() == b"kept\nnew\n"
