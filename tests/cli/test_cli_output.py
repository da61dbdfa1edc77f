"""What the CLI prints while running: structured log lines, progress, idle detection."""

from __future__ import annotations

import io
import json
import logging
import threading

import pytest

from omconnect.cli.log_output import configure_logging, format_logfmt, remove_cli_logging
from omconnect.cli.progress import LiveDisplay, ProgressTracker
from omconnect.runtime.idle_watch import IdleWatch
from omconnect.runtime.metrics import TaskMetricsSnapshot


@pytest.fixture(autouse=True)
def _restore_logging():
    yield
    remove_cli_logging()


def _snap(connector="c", task=0, kind="source", at=0.0, **counts) -> TaskMetricsSnapshot:
    counts.setdefault("started_at", 0.0)
    return TaskMetricsSnapshot(connector=connector, task=task, kind=kind, taken_at=at,
                               **counts)


def test_logfmt_quotes_what_needs_quoting_and_drops_nones():
    line = format_logfmt({"a": "plain", "b": "two words", "c": None, "d": 'x="y"', "e": 3})
    assert line == 'a=plain b="two words" d="x=\\"y\\"" e=3'


def _log_on_task_thread(fmt: str) -> str:
    stream = io.StringIO()
    configure_logging(level=logging.INFO, log_format=fmt, stream=stream)
    log = logging.getLogger("omconnect.test")
    thread = threading.Thread(target=lambda: log.warning("slow put"),
                              name="omconnect-task-orders-to-db-3")
    thread.start()
    thread.join()
    return stream.getvalue()


def test_log_lines_from_a_task_thread_carry_connector_and_task():
    logfmt = _log_on_task_thread("logfmt")
    assert "level=warning" in logfmt and "connector=orders-to-db task=3" in logfmt
    assert 'msg="slow put"' in logfmt
    record = json.loads(_log_on_task_thread("json"))
    assert record["connector"] == "orders-to-db" and record["task"] == 3
    assert "[orders-to-db-3] slow put" in _log_on_task_thread("text")


def test_progress_rates_come_from_successive_snapshots():
    tracker = ProgressTracker()
    states = {("c", 0): "RUNNING", ("s", 0): "RUNNING"}
    tracker.update([_snap(at=0.0, acknowledged=0),
                    _snap("s", kind="sink", at=0.0, put=0, lag=None)], states)
    source, sink = tracker.update([_snap(at=2.0, acknowledged=1000, in_flight=5),
                                   _snap("s", kind="sink", at=2.0, put=500, lag=7)], states)
    assert (source.records, source.rate, source.in_flight) == (1000, 500.0, 5)
    assert (sink.records, sink.rate, sink.lag) == (500, 250.0, 7)
    assert "1,000 records" in source.line() and "in-flight 5" in source.line()
    assert "lag 7" in sink.line()
    assert sink.fields()["lag"] == 7 and "in_flight" not in sink.fields()


def test_live_display_redraws_in_place_with_logs_above():
    out = io.StringIO()
    display = LiveDisplay(out)
    display.update(["task a", "task b"])
    display.write_log("a log line\n")
    display.update(["task a!", "task b!"])
    text = out.getvalue()
    assert text.count("\x1b[2F\x1b[J") == 2  # moved up over the two lines, twice
    assert text.endswith("task a!\ntask b!\n")
    assert text.index("a log line") < text.rindex("task a!")


def test_idle_once_nothing_moves_for_the_window():
    watch = IdleWatch(3.0)
    running = {("c", 0): "RUNNING"}
    moved = {"polled": 5, "sent": 5, "acknowledged": 5}
    assert not watch.update(0.0, [_snap(loops=10, **moved)], running)
    assert not watch.update(1.0, [_snap(loops=11, **moved)], running)
    assert not watch.update(3.5, [_snap(loops=20, **moved)], running)
    assert watch.update(4.0, [_snap(loops=21, **moved)], running)


def test_a_restarted_task_starts_its_loop_count_again_without_blocking_idleness():
    watch = IdleWatch(1.0)
    running = {("c", 0): "RUNNING"}
    watch.update(0.0, [_snap(loops=500)], running)
    watch.update(0.5, [_snap(loops=501)], running)
    restarted = {"started_at": 10.0}
    assert not watch.update(1.0, [_snap(loops=1, **restarted)], running)  # a new run
    watch.update(1.5, [_snap(loops=2, **restarted)], running)
    assert watch.update(2.6, [_snap(loops=4, **restarted)], running)


def test_a_task_held_up_for_the_whole_window_is_not_idle():
    """A task thread stuck in a broker call has not looked for records: the worker waits
    until it has gone round its loop once entirely inside the window.
    """
    watch = IdleWatch(3.0)
    running = {("s", 0): "RUNNING"}
    stuck = [_snap("s", kind="sink", assigned_partitions=1, loops=7)]
    watch.update(0.0, stuck, running)
    watch.update(0.5, stuck, running)
    assert not watch.update(10.0, stuck, running)
    # the round under way when the window opened ends; the next one starts
    assert not watch.update(10.5, [_snap("s", kind="sink", assigned_partitions=1, loops=8)],
                            running)
    # and ends too, with nothing found: idle
    assert watch.update(11.0, [_snap("s", kind="sink", assigned_partitions=1, loops=9)],
                        running)


def test_not_idle_while_records_move_are_in_flight_lag_or_tasks_start():
    watch = IdleWatch(1.0)
    running = {("c", 0): "RUNNING"}
    watch.update(0.0, [_snap(polled=1)], running)
    assert not watch.update(5.0, [_snap(polled=2)], running)  # moved
    assert not watch.update(9.0, [_snap(polled=2, in_flight=1)], running)
    assert not watch.update(9.5, [_snap("s", kind="sink", lag=4)], {("s", 0): "RUNNING"})
    assert not watch.update(20.0, [_snap("s", kind="sink", lag=4)], {("s", 0): "RUNNING"})
    starting = IdleWatch(1.0)
    starting.update(0.0, [], {("c", 0): "UNASSIGNED"})
    assert not starting.update(5.0, [], {("c", 0): "UNASSIGNED"})
    failed = IdleWatch(1.0)
    failed.update(0.0, [], {("c", -1): "FAILED"})
    assert failed.update(5.0, [], {("c", -1): "FAILED"})


def test_a_sink_connector_without_partitions_is_still_joining_not_idle():
    states = {("s", 0): "RUNNING", ("s", 1): "RUNNING"}
    joining = [_snap("s", 0, kind="sink"), _snap("s", 1, kind="sink")]
    watch = IdleWatch(1.0)
    watch.update(0.0, joining, states)
    assert not watch.update(30.0, joining, states)
    # one task of the two got the topic's only partition: the connector has joined
    joined = [_snap("s", 0, kind="sink", assigned_partitions=1), _snap("s", 1, kind="sink")]
    watch.update(31.0, joined, states)
    looked = [_snap("s", 0, kind="sink", assigned_partitions=1, loops=2),
              _snap("s", 1, kind="sink", loops=2)]
    assert watch.update(32.5, looked, states)
