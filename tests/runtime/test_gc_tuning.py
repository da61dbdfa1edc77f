"""tune_gc raises the collector's thresholds for a worker process, never lowers them."""

from __future__ import annotations

import gc

import pytest

from omconnect.cli import main
from omconnect.runtime import WORKER_GC_THRESHOLDS, tune_gc


@pytest.fixture(autouse=True)
def _restore_thresholds():
    before = gc.get_threshold()
    enabled = gc.isenabled()
    yield
    gc.set_threshold(*before)
    if enabled:
        gc.enable()


def test_tune_gc_sets_the_worker_thresholds_and_returns_the_previous_ones():
    gc.set_threshold(700, 10, 10)
    assert tune_gc() == (700, 10, 10)
    assert gc.get_threshold() == WORKER_GC_THRESHOLDS


def test_tune_gc_keeps_higher_thresholds_the_process_chose():
    gc.set_threshold(200_000, 5, 100)
    tune_gc()
    assert gc.get_threshold() == (200_000, WORKER_GC_THRESHOLDS[1], 100)


def test_tune_gc_leaves_a_disabled_collector_alone():
    gc.set_threshold(0, 10, 10)
    tune_gc()
    assert gc.get_threshold() == (0, 10, 10)
    gc.set_threshold(700, 10, 10)
    gc.disable()
    tune_gc()
    assert gc.get_threshold() == (700, 10, 10) and not gc.isenabled()


def test_the_standalone_command_restores_the_thresholds_when_it_returns(tmp_path, capsys):
    gc.set_threshold(700, 10, 10)
    worker = tmp_path / "worker.properties"
    worker.write_text(f"transport=embedded\nembedded.path={tmp_path / 'data'}\n")
    assert main(["standalone", str(worker), "--stop-when-idle", "0.5"]) == 0
    assert gc.get_threshold() == (700, 10, 10)
