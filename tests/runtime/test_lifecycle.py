"""Connector and task lifecycle through the herder: create, pause, resume, stop, restart,
delete, restart policy, and a worker restart resuming from the KV store.
"""

from __future__ import annotations

import itertools
import threading
import time

import pytest
from runtime_connectors import RELEASE_BLOCKED, STATE
from runtime_support import eventually, read_topic, sink_config, source_config

from omconnect.connector.lifecycle import State
from omconnect.errors import ConfigError
from omconnect.runtime import (
    ConnectorExistsError,
    ConnectorNotFoundError,
    ConnectorStateError,
    StandaloneHerder,
)


def _blocking(name: str = "blocking", honour: bool = False) -> dict:
    return {"name": name, "connector.class": "runtime_connectors:BlockingSource",
            "honour.stop": "true" if honour else "false"}


def test_stop_returns_within_the_graceful_timeout_while_poll_blocks(worker_config):
    config = dict(worker_config, **{"task.shutdown.graceful.timeout.ms": 500})
    with StandaloneHerder(config) as herder:
        herder.create_connector(_blocking())
        eventually(lambda: STATE["blocking"]["polling"], what="poll to block")
        started = time.monotonic()
        herder.stop_connector("blocking")
        elapsed = time.monotonic() - started
        assert elapsed < 0.5 + 1.0, f"stop took {elapsed:.2f} s with a 0.5 s timeout"
        assert STATE["blocking"]["stop_called"], "task.stop() was called"
        assert herder.connector_status("blocking").connector.state is State.STOPPED
        started = time.monotonic()
    assert time.monotonic() - started < 1.5  # the herder's own stop is bounded too
    RELEASE_BLOCKED.set()


def test_stop_from_another_thread_unblocks_a_well_behaved_poll(herder):
    herder.create_connector(_blocking(honour=True))
    eventually(lambda: STATE["blocking"]["polling"])
    stopper = threading.Thread(target=herder.stop_connector, args=("blocking",))
    stopper.start()
    stopper.join(5)
    assert not stopper.is_alive()
    assert herder.connector_status("blocking").connector.state is State.STOPPED


def test_pause_and_resume_a_source(herder):
    herder.create_connector(source_config(batch=10))
    eventually(lambda: herder.metrics() and herder.metrics()[0].polled > 0)
    herder.pause_connector("counting")
    status = herder.connector_status("counting")
    assert status.connector.state is State.PAUSED
    assert [t.state for t in status.tasks] == [State.PAUSED]
    time.sleep(0.1)  # let a poll in progress finish
    polled = herder.metrics()[0].polled
    time.sleep(0.3)
    assert herder.metrics()[0].polled == polled, "a paused source does not poll"
    herder.resume_connector("counting")
    assert herder.connector_status("counting").connector.state is State.RUNNING
    eventually(lambda: herder.metrics()[0].polled > polled, what="polling after resume")
    assert STATE["counting"]["hooks"][:2] == ["pause", "resume"]


def test_pause_and_resume_a_sink(herder, worker_config):
    herder.create_connector(source_config(records=50, batch=50))
    eventually(lambda: len(read_topic(worker_config, "counting-out")) == 50)
    herder.pause_connector("counting")
    herder.create_connector(sink_config(topics="counting-out"), initial_state="PAUSED")
    time.sleep(0.3)
    assert STATE["listing"]["records"] == []
    assert herder.connector_status("listing").tasks[0].state is State.PAUSED
    herder.resume_connector("listing")
    eventually(lambda: len(STATE["listing"]["records"]) == 50)


def test_create_twice_is_a_conflict_and_unknown_names_are_not_found(herder):
    herder.create_connector(source_config(records=1))
    with pytest.raises(ConnectorExistsError):
        herder.create_connector(source_config(records=1))
    with pytest.raises(ConnectorNotFoundError):
        herder.connector_status("nope")
    with pytest.raises(ConnectorNotFoundError):
        herder.task_status("counting", 5)


def test_delete_stops_and_destroys(herder):
    herder.create_connector(source_config(batch=10))
    eventually(lambda: herder.metrics())
    herder.delete_connector("counting")
    assert "destroyed" in STATE["counting"]["hooks"]
    assert herder.connectors() == []
    assert herder.metrics() == []
    with pytest.raises(ConnectorNotFoundError):
        herder.connector_status("counting")


