"""The pipeline cases' workers on a thread: the runtime calls ``omconnect standalone``
makes, with its exit statuses."""

from __future__ import annotations

from pathlib import Path

import pytest

from omconnect.testing.pipeline import LinePipeline, start_worker, write_properties


def test_a_worker_on_a_thread_needs_an_idle_window_and_no_options(tmp_path: Path) -> None:
    files = [write_properties(tmp_path / "worker.properties", {"transport": "memory"})]
    with pytest.raises(ValueError, match="stop_when_idle"):
        start_worker(files, cross_process=False)
    with pytest.raises(ValueError, match="no options"):
        start_worker(files, cross_process=False, stop_when_idle=1,
                     options=["--status-interval", "1"])


def test_invalid_configs_stop_a_thread_worker_with_status_2(tmp_path: Path) -> None:
    worker = write_properties(tmp_path / "worker.properties", {"transport": "no-such-queue"})
    started = start_worker([worker], cross_process=False, stop_when_idle=1)
    assert started.wait(30) == 2


def test_a_thread_worker_copies_every_line_and_stops_when_idle(tmp_path: Path) -> None:
    pipeline = LinePipeline(tmp_path, {"transport": "memory",
                                       "memory.namespace": str(tmp_path)}, lines=200)
    worker = pipeline.start(pipeline.source_and_sink(), cross_process=False,
                            stop_when_idle=1)
    assert pipeline.finished(worker, 60) == 0
    outcome = pipeline.outcome()
    assert (outcome.missing, outcome.duplicated, outcome.unknown) == (0, 0, 0), \
        outcome.describe()
