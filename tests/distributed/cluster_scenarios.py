"""The cluster scenarios every transport's cluster tests run, on a
:class:`~omconnect.testing.cluster.ProcessCluster` of three ``omconnect distributed``
processes:

* :func:`spread_and_visible` — a 6-task connector created through one worker is listed
  by all three with the same config, and its tasks are spread two per worker;
* :func:`kill_trial` — a 6-task datagen source and a file → transport → file pipeline
  run; once the first half of the input is through and committed, the second half is
  appended over 3 s and, half a second in, one worker is SIGKILLed; every task it ran
  runs elsewhere within :data:`FAILOVER_BOUND_S` past the session timeout plus the
  rebalance delay, and the output file ends with every input line (re-deliveries
  allowed, counted);
* :func:`conflicting_writes` — two workers given conflicting changes at the same moment
  end with one config on all three (creates: one 201 and one 409);
* :func:`joining_moves_few` — a fourth worker joining takes tasks over, stopping no more
  tasks elsewhere than it receives.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs

from omconnect.testing.cluster import ProcessCluster, read_events, task_placement
from omconnect.testing.waiting import eventually

SESSION_TIMEOUT_S = 3.0
"""The membership groups' session timeout in these tests (conftest.GROUP_TIMEOUTS)."""
REBALANCE_DELAY_MS = 1000
"""``scheduled.rebalance.max.delay.ms`` of these tests' workers."""
FAILOVER_BOUND_S = 15.0
"""What a failover may take past session timeout + rebalance delay on a busy 2-core
machine: the survivors' group sync (a heartbeat interval), a claim and an assignment
through the config log, stopping nothing and starting the moved tasks (each opening its
consumer or offset store; a sink then rejoins its consumer group, half a session timeout
on Kafka). Measured 2-6 s here; the bound leaves room for a loaded machine."""

FLUSH_INTERVAL_S = 0.5
WORKER_SETTINGS = {"key.converter": "string", "value.converter": "string",
                   "offset.flush.interval.ms": int(FLUSH_INTERVAL_S * 1000),
                   "scheduled.rebalance.max.delay.ms": REBALANCE_DELAY_MS}
"""Settings every worker of these tests has besides its transport's."""

TASKS = 6


def new_cluster(workdir: Path, transport: dict[str, object], *, size: int = 3,
                group: str = "cluster") -> ProcessCluster:
    """A cluster of ``size`` workers on ``transport`` (not started)."""
    return ProcessCluster(workdir, {**transport, **WORKER_SETTINGS}, size=size, group=group)


def wait_spread(cluster: ProcessCluster, name: str, workers: list[int], *,
                tasks: int = TASKS, timeout: float = 90.0) -> dict[int, tuple[str, str]]:
    """Wait until every worker of ``workers`` reports ``name``'s ``tasks`` tasks RUNNING
    on live workers only, the same everywhere; the placement.
    """
    live = {cluster.worker_id(i) for i in workers}

    def settled() -> dict[int, tuple[str, str]] | None:
        answers = [cluster.request(i, "GET", f"/connectors/{name}/status") for i in workers]
        if any(status != 200 for status, _ in answers):
            return None  # a worker has not read the create yet
        seen = [task_placement(body) for _, body in answers]
        first = seen[0]
        if len(first) != tasks or any(s != first for s in seen):
            return None
        if all(state == "RUNNING" and worker in live for state, worker in first.values()):
            return first
        return None

    return eventually(settled, timeout, f"{name}'s {tasks} tasks running on {sorted(live)}",
                      interval=0.2)


def spread_and_visible(cluster: ProcessCluster, workdir: Path) -> None:
    """A 6-task connector created through worker 0 is visible on all three workers,
    with the same config, and spread two tasks per worker.
    """
    config = {"connector.class": "omconnect.testing.cluster:EventSource",
              "tasks.max": TASKS, "events.file": str(workdir / "spread-events.txt")}
    cluster.create(0, "spread", config)
    placement = wait_spread(cluster, "spread", [0, 1, 2])
    counts = {w: sum(1 for _, owner in placement.values() if owner == w)
              for w in (cluster.worker_id(i) for i in range(3))}
    assert sorted(counts.values()) == [2, 2, 2], counts
    configs = [cluster.get(i, "/connectors/spread/config") for i in range(3)]
    assert configs[0] == configs[1] == configs[2]
    assert configs[0]["tasks.max"] == "6"
    for i in range(3):
        assert cluster.get(i, "/connectors").count("spread") == 1
    assert cluster.request(1, "DELETE", "/connectors/spread")[0] == 204
    eventually(lambda: all(cluster.request(i, "GET", "/connectors/spread")[0] == 404
                           for i in range(3)), 30, "the delete on every worker")


