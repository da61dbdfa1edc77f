"""Distributed herders of one cluster in this process, on the memory transport (one
in-process broker): what one worker's API does to work that runs on another, and a
departed worker's tasks waiting for it."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest

from omconnect.errors import ConfigError
from omconnect.runtime.distributed import DistributedHerder
from omconnect.runtime.herder_errors import ConnectorExistsError, ConnectorStateError
from omconnect.testing.cluster import read_events
from omconnect.testing.waiting import eventually
from omconnect.transport.capabilities import Capabilities
from omconnect.transport.memory import MemoryTransport

EVENTS = "omconnect.testing.cluster:EventSource"


def settings(namespace: str, worker: str, **extra: Any) -> dict[str, Any]:
    return {"transport": "memory", "memory.namespace": namespace,
            "memory.session.timeout.ms": 1000, "memory.heartbeat.interval.ms": 50,
            "group.id": "api", "worker.id": worker, "value.converter": "string",
            "offset.flush.interval.ms": 200, **extra}


class Cluster:
    def __init__(self, namespace: str, **extra: Any) -> None:
        self.namespace = namespace
        self.extra = extra
        self.herders: dict[str, DistributedHerder] = {}

    def start(self, worker: str) -> DistributedHerder:
        herder = DistributedHerder(settings(self.namespace, worker, **self.extra),
                                   url=f"http://{worker}")
        herder.start()
        self.herders[worker] = herder
        return herder

    def stop(self, worker: str) -> None:
        self.herders.pop(worker).stop()

    def close(self) -> None:
        for herder in self.herders.values():
            herder.stop()


@pytest.fixture
def cluster() -> Iterator[Cluster]:
    running = Cluster(uuid.uuid4().hex, **{"scheduled.rebalance.max.delay.ms": 60_000})
    try:
        yield running
    finally:
        running.close()


def placement(herder: DistributedHerder, name: str) -> dict[int, tuple[str, str]]:
    return {t.id: (t.state.value, t.worker_id) for t in herder.connector_status(name).tasks}


def running_on(herder: DistributedHerder, name: str, workers: set[str],
               tasks: int) -> dict[int, tuple[str, str]] | None:
    now = placement(herder, name)
    ok = len(now) == tasks and all(s == "RUNNING" and w in workers for s, w in now.values())
    return now if ok else None


def test_a_departed_workers_tasks_wait_for_it_and_come_back_to_it(
        cluster: Cluster, tmp_path: Path) -> None:
    a, _ = cluster.start("a"), cluster.start("b")
    events = tmp_path / "events.txt"
    a.create_connector({"name": "e", "connector.class": EVENTS, "tasks.max": 4,
                        "events.file": str(events)})
    before = eventually(lambda: (p := running_on(a, "e", {"a", "b"}, 4)) and sum(
        1 for _, w in p.values() if w == "b") == 2 and p, 30, "2 tasks on a, 2 on b")
    on_b = {n for n, (_, w) in before.items() if w == "b"}
    starts = len([e for e in read_events(events) if e[2] == "start"])
    cluster.stop("b")
    # Within scheduled.rebalance.max.delay.ms its tasks are UNASSIGNED, naming it ...
    waiting = eventually(lambda: (p := placement(a, "e")) and all(
        p[n] == ("UNASSIGNED", "b") for n in on_b) and p, 30, "b's tasks waiting for b")
    assert all(waiting[n] == ("RUNNING", "a") for n in set(waiting) - on_b)
    eventually(lambda: {w.id: w.state for w in a.cluster().workers} ==
               {"a": "alive", "b": "departed"}, 30, "b departed")
    assert all(placement(a, "e")[n] == ("UNASSIGNED", "b") for n in on_b)
    # ... and nobody else starts them; b comes back (same worker.id) and gets them.
    cluster.start("b")
    after = eventually(lambda: running_on(a, "e", {"a", "b"}, 4), 30, "b running again")
    assert {n for n, (_, w) in after.items() if w == "b"} == on_b
    started = [e for e in read_events(events) if e[2] == "start"][starts:]
    assert sorted(e[1] for e in started) == sorted(on_b)


def test_changes_through_one_worker_act_on_tasks_running_on_another(
        cluster: Cluster, tmp_path: Path) -> None:
    a, b = cluster.start("a"), cluster.start("b")
    events = tmp_path / "events.txt"
    a.create_connector({"name": "e", "connector.class": EVENTS, "tasks.max": 2,
                        "events.file": str(events)})
    eventually(lambda: running_on(b, "e", {"a", "b"}, 2), 30, "2 tasks running")
    b.pause_connector("e")
    eventually(lambda: all(s == "PAUSED" for s, _ in placement(a, "e").values()), 30,
               "every task PAUSED")
    a.resume_connector("e")
    eventually(lambda: running_on(b, "e", {"a", "b"}, 2), 30, "running again")
    stops = len([e for e in read_events(events) if e[2] == "stop"])
    b.restart_task("e", 0)
    eventually(lambda: len([e for e in read_events(events) if e[2] == "stop"]) > stops, 30,
               "task 0 restarted")
    with pytest.raises(ConnectorExistsError):
        b.create_connector({"name": "e", "connector.class": EVENTS,
                            "events.file": str(events)})
    a.stop_connector("e")
    eventually(lambda: b.connector_status("e").tasks == () and
               b.connector_status("e").connector.state.value == "STOPPED", 30, "stopped")
    with pytest.raises(ConnectorStateError):
        b.pause_connector("e")
    with pytest.raises(ConfigError):
        b.put_connector_config("e", {"connector.class": EVENTS, "tasks.max": "many"})
    b.delete_connector("e")
    eventually(lambda: "e" not in a.connectors(), 30, "deleted everywhere")


def test_a_patch_through_each_of_two_workers_keeps_both_changes(cluster: Cluster,
                                                                 tmp_path: Path) -> None:
    a, b = cluster.start("a"), cluster.start("b")
    a.create_connector({"name": "p", "connector.class": EVENTS,
                        "events.file": str(tmp_path / "e.txt")}, initial_state="STOPPED")
    eventually(lambda: "p" in b.connectors(), 30, "b sees p")
    a.patch_connector_config("p", {"tasks.max": "3"})
    b.patch_connector_config("p", {"errors.log.enable": "true"})
    config = eventually(lambda: (c := a.connector_config("p")) == b.connector_config("p")
                        and c, 30, "one config")
    assert config["tasks.max"] == "3" and config["errors.log.enable"] == "true"


class NoReplayTransport(MemoryTransport):
    """The memory transport declaring no replay (as a transport without it would)."""

    name = "no-replay-memory"

    @property
    def capabilities(self) -> Capabilities:
        return attrs.evolve(super().capabilities, replayable=False)


def test_a_transport_without_replay_cannot_host_a_cluster() -> None:
    herder = DistributedHerder({"transport": "test_cluster_api:NoReplayTransport",
                                "group.id": "g"})
    with pytest.raises(ConfigError, match="lacks the replayable capability"):
        herder.open()
