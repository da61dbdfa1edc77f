"""A restarted task resumes inside a half-read object at the next record, never re-reads a
committed record, and does not reopen finished objects.
"""

from __future__ import annotations

from objectstore_helpers import (
    JsonOffsetStore,
    acknowledge,
    config,
    drain,
    start_task,
    write_jsonl,
)
from omconnect_objectstore.entry import ObjectEntry

from omconnect.source_base import OffsetManagerEntry


def _lines(records) -> list[tuple[str, int]]:
    return [(r.key, r.value["line"]) for r in records]


def test_restart_resumes_inside_a_half_read_object_at_the_next_record(tmp_path):
    for name in ("a", "b"):
        write_jsonl(tmp_path / f"{name}.jsonl", [{"line": i} for i in range(10)])
    store = JsonOffsetStore()
    settings = config(tmp_path, input_format="jsonl", max_poll_records=4)
    task = start_task(settings, store)
    first = task.poll()
    acknowledge(task, store, first)
    task.stop()
    assert _lines(first) == [("a.jsonl", i) for i in range(4)]

    task = start_task(settings, store)
    rest = drain(task, store)
    task.stop()
    assert _lines(rest) == [("a.jsonl", i) for i in range(4, 10)] + [
        ("b.jsonl", i) for i in range(10)]

    # everything committed, done: a third start reads nothing
    task = start_task(settings, store)
    assert drain(task) == []
    task.stop()


def test_records_polled_but_not_committed_are_read_again_and_only_they(tmp_path):
    write_jsonl(tmp_path / "a.jsonl", [{"line": i} for i in range(12)])
    store = JsonOffsetStore()
    settings = config(tmp_path, input_format="jsonl", max_poll_records=5)
    task = start_task(settings, store)
    committed = task.poll()
    acknowledge(task, store, committed)
    uncommitted = task.poll()  # sent, maybe, but the worker died before the commit
    task.stop()
    assert _lines(uncommitted) == [("a.jsonl", i) for i in range(5, 10)]

    task = start_task(settings, store)
    again = drain(task, store)
    task.stop()
    assert _lines(again) == [("a.jsonl", i) for i in range(5, 12)]


def test_resume_counts_malformed_lines_so_the_position_stays_exact(tmp_path):
    (tmp_path / "a.jsonl").write_text('{"line": 0}\nnot json\n{"line": 2}\n{"line": 3}\n')
    store = JsonOffsetStore()
    settings = config(tmp_path, input_format="jsonl", max_poll_records=2,
                      errors_tolerance="all")
    task = start_task(settings, store)
    first = task.poll()
    acknowledge(task, store, first)
    task.stop()
    assert [type(r).__name__ for r in first] == ["SourceRecord", "ErrantSourceRecord"]
    task = start_task(settings, store)
    rest = drain(task, store)
    task.stop()
    assert _lines(rest) == [("a.jsonl", 2), ("a.jsonl", 3)]


def test_an_offset_reloaded_from_json_storage_compares_equal(tmp_path):
    write_jsonl(tmp_path / "a.jsonl", [{"line": 0}])
    store = JsonOffsetStore()
    task = start_task(config(tmp_path, input_format="jsonl"), store)
    [record] = drain(task, store)
    task.stop()
    written = ObjectEntry(record.source_partition, record.source_offset)
    [stored] = store.offsets([record.source_partition]).values()
    reloaded = ObjectEntry(record.source_partition, stored)
    assert reloaded == written
    assert (reloaded.records, reloaded.done, reloaded.size) == (1, True, written.size)
    assert isinstance(reloaded, OffsetManagerEntry)


def test_a_task_with_stored_offsets_of_an_older_format_reads_them(tmp_path):
    """Offsets written by hand (or by other tools) as text still resume correctly."""
    write_jsonl(tmp_path / "a.jsonl", [{"line": i} for i in range(6)])
    store = JsonOffsetStore()
    store.commit({"url": tmp_path.as_uri(), "object": "a.jsonl"},
                 {"records": "4", "done": "false"})
    task = start_task(config(tmp_path, input_format="jsonl"), store)
    rest = drain(task, store)
    task.stop()
    assert _lines(rest) == [("a.jsonl", 4), ("a.jsonl", 5)]