def test_offsets_change_only_while_stopped(herder):
    herder.create_connector(source_config(records=30, batch=10))
    eventually(lambda: herder.offsets("counting").offsets)
    with pytest.raises(ConnectorStateError):
        herder.reset_offsets("counting")
    herder.stop_connector("counting")
    herder.reset_offsets("counting")
    assert herder.offsets("counting").offsets == ()
    with pytest.raises(ConfigError):
        herder.alter_offsets("counting", [{"offset": {"position": 1}}])
    herder.resume_connector("counting")
    eventually(lambda: len(STATE["counting"]["resumed_at"]) == 2)
    assert STATE["counting"]["resumed_at"][-1] == {0: 0}


def test_sink_offsets_reset_and_alter(herder, worker_config):
    herder.create_connector(source_config(records=30, batch=10))
    herder.create_connector(sink_config(topics="counting-out"))
    eventually(lambda: len(STATE["listing"]["records"]) == 30)
    eventually(lambda: herder.offsets("listing").offsets)
    herder.stop_connector("listing")
    herder.alter_offsets("listing", [{"partition": {"kafka_topic": "counting-out",
                                                    "kafka_partition": 0},
                                      "offset": {"kafka_offset": 25}}])
    assert herder.offsets("listing").offsets[0]["offset"] == {"kafka_offset": 25}
    herder.resume_connector("listing")
    eventually(lambda: len(STATE["listing"]["records"]) == 35)
    assert [r[2] for r in STATE["listing"]["records"][30:]] == [25, 26, 27, 28, 29]


def test_restart_policy_restarts_a_failing_task_with_backoff(herder):
    herder.create_connector({
        "name": "failing", "connector.class": "runtime_connectors:FailingSource",
        "restart.policy": "on-failure", "restart.backoff.initial.ms": 100,
        "restart.backoff.max.ms": 400, "restart.max.attempts": 3})
    eventually(lambda: len(STATE["failing"]["task_starts"]) == 4, timeout=15,
               what="three automatic restarts")
    starts = STATE["failing"]["task_starts"]
    gaps = [b - a for a, b in itertools.pairwise(starts)]
    assert gaps[0] >= 0.1 and gaps[1] >= 0.2 and gaps[2] >= 0.4, gaps
    eventually(lambda: herder.connector_status("failing").tasks[0].state is State.FAILED)
    time.sleep(0.8)
    assert len(STATE["failing"]["task_starts"]) == 4, "no restart after the last attempt"
    status = herder.connector_status("failing").tasks[0]
    assert "the source went away" in status.trace


def test_without_a_restart_policy_a_failed_task_stays_failed_until_restarted(herder):
    herder.create_connector({"name": "failing",
                             "connector.class": "runtime_connectors:FailingSource"})
    eventually(lambda: herder.connector_status("failing").tasks[0].state is State.FAILED)
    time.sleep(0.3)
    assert len(STATE["failing"]["task_starts"]) == 1
    status = herder.restart_connector("failing", include_tasks=True, only_failed=True)
    assert status.connector.state is State.RUNNING
    eventually(lambda: len(STATE["failing"]["task_starts"]) == 2)
    assert len(STATE["failing"]["connector_starts"]) == 1, "only the failed task restarted"


def test_a_restarted_worker_resumes_its_connectors_from_the_store(tmp_path):
    config = {"transport": "embedded", "embedded.path": str(tmp_path),
              "offset.flush.interval.ms": 50}
    with StandaloneHerder(config) as herder:
        herder.create_connector(source_config(records=100, batch=25))
        herder.create_connector(source_config("paused", records=10), initial_state="PAUSED")
        herder.create_connector(source_config("stopped", records=10), initial_state="STOPPED")
        eventually(lambda: herder.offsets("counting").offsets
                   and herder.offsets("counting").offsets[0]["offset"] == {"position": 100})
    STATE.clear()
    config["records"] = "ignored"  # a worker key it does not know: noted, not fatal
    with StandaloneHerder(config) as herder:
        assert herder.connectors() == ["counting", "paused", "stopped"]
        eventually(lambda: STATE["counting"]["resumed_at"] == [{0: 100}])
        assert herder.connector_status("paused").connector.state is State.PAUSED
        assert herder.connector_status("stopped").connector.state is State.STOPPED
        assert herder.connector_status("counting").connector.state is State.RUNNING