@attrs.frozen(kw_only=True)
class KillOutcome:
    """One kill trial's figures."""

    trial: int
    victim: str
    moved: int
    failover_s: float
    lines: int
    missing: int
    duplicated: int

    def row(self) -> str:
        """A line of the trial table."""
        return (f"trial {self.trial:2d}  victim {self.victim:<16} moved {self.moved:2d}  "
                f"failover {self.failover_s:5.2f} s  lines {self.lines}  missing "
                f"{self.missing}  duplicated {self.duplicated}")


def _lines(path: Path) -> list[str]:
    if not path.exists():
        return []
    text = path.read_text(encoding="utf-8", errors="replace")
    complete = text if text.endswith("\n") else text[:text.rfind("\n") + 1]
    return complete.splitlines()


def kill_trial(cluster: ProcessCluster, workdir: Path, trial: int, *,
               lines: int = 4000) -> KillOutcome:
    """One kill trial (see the module docstring); the victim is started again after.

    Even trials kill the worker running the file sink's task, odd ones the file source's
    (when that worker also runs the sink's, the other worker is killed), so both kinds of
    task move across the trials; every victim also runs datagen tasks.
    """
    live = cluster.live()
    assert len(live) == 3, f"trial {trial} needs three live workers, has {live}"
    source_file, out = workdir / f"in-{trial}.txt", workdir / f"out-{trial}.txt"
    expected = [f"line {n:07d} trial {trial}" for n in range(lines)]
    first = lines // 2
    source_file.write_text("".join(f"{line}\n" for line in expected[:first]), encoding="utf-8")
    gen, src, sink, topic = f"gen-{trial}", f"src-{trial}", f"sink-{trial}", f"lines-{trial}"
    cluster.create(0, gen, {"connector.class": "datagen", "topic": f"gen-{trial}",
                            "tasks.max": TASKS, "rate": 60, "quickstart": "users"})
    cluster.create(1, sink, {"connector.class": "FileStreamSink", "file": out,
                             "topics": topic})
    cluster.create(2, src, {"connector.class": "FileStreamSource", "file": source_file,
                            "topic": topic, "topic.creation.default.partitions": TASKS,
                            "batch.size": 200})
    wait_spread(cluster, gen, live)
    eventually(lambda: len(_lines(out)) >= first, 120, f"trial {trial}: lines flowing")
    time.sleep(2 * FLUSH_INTERVAL_S)  # the first half committed
    source_owner = task_placement(cluster.status(0, src))[0][1]
    sink_owner = task_placement(cluster.status(0, sink))[0][1]
    victim_id = sink_owner if trial % 2 == 0 else source_owner
    victim = next(i for i in live if cluster.worker_id(i) == victim_id)
    survivors = [i for i in live if i != victim]
    moved = sum(1 for name in (gen, src, sink)
                for _, owner in task_placement(cluster.status(survivors[0], name)).values()
                if owner == victim_id)

    appender = threading.Thread(target=_append_slowly,
                                args=(source_file, expected[first:]), daemon=True)
    appender.start()
    time.sleep(0.5)  # mid-stream: lines are being read, sent and written
    killed_at = time.monotonic()
    cluster.kill(victim)
    for name in (gen, src, sink):
        wait_spread(cluster, name, survivors, tasks=TASKS if name == gen else 1,
                    timeout=SESSION_TIMEOUT_S + REBALANCE_DELAY_MS / 1000 + 120)
    failover = time.monotonic() - killed_at
    appender.join()
    wanted = set(expected)
    eventually(lambda: wanted <= set(_lines(out)), 180,
               f"trial {trial}: every line in {out.name}")
    written = _lines(out)
    outcome = KillOutcome(trial=trial, victim=victim_id, moved=moved, failover_s=failover,
                          lines=len(expected), missing=len(wanted - set(written)),
                          duplicated=len(written) - len(set(written)))
    assert set(written) <= wanted, f"trial {trial}: lines nobody wrote in {out}"
    cluster.start(victim)
    cluster.wait_ready(victim)
    for name in (gen, src, sink):
        assert cluster.request(victim, "DELETE", f"/connectors/{name}")[0] == 204
    return outcome


