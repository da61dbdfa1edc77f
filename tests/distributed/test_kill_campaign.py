"""The kill campaign: :func:`cluster_scenarios.kill_trial` ten times per transport
(``OMCONNECT_KILL_TRIALS`` changes it) on one three-worker cluster each, printing the
trial table. Marked ``distributed_campaign``: ``tox -e distributed`` runs it, outside the
default env list; CI runs two trials per transport in the transports' own modules.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from cluster_scenarios import check_failover, kill_trial, new_cluster

from omconnect.testing.cluster import ProcessCluster

pytestmark = pytest.mark.distributed_campaign

TRIALS = int(os.environ.get("OMCONNECT_KILL_TRIALS", "10"))


@pytest.fixture(params=["embedded", "kafka", "rabbitmq"])
def cluster(request: pytest.FixtureRequest,
            tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, ProcessCluster,
                                                                        Path]]:
    settings = request.getfixturevalue(f"{request.param}_settings")
    workdir = tmp_path_factory.mktemp(f"campaign-{request.param}")
    with new_cluster(workdir, settings) as running:
        running.start_all()
        yield request.param, running, workdir


def test_killed_workers_lose_nothing_across_trials(
        cluster: tuple[str, ProcessCluster, Path]) -> None:
    transport, running, workdir = cluster
    outcomes = [kill_trial(running, workdir, trial) for trial in range(TRIALS)]
    failovers = sorted(o.failover_s for o in outcomes)
    print(f"\n{transport}: {TRIALS} kill trials\n" + "\n".join(o.row() for o in outcomes)
          + f"\n{transport}: failover_s median {failovers[len(failovers) // 2]:.2f} "
          f"max {failovers[-1]:.2f}; lines missing "
          f"{sum(o.missing for o in outcomes)}; duplicated "
          f"{sum(o.duplicated for o in outcomes)}")
    check_failover(outcomes)