def test_an_offline_herder_reads_configs_and_offsets_without_running_anything(tmp_path):
    config = {"transport": "embedded", "embedded.path": str(tmp_path),
              "offset.flush.interval.ms": 50}
    with StandaloneHerder(config) as herder:
        herder.create_connector(source_config(records=40, batch=10))
        eventually(lambda: herder.offsets("counting").offsets
                   and herder.offsets("counting").offsets[0]["offset"] == {"position": 40})
    offline = StandaloneHerder(config)
    offline.open()
    try:
        assert offline.connectors() == ["counting"]
        assert offline.offsets("counting").offsets[0]["offset"] == {"position": 40}
        with pytest.raises(ConnectorStateError, match="force"):
            offline.reset_offsets("counting")  # its target state is RUNNING
        offline.reset_offsets("counting", force=True)
        assert offline.offsets("counting").offsets == ()
        offline.stop_connector("counting")
        offline.alter_offsets("counting", [{"partition": {"stream": 0},
                                            "offset": {"position": 5}}])
        assert offline.connector_status("counting").connector.worker_id
    finally:
        offline.stop()
    with StandaloneHerder(config) as herder:
        assert herder.connector_status("counting").connector.state is State.STOPPED
        herder.resume_connector("counting")
        eventually(lambda: STATE["counting"]["resumed_at"][-1:] == [{0: 5}])


def test_put_config_restarts_with_the_new_config(herder):
    herder.create_connector(source_config(records=10))
    eventually(lambda: STATE["counting"]["resumed_at"])
    info, created = herder.put_connector_config("counting", source_config(records=20,
                                                                          tasks_max=2))
    assert not created and info.tasks == (0, 1)
    eventually(lambda: len(herder.metrics()) == 2)
    assert len(STATE["counting"]["connector_starts"]) == 2
    patched = herder.patch_connector_config("counting", {"tasks.max": None})
    assert patched.tasks == (0,) and "tasks.max" not in patched.config


def test_an_abandoned_task_still_gets_its_safe_offsets_committed(worker_config):
    config = dict(worker_config, **{"task.shutdown.graceful.timeout.ms": 300,
                                    "offset.flush.interval.ms": 60_000})
    with StandaloneHerder(config) as herder:
        herder.create_connector(source_config(records=100, batch=25, hang_when_done="true"))
        eventually(lambda: herder.metrics() and herder.metrics()[0].acknowledged == 100)
        assert herder.offsets("counting").offsets == ()  # no periodic flush yet
        started = time.monotonic()
        herder.stop_connector("counting")
        assert time.monotonic() - started < 0.3 + 1.0
        assert herder.offsets("counting").offsets[0]["offset"] == {"position": 100}
    RELEASE_BLOCKED.set()


def test_a_connector_that_fails_to_start_is_failed_with_its_trace(herder):
    herder.create_connector(source_config(fail_start="true"))
    status = herder.connector_status("counting")
    assert status.connector.state is State.FAILED
    assert "cannot reach the source system" in status.connector.trace
    assert status.tasks == ()
    herder.patch_connector_config("counting", {"fail.start": "false", "records": 5})
    assert herder.connector_status("counting").connector.state is State.RUNNING
    eventually(lambda: herder.offsets("counting").offsets)


def test_restart_policy_also_restarts_a_failed_connector(herder):
    herder.create_connector(source_config(fail_start="true", **{
        "restart.policy": "on-failure", "restart.backoff.initial.ms": 50,
        "restart.max.attempts": 2}))
    eventually(lambda: len(STATE["counting"]["connector_starts"]) == 3)
    time.sleep(0.4)
    assert len(STATE["counting"]["connector_starts"]) == 3
    assert herder.connector_status("counting").connector.state is State.FAILED


def test_restart_with_tasks_restarts_everything(herder):
    herder.create_connector(source_config(batch=10))
    eventually(lambda: herder.metrics())
    status = herder.restart_connector("counting", include_tasks=True)
    assert status.connector.state is State.RUNNING
    assert len(STATE["counting"]["connector_starts"]) == 2
    eventually(lambda: len(STATE["counting"]["resumed_at"]) == 2)
