"""The cluster case (TRANSPORT-76): the transport can host a cluster of distributed
workers.

Distributed mode asks nothing of a transport beyond the SPI: consumer groups (liveness:
every worker is a member of one group, and the group hands out the slots) and replay
(every worker reads the cluster's config and status logs from their first record, with
``assign``). So any transport declaring ``consumer_groups`` and ``replayable`` must be
able to host a cluster, and this case checks it with three distributed herders
(:class:`~omconnect.runtime.distributed.DistributedHerder`) in the test process, each on
a transport of its own built by the ``transport_factory`` (as three worker processes
would open it), running an :class:`~omconnect.testing.cluster.EventSource` connector.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from omconnect.connector.lifecycle import State
from omconnect.runtime.distributed import DistributedHerder
from omconnect.testing.pipeline import worker_settings_for
from omconnect.testing.profile import TransportFactory
from omconnect.testing.transport.base import TransportCase, TransportHarness
from omconnect.testing.waiting import eventually

__all__ = ["ClusterCases"]

_EVENTS = "omconnect.testing.cluster:EventSource"
_TASKS = 6


class _Herders:
    """Three herders of one cluster on the transport under test."""

    def __init__(self, harness: TransportHarness, workdir: Path) -> None:
        factory = harness.factory if isinstance(harness.factory, TransportFactory) \
            else harness.portable_factory()
        if not isinstance(factory, TransportFactory):
            factory = TransportFactory.rebuilding(harness.transport)
        try:
            transport = worker_settings_for(factory.transport_type(), factory.config)
        except LookupError as exc:
            pytest.skip(f"needs a transport a worker config can select: {exc}")
        group = f"suite-{uuid.uuid4().hex[:10]}"
        self.settings: dict[str, Any] = {
            **transport, "group.id": group, "scheduled.rebalance.max.delay.ms": 0,
            "cluster.slots": 6, "task.shutdown.graceful.timeout.ms": 2000}
        self.timeout = max(90.0, harness.settings.timeout * 3)
        self.workdir = workdir
        self.herders: dict[str, DistributedHerder] = {}

    def start(self, worker: str) -> DistributedHerder:
        herder = DistributedHerder({**self.settings, "worker.id": worker},
                                   url=f"http://{worker}.invalid")
        self.herders[worker] = herder
        herder.start()
        return herder

    def close(self) -> None:
        for herder in self.herders.values():
            herder.stop()


def _placement(herder: DistributedHerder, name: str) -> dict[int, tuple[State, str]]:
    return {t.id: (t.state, t.worker_id) for t in herder.connector_status(name).tasks}


class ClusterCases(TransportCase):
    """Distributed workers on the transport: one cluster, work spread and moved, one
    config agreed.
    """

    @pytest.fixture
    def herders(self, harness: TransportHarness, tmp_path: Path) -> Iterator[_Herders]:
        """The case's herders, stopped afterwards."""
        made = _Herders(harness, tmp_path)
        try:
            yield made
        finally:
            made.close()

    def test_hosts_a_cluster_of_distributed_workers(self, harness: TransportHarness,
                                                   herders: _Herders) -> None:
        """TRANSPORT-76 (capabilities ``consumer_groups``, ``replayable``): three
        distributed workers on the transport form one cluster: a connector of 6 tasks
        created through one is listed with the same config by all three and runs two
        tasks on each; two config writes through two workers at once end with one
        config on all three; when a worker stops, its tasks run on the other two.
        """
        harness.require(consumer_groups=True, replayable=True)
        a, b, c = (herders.start(w) for w in ("a", "b", "c"))
        a.create_connector({"name": "spread", "connector.class": _EVENTS,
                            "tasks.max": _TASKS,
                            "events.file": str(herders.workdir / "events.txt")})

        def spread_over(workers: set[str]) -> dict[int, tuple[State, str]] | None:
            seen = [_placement(h, "spread") for h in herders.herders.values()
                    if h.worker_id in workers and "spread" in h.connectors()]
            if len(seen) != len(workers) or any(s != seen[0] for s in seen):
                return None
            share = -(-_TASKS // len(workers))
            ok = len(seen[0]) == _TASKS and all(
                s is State.RUNNING and w in workers for s, w in seen[0].values()) and all(
                sum(1 for _, w in seen[0].values() if w == worker) <= share
                for worker in workers)
            return seen[0] if ok else None

        eventually(lambda: spread_over({"a", "b", "c"}), herders.timeout,
                   "6 tasks running, two on each worker")
        assert a.connector_config("spread") == b.connector_config("spread") \
            == c.connector_config("spread")

        writes = [{"name": "spread", "connector.class": _EVENTS, "tasks.max": _TASKS,
                   "events.file": str(herders.workdir / f"events-{i}.txt")} for i in (0, 1)]
        barrier = threading.Barrier(2)

        def put(herder: DistributedHerder, config: dict[str, Any]) -> None:
            barrier.wait()
            herder.put_connector_config("spread", config)

        threads = [threading.Thread(target=put, args=(h, w)) for h, w in zip((b, c), writes,
                                                                             strict=True)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        def agreed() -> dict[str, Any] | None:
            seen = [h.connector_config("spread") for h in (a, b, c)]
            return seen[0] if seen[0] == seen[1] == seen[2] else None

        config = eventually(agreed, herders.timeout, "one config on every worker")
        assert config is not None
        assert config["events.file"] in {w["events.file"] for w in writes}

        eventually(lambda: spread_over({"a", "b", "c"}), herders.timeout,
                   "the tasks running again with the agreed config")
        herders.herders.pop("c").stop()
        eventually(lambda: spread_over({"a", "b"}), herders.timeout,
                   "the stopped worker's tasks running on the other two")