def _append_slowly(path: Path, lines: list[str], seconds: float = 3.0) -> None:
    step = max(1, len(lines) // 30)
    with path.open("a", encoding="utf-8") as out:
        for start in range(0, len(lines), step):
            out.write("".join(f"{line}\n" for line in lines[start:start + step]))
            out.flush()
            time.sleep(seconds / 30)


def check_failover(outcomes: list[KillOutcome]) -> None:
    """Every trial moved its victim's tasks within the bound and lost no line."""
    limit = SESSION_TIMEOUT_S + REBALANCE_DELAY_MS / 1000 + FAILOVER_BOUND_S
    table = "\n".join(o.row() for o in outcomes)
    assert all(o.missing == 0 for o in outcomes), table
    assert all(o.moved > 0 for o in outcomes), table
    assert all(o.failover_s <= limit for o in outcomes), f"bound {limit:g} s\n{table}"


def conflicting_writes(cluster: ProcessCluster, workdir: Path, races: int = 20) -> None:
    """``races`` races of two workers given conflicting changes at once: odd races are
    two creates of one name (one 201, one 409), even ones two config PUTs of one
    connector (the later record wins); after each, all three workers hold one config.
    """
    for race in range(races):
        name = f"race-{race}"
        configs = [{"connector.class": "omconnect.testing.cluster:EventSource",
                    "tasks.max": str(1 + writer),
                    "events.file": str(workdir / f"race-{race}-{writer}.txt")}
                   for writer in (0, 1)]
        if race % 2 == 0:
            cluster.request(2, "POST", "/connectors", {"name": name, "config": configs[0],
                                                      "initial_state": "STOPPED"})
        if race % 2 == 0:
            calls = [("PUT", f"/connectors/{name}/config", c) for c in configs]
        else:
            calls = [("POST", "/connectors", {"name": name, "config": c,
                                              "initial_state": "STOPPED"}) for c in configs]
        statuses = _at_once([
            (lambda w=w, call=call: cluster.request(w, *call)[0])
            for w, call in enumerate(calls)])
        if race % 2 == 0:
            assert statuses == [200, 200], (race, statuses)
        else:
            assert sorted(statuses) == [201, 409], (race, statuses)

        def agreed(name: str = name) -> dict[str, Any] | None:
            seen = [cluster.request(i, "GET", f"/connectors/{name}/config")
                    for i in range(3)]
            agree = seen[0][0] == 200 and seen[0] == seen[1] == seen[2]
            return dict(seen[0][1]) if agree else None

        final = eventually(agreed, 30, f"{name}: one config on every worker")
        assert final["events.file"] in {c["events.file"] for c in configs}, final
        assert cluster.request(race % 3, "DELETE", f"/connectors/{name}")[0] == 204


def _at_once(calls: list[Callable[[], int]]) -> list[int]:
    barrier = threading.Barrier(len(calls))
    results: list[int] = [0] * len(calls)

    def run(index: int) -> None:
        barrier.wait()
        results[index] = calls[index]()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(calls))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def joining_moves_few(cluster: ProcessCluster, workdir: Path) -> tuple[int, int]:
    """A fourth worker joins a cluster running a 6-task connector: it gets tasks, and
    the task stops elsewhere are exactly the tasks it took (no other task restarts),
    at most ``ceil(6 / 4)``. Returns (tasks moved, task stops). The fourth worker stops
    again at the end.
    """
    events = workdir / "join-events.txt"
    cluster.create(0, "joined", {"connector.class": "omconnect.testing.cluster:EventSource",
                                 "tasks.max": TASKS, "events.file": events})
    wait_spread(cluster, "joined", [0, 1, 2])
    before = len(read_events(events))
    newcomer = cluster.add()
    cluster.start(newcomer)
    cluster.wait_ready(newcomer)
    placement = wait_spread(cluster, "joined", [0, 1, 2, newcomer])

    def balanced() -> dict[int, tuple[str, str]] | None:
        now = wait_spread(cluster, "joined", [0, 1, 2, newcomer])
        owners = [owner for _, owner in now.values()]
        counts = sorted(owners.count(cluster.worker_id(i)) for i in (0, 1, 2, newcomer))
        return now if counts == [1, 1, 2, 2] else None

    placement = eventually(balanced, 60, "a balanced assignment over four workers",
                           interval=0.5)
    time.sleep(1.0)  # any further stop would show now
    events_now = read_events(events)[before:]
    stops = [e for e in events_now if e[2] == "stop"]
    taken = sum(1 for _, owner in placement.values() if owner == cluster.worker_id(newcomer))
    assert taken >= 1
    assert len(stops) == taken, f"{len(stops)} task stops for {taken} moved: {events_now}"
    assert len(stops) <= math.ceil(TASKS / 4)
    assert cluster.stop(newcomer) == 0
    assert cluster.request(0, "DELETE", "/connectors/joined")[0] == 204
    return taken, len(stops)
