"""The store changes under a running task: new objects are picked up; grown objects are
read on; truncated, replaced and deleted objects give a warning naming them, and the task
goes on.
"""

from __future__ import annotations

import logging
import os

import pytest
from objectstore_helpers import JsonOffsetStore, config, drain, start_task, write_jsonl

LOGGER = "omconnect_objectstore.source"


@pytest.fixture
def task_and_store(tmp_path):
    store = JsonOffsetStore()
    tasks = []

    def start(**settings):
        task = start_task(config(tmp_path, input_format="jsonl", **settings), store)
        tasks.append(task)
        return task

    yield start, store
    for task in tasks:
        task.stop()


def _lines(records) -> list[tuple[str, int]]:
    return [(r.key, r.value["line"]) for r in records]


def test_objects_written_after_everything_was_read_are_picked_up(tmp_path, task_and_store):
    start, store = task_and_store
    write_jsonl(tmp_path / "a.jsonl", [{"line": i} for i in range(3)])
    task = start()
    assert _lines(drain(task, store)) == [("a.jsonl", i) for i in range(3)]
    assert task.poll() is None  # all read: the task idles
    write_jsonl(tmp_path / "b.jsonl", [{"line": i} for i in range(2)])
    assert _lines(drain(task, store, expect=2)) == [("b.jsonl", 0), ("b.jsonl", 1)]
    assert drain(task, store) == []  # a is not read again


def test_the_listing_interval_spaces_listings(tmp_path, task_and_store):
    start, store = task_and_store
    task = start(objectstore_list_interval_ms=60_000)
    assert drain(task, store) == []  # listed once: the directory was empty
    write_jsonl(tmp_path / "a.jsonl", [{"line": 0}])
    assert drain(task, store, idle=0.5) == []  # not listed again within the minute


def test_a_root_that_does_not_exist_yet_is_waited_for(tmp_path, caplog):
    store = JsonOffsetStore()
    root = tmp_path / "later"
    task = start_task(config(root, input_format="jsonl"), store)
    try:
        with caplog.at_level(logging.WARNING, logger=LOGGER):
            assert drain(task) == []
        assert [r.getMessage() for r in caplog.records].count(
            f"{root.as_uri()} does not exist (yet); waiting for it to be created") == 1
        write_jsonl(root / "a.jsonl", [{"line": 0}])
        assert _lines(drain(task, store, expect=1)) == [("a.jsonl", 0)]
    finally:
        task.stop()


def test_an_appended_object_is_read_on_after_its_last_record(tmp_path, task_and_store):
    start, store = task_and_store
    path = write_jsonl(tmp_path / "a.jsonl", [{"line": i} for i in range(3)])
    task = start()
    assert len(drain(task, store)) == 3
    with path.open("a") as f:
        f.write('{"line": 3}\n{"line": 4}\n')
    records = drain(task, store, expect=2)
    assert _lines(records) == [("a.jsonl", 3), ("a.jsonl", 4)]
    assert records[-1].source_offset["records"] == 5
    assert records[-1].source_offset["done"] is True


def test_a_truncated_object_is_warned_about_and_read_again(tmp_path, task_and_store,
                                                           caplog):
    start, store = task_and_store
    path = write_jsonl(tmp_path / "a.jsonl", [{"line": i} for i in range(5)])
    write_jsonl(tmp_path / "b.jsonl", [{"line": 0}])
    task = start()
    assert len(drain(task, store)) == 6
    with path.open("r+") as f:  # same file, shorter: e.g. "> a.jsonl" then a rewrite
        f.truncate(0)
        f.write('{"line": 100}\n')
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        records = drain(task, store, expect=1)
    assert _lines(records) == [("a.jsonl", 100)]
    [warning] = [r.getMessage() for r in caplog.records]
    assert f"object {path.as_uri()} was truncated" in warning
    assert "reading it again from the start" in warning
    write_jsonl(tmp_path / "c.jsonl", [{"line": 0}])  # the task goes on
    assert _lines(drain(task, store, expect=1)) == [("c.jsonl", 0)]


def test_an_object_replaced_by_a_rename_is_read_again(tmp_path, task_and_store, caplog):
    start, store = task_and_store
    path = write_jsonl(tmp_path / "a.jsonl", [{"line": i} for i in range(3)])
    task = start()
    assert len(drain(task, store)) == 3
    replacement = write_jsonl(tmp_path / ".a.jsonl.tmp", [{"line": 7}, {"line": 8},
                                                          {"line": 9}])
    os.replace(replacement, path)  # the atomic way to publish a new version
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        records = drain(task, store, expect=3)
    assert _lines(records) == [("a.jsonl", 7), ("a.jsonl", 8), ("a.jsonl", 9)]
    assert any(f"object {path.as_uri()} was replaced by another version" in r.getMessage()
               for r in caplog.records)


def test_an_object_deleted_before_it_was_read_is_warned_about(tmp_path, task_and_store,
                                                             caplog):
    start, store = task_and_store
    write_jsonl(tmp_path / "a.jsonl", [{"line": i} for i in range(4)])
    gone = write_jsonl(tmp_path / "b.jsonl", [{"line": i} for i in range(4)])
    write_jsonl(tmp_path / "c.jsonl", [{"line": i} for i in range(4)])
    task = start(max_poll_records=2)
    first = task.poll()  # listed a, b and c; reading a
    assert _lines(first) == [("a.jsonl", 0), ("a.jsonl", 1)]
    gone.unlink()
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        rest = drain(task, store)
    assert _lines(rest) == [("a.jsonl", 2), ("a.jsonl", 3)] + [
        ("c.jsonl", i) for i in range(4)]
    [warning] = [r.getMessage() for r in caplog.records]
    assert f"object {gone.as_uri()} was deleted while it was being read" in warning


def test_an_unfinished_object_that_vanishes_between_listings_is_warned_about(
        tmp_path, task_and_store, caplog):
    start, store = task_and_store
    # a is read up to its bad line, which fails the pass (errors.tolerance=none)
    path = tmp_path / "a.jsonl"
    path.write_text('{"line": 0}\nnot json\n{"line": 2}\n')
    task = start()
    assert _lines(task.poll()) == [("a.jsonl", 0)]
    with pytest.raises(Exception, match="malformed line 2"):
        task.poll()
    path.unlink()
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        assert drain(task, store) == []
    [warning] = [r.getMessage() for r in caplog.records]
    assert f"object {path.as_uri()} was deleted (or moved) before it was read to its " \
           "end: 1 record(s) of it were read" in warning


def test_an_empty_object_is_not_reopened_until_it_changes(tmp_path, task_and_store):
    start, store = task_and_store
    path = tmp_path / "a.jsonl"
    path.write_text("")
    task = start()
    assert drain(task, store) == []
    assert task._exhausted  # remembered as read to its end
    path.write_text('{"line": 0}\n')
    assert _lines(drain(task, store, expect=1)) == [("a.jsonl", 0)]
