"""The leader's assignment step (:func:`next_assignment`): incremental, cooperative,
balanced by moving the fewest items."""

from __future__ import annotations

from omconnect.runtime.distributed.assignment import Assignment, WorkerAssignment
from omconnect.runtime.distributed.assignor import Plan, next_assignment

TASKS = {("c", n) for n in range(6)}


def share(session: str, *tasks: int, connectors: tuple[str, ...] = ()) -> WorkerAssignment:
    return WorkerAssignment(session=session, connectors=frozenset(connectors),
                            tasks=frozenset(("c", n) for n in tasks))


def plan(current: Assignment, alive: dict[str, str], *, released=None, departed=None,
         now: float = 100.0, delay: float = 0.0, tasks=TASKS, connectors=("c",)) -> Plan:
    return next_assignment(current=current, alive={w: (s, "") for w, s in alive.items()},
                           connectors=set(connectors), tasks=set(tasks),
                           released=released or {}, departed_since=departed or {},
                           now=now, delay_s=delay)


def counts(result: Plan) -> dict[str, int]:
    assert result.workers is not None
    return {w: len(s.tasks) for w, s in result.workers.items()}


def test_a_first_assignment_spreads_tasks_and_connectors_evenly():
    result = plan(Assignment(), {"a": "1", "b": "2", "c": "3"})
    assert counts(result) == {"a": 2, "b": 2, "c": 2}
    assert result.workers is not None
    assert sum(len(s.connectors) for s in result.workers.values()) == 1


def test_nothing_changes_when_everything_runs_where_it_should():
    current = Assignment(generation=3, workers={"a": share("1", 0, 1, connectors=("c",)),
                                                "b": share("2", 2, 3), "c": share("3", 4, 5)})
    assert plan(current, {"a": "1", "b": "2", "c": "3"}).workers is None


def test_a_newcomer_takes_from_the_busiest_only_and_nothing_is_placed_twice_at_once():
    current = Assignment(generation=3, workers={"a": share("1", 0, 1, connectors=("c",)),
                                                "b": share("2", 2, 3), "c": share("3", 4, 5)})
    result = plan(current, {"a": "1", "b": "2", "c": "3", "d": "4"})
    assert result.workers is not None
    # 6 tasks over 4 workers: two keep 2, two hold 1. The revoked task goes to nobody in
    # this assignment (it is placed once its worker acknowledged stopping it).
    kept = {w: set(s.tasks) for w, s in result.workers.items()}
    assert kept["a"] == {("c", 0), ("c", 1)} and kept["b"] == {("c", 2), ("c", 3)}
    assert kept["c"] == {("c", 4)} and kept["d"] == set()
    released = {("c", 5): ("c", "3", 4)}
    after = Assignment(generation=4, workers=result.workers)
    # Not acknowledged yet: still nowhere.
    assert plan(after, {"a": "1", "b": "2", "c": "3", "d": "4"}, released=released).workers \
        is None
    # Acknowledged: the newcomer gets it; nothing else moves.
    final = plan(after, {"a": "1", "b": "2", "c": "3", "d": "4"})
    assert final.workers is not None
    assert final.workers["d"].tasks == {("c", 5)}
    assert {w: s.tasks for w, s in final.workers.items() if w != "d"} == \
        {w: frozenset(v) for w, v in kept.items() if w != "d"}


def test_a_departed_workers_tasks_wait_for_it_then_move():
    current = Assignment(generation=3, workers={"a": share("1", 0, 1, connectors=("c",)),
                                                "b": share("2", 2, 3), "c": share("3", 4, 5)})
    alive = {"a": "1", "b": "2"}
    waiting = plan(current, alive, departed={"c": 100.0}, now=101.0, delay=5.0)
    assert waiting.workers is None and waiting.recheck_at == 105.0
    moved = plan(current, alive, departed={"c": 100.0}, now=105.0, delay=5.0)
    assert counts(moved) == {"a": 3, "b": 3}
    assert moved.workers is not None
    assert moved.workers["a"].tasks >= {("c", 0), ("c", 1)}
    assert moved.workers["b"].tasks >= {("c", 2), ("c", 3)}


def test_a_worker_back_in_time_gets_its_tasks_back_in_its_new_session():
    current = Assignment(generation=3, workers={"a": share("1", 0, 1, connectors=("c",)),
                                                "b": share("2", 2, 3), "c": share("3", 4, 5)})
    back = plan(current, {"a": "1", "b": "2", "c": "3-again"}, departed={}, delay=60.0)
    assert back.workers is not None
    assert back.workers["c"] == share("3-again", 4, 5)


def test_tasks_of_a_stopped_or_deleted_connector_are_dropped_at_once():
    current = Assignment(generation=3, workers={"a": share("1", 0, 1, connectors=("c",)),
                                                "b": share("2", 2, 3), "c": share("3", 4, 5)})
    result = plan(current, {"a": "1", "b": "2", "c": "3"}, tasks=set(), connectors=())
    assert result.workers is not None
    assert all(s.empty for s in result.workers.values())
