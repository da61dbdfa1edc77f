"""The iterator-style base: batching, idle backoff, passes, errors and stop."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import pytest
from source_helpers import FakeClock

from omconnect.data import INT64_SCHEMA
from omconnect.errors import IllegalStateError, RetriableError
from omconnect.records import SourceRecord
from omconnect.source_base import Backoff, IteratorSourceTask, SourceCommonConfig, SystemClock


def rec(n: int) -> SourceRecord:
    return SourceRecord(topic="t", value_schema=INT64_SCHEMA, value=n,
                        source_partition={"s": "x"}, source_offset={"n": n})


Script = Callable[["ScriptedSource", Backoff], Iterator[SourceRecord | None]]


class ScriptedSource(IteratorSourceTask[SourceCommonConfig]):
    """A source whose iterator is a function of the test's choosing."""

    def __init__(self, script: Script, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.script = script
        self.iterator_calls = 0
        self.closed = 0

    def version(self) -> str:
        return "test"

    def configure(self, config: Mapping[str, Any]) -> SourceCommonConfig:
        return SourceCommonConfig.from_config(config)

    def iterator(self, backoff: Backoff) -> Iterator[SourceRecord | None]:
        self.iterator_calls += 1
        return self.script(self, backoff)

    def close_resources(self) -> None:
        self.closed += 1


def started(script: Script, clock: Any = None, **config: Any) -> ScriptedSource:
    task = ScriptedSource(script, clock=clock or FakeClock())
    task.start({k.replace("_", "."): v for k, v in config.items()})
    return task


def values(batch: list[SourceRecord] | None) -> list[int]:
    return [r.value for r in batch or []]


def test_poll_returns_batches_of_at_most_max_poll_records_in_order() -> None:
    def script(task: ScriptedSource, backoff: Backoff) -> Iterator[SourceRecord | None]:
        yield from (rec(i) for i in range(1250))
        while True:
            yield None

    task = started(script, max_poll_records=500)
    batches = [values(task.poll()) for _ in range(3)]
    assert [len(b) for b in batches] == [500, 500, 250]
    assert [n for batch in batches for n in batch] == list(range(1250))
    assert task.poll() is None


def test_poll_is_bounded_by_its_timeout_when_records_come_slowly() -> None:
    clock = FakeClock()

    def script(task: ScriptedSource, backoff: Backoff) -> Iterator[SourceRecord | None]:
        for i in range(100):
            clock.advance(0.3)  # reading each record takes 300 ms
            yield rec(i)

    task = started(script, clock, max_poll_records=500, poll_timeout_ms=1000)
    batch = task.poll()
    assert values(batch) == [0, 1, 2, 3]  # the fourth read crosses the 1 s deadline


def test_idle_backoff_grows_to_five_seconds_and_resets_on_data() -> None:
    clock = FakeClock()
    asked_at: list[float] = []
    data_at = {9}  # the 10th read of the iterator finds a record

    def script(task: ScriptedSource, backoff: Backoff) -> Iterator[SourceRecord | None]:
        for call in range(14):
            asked_at.append(clock.now())
            yield rec(call) if call in data_at else None

    task = started(script, clock, poll_backoff_initial_ms=100, poll_timeout_ms=1000)
    for _ in range(40):
        task.poll()
    gaps = [round(b - a, 6) for a, b in itertools.pairwise(asked_at)]
    # Empty reads 0..8 back off 0.1 .. 5 s (capped). Read 9 has data; read 10, in the
    # same poll, has none: the record is returned at once and backoff restarts at 0.1 s.
    assert gaps[:9] == pytest.approx([0.1, 0.2, 0.4, 0.8, 1.6, 3.2, 5.0, 5.0, 5.0])
    assert gaps[9] == 0
    assert gaps[10:13] == pytest.approx([0.1, 0.2, 0.4])
    # No single poll waits beyond its timeout.
    assert max(clock.waits) <= 1.0 + 1e-9


def test_each_poll_waits_at_most_its_timeout_and_returns_none_when_idle() -> None:
    clock = FakeClock()

    def script(task: ScriptedSource, backoff: Backoff) -> Iterator[SourceRecord | None]:
        while True:
            yield None

    task = started(script, clock, poll_backoff_initial_ms=5000, poll_timeout_ms=1000)
    before = clock.now()
    assert task.poll() is None
    assert clock.now() - before == pytest.approx(1.0)


def test_an_ended_iterator_starts_a_new_pass_at_once_after_data_else_after_a_backoff() -> None:
    clock = FakeClock()
    passes = [[1, 2], [3], [], [], [4]]

    def script(task: ScriptedSource, backoff: Backoff) -> Iterator[SourceRecord | None]:
        items = passes.pop(0) if passes else []
        return iter([rec(i) for i in items])

    task = started(script, clock, poll_backoff_initial_ms=100)
    assert values(task.poll()) == [1, 2, 3]  # passes 1 and 2 back to back
    assert clock.waits == []
    got: list[int] = []
    for _ in range(5):
        got += values(task.poll())
    assert got == [4]
    assert clock.waits[:2] == pytest.approx([0.1, 0.2])  # the empty passes backed off


def test_records_read_before_an_error_are_delivered_then_the_error_then_a_new_iterator() -> None:
    def script(task: ScriptedSource, backoff: Backoff) -> Iterator[SourceRecord | None]:
        if task.iterator_calls == 1:
            yield rec(1)
            yield rec(2)
            raise RetriableError("storage hiccup")
        yield rec(3)
        while True:
            yield None

    task = started(script)
    assert values(task.poll()) == [1, 2]
    with pytest.raises(RetriableError, match="storage hiccup"):
        task.poll()
    assert values(task.poll()) == [3]
    assert task.iterator_calls == 2


def test_an_error_with_nothing_read_is_raised_at_once() -> None:
    def script(task: ScriptedSource, backoff: Backoff) -> Iterator[SourceRecord | None]:
        raise RetriableError("down")
        yield  # pragma: no cover

    task = started(script)
    with pytest.raises(RetriableError, match="down"):
        task.poll()


def test_stop_mid_batch_delivers_what_was_read_then_closes_once() -> None:
    finally_ran = threading.Event()

    def script(task: ScriptedSource, backoff: Backoff) -> Iterator[SourceRecord | None]:
        try:
            yield rec(1)
            yield rec(2)
            task.stop()  # stop arrives while the task is reading record 3
            yield rec(3)
            yield rec(4)
        finally:
            finally_ran.set()

    task = started(script, max_poll_records=100)
    assert values(task.poll()) == [1, 2, 3]
    assert task.closed == 1
    assert finally_ran.is_set()  # the generator was closed: its files are closed
    assert task.poll() is None
    task.stop()
    assert task.closed == 1


def test_stop_while_no_poll_runs_closes_at_once() -> None:
    def script(task: ScriptedSource, backoff: Backoff) -> Iterator[SourceRecord | None]:
        yield rec(1)

    task = started(script)
    task.stop()
    assert task.closed == 1
    assert task.poll() is None


class SignallingClock(SystemClock):
    """The real clock, telling the test when a wait starts and whether stop ended it."""

    def __init__(self) -> None:
        self.waiting = threading.Event()
        self.interrupted: list[bool] = []

    def wait(self, stop: threading.Event, seconds: float) -> bool:
        self.waiting.set()
        result = super().wait(stop, seconds)
        self.interrupted.append(result)
        return result


def test_stop_from_another_thread_wakes_a_poll_waiting_out_its_backoff() -> None:
    clock = SignallingClock()

    def script(task: ScriptedSource, backoff: Backoff) -> Iterator[SourceRecord | None]:
        while True:
            yield None

    # A 5 s backoff inside a poll allowed 60 s: only stop can end the wait early.
    task = started(script, clock, poll_backoff_initial_ms=5000, poll_timeout_ms=60000)
    result: list[Any] = []
    poller = threading.Thread(target=lambda: result.append(task.poll()))
    poller.start()
    assert clock.waiting.wait(10)
    task.stop()
    poller.join(10)
    assert not poller.is_alive()
    assert result == [None]
    assert clock.interrupted == [True]  # the wait ended because of stop, not its timeout
    assert task.closed == 1  # the poll closed the resources on its way out


def test_the_iterators_own_backoff_is_cut_short_by_stop() -> None:
    clock = SignallingClock()

    def script(task: ScriptedSource, backoff: Backoff) -> Iterator[SourceRecord | None]:
        while backoff.delay():  # e.g. retrying a storage error
            pass
        yield rec(1)  # reached only once stop cut the delay short

    task = started(script, clock, poll_backoff_initial_ms=5000, poll_timeout_ms=60000)
    result: list[Any] = []
    poller = threading.Thread(target=lambda: result.append(task.poll()))
    poller.start()
    assert clock.waiting.wait(10)
    task.stop()
    poller.join(10)
    assert not poller.is_alive()
    assert [values(r) for r in result] == [[1]]


def test_poll_before_start_is_refused() -> None:
    task = ScriptedSource(lambda task, backoff: iter(()))
    with pytest.raises(IllegalStateError, match="before start"):
        task.poll()

