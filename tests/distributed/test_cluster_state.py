"""The config log's state machine (:class:`ClusterState`): every worker applying the same
records in the same order holds the same state, and each record has one outcome."""

from __future__ import annotations

import itertools
from typing import Any

from omconnect.connector.lifecycle import State
from omconnect.runtime.distributed.cluster_state import ClusterState

_ids = itertools.count()


def record(kind: str, **fields: Any) -> dict[str, Any]:
    return {"id": f"r{next(_ids)}", "kind": kind, **fields}


def create(name: str, **config: Any) -> dict[str, Any]:
    return record("create", name=name, config={"name": name, **config}, target="RUNNING")


def test_of_two_creates_of_one_name_the_first_in_the_log_wins_everywhere():
    first, second = create("x", marker="A"), create("x", marker="B")
    outcomes = []
    for _ in range(2):  # two workers, the same order
        state = ClusterState()
        outcomes.append((state.apply(first), state.apply(second),
                         state.connectors["x"].config["marker"]))
    assert outcomes == [("created", "exists", "A")] * 2


def test_the_later_put_is_the_config_and_a_patch_that_lost_a_race_conflicts():
    state = ClusterState()
    state.apply(create("x", marker="A"))
    version = state.connectors["x"].version
    assert state.apply(record("put", name="x", config={"name": "x", "marker": "B"})) \
        == "updated"
    assert state.apply(record("put", name="x", config={"name": "x", "marker": "C"},
                              if_version=version)) == "conflict"
    assert state.connectors["x"].config["marker"] == "B"
    current = state.connectors["x"].version
    assert state.apply(record("put", name="x", config={"name": "x", "marker": "D"},
                              if_version=current)) == "updated"


def test_a_resent_record_applies_once():
    state = ClusterState()
    once = create("x")
    assert state.apply(once) == "created"
    assert state.apply(dict(once)) == "ignored"
    assert state.position == 1


def test_stopping_clears_task_configs_and_pausing_a_stopped_connector_is_refused():
    state = ClusterState()
    state.apply(create("x"))
    version = state.connectors["x"].version
    assert state.apply(record("tasks", name="x", version=version, task_class="m:T",
                              configs=[{}, {}])) == "ok"
    assert state.connectors["x"].task_count == 2
    assert state.apply(record("target", name="x", target="STOPPED")) == "ok"
    assert state.connectors["x"].task_configs == []
    assert state.apply(record("target", name="x", target="PAUSED")) == "stopped"
    assert state.connectors["x"].target is State.STOPPED


def test_task_configs_of_an_older_config_are_stale():
    state = ClusterState()
    state.apply(create("x"))
    old = state.connectors["x"].version
    state.apply(record("put", name="x", config={"name": "x", "tasks.max": "2"}))
    assert state.apply(record("tasks", name="x", version=old, task_class="m:T",
                              configs=[{}])) == "stale"
    assert state.connectors["x"].task_version is None


def test_the_latest_claimant_of_a_slot_holds_it_and_slot_zero_leads():
    state = ClusterState()
    state.apply(record("claim", worker="a", session="1", slots=[0, 1, 2, 3]))
    state.apply(record("claim", worker="b", session="2", slots=[2, 3]))
    assert set(state.alive) == {"a", "b"} and state.leader == ("a", "1")
    state.apply(record("claim", worker="b", session="2", slots=[0, 1, 2, 3]))  # a died
    assert set(state.alive) == {"b"} and state.leader == ("b", "2")


def test_only_the_leaders_session_publishes_assignments_one_generation_at_a_time():
    state = ClusterState()
    state.apply(record("claim", worker="a", session="1", slots=[0]))
    shares = {"a": {"session": "1", "connectors": ["x"], "tasks": [["x", 0]]}}
    assert state.apply(record("assignment", leader="b", session="9", generation=1,
                              workers=shares)) == "ignored"
    assert state.apply(record("assignment", leader="a", session="old", generation=1,
                              workers=shares)) == "ignored"
    assert state.apply(record("assignment", leader="a", session="1", generation=2,
                              workers=shares)) == "ignored"
    assert state.apply(record("assignment", leader="a", session="1", generation=1,
                              workers=shares)) == "ok"
    assert state.share_of("a", "1") is not None and state.share_of("a", "2") is None


def test_a_revoked_item_is_released_once_its_worker_acknowledges():
    state = ClusterState()
    state.apply(record("claim", worker="a", session="1", slots=[0]))
    state.apply(record("assignment", leader="a", session="1", generation=1,
                       workers={"a": {"session": "1", "tasks": [["x", 0], ["x", 1]]}}))
    state.apply(record("assignment", leader="a", session="1", generation=2,
                       workers={"a": {"session": "1", "tasks": [["x", 0]]}}))
    assert state.released == {("x", 1): ("a", "1", 2)}
    state.apply(record("applied", worker="a", session="1", generation=1))
    assert ("x", 1) in state.released
    state.apply(record("applied", worker="a", session="1", generation=2))
    assert state.released == {}
