"""Three ``omconnect distributed`` processes on the RabbitMQ transport (a fresh vhost of
the local server): the scenarios of :mod:`cluster_scenarios`.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from cluster_scenarios import check_failover, kill_trial, new_cluster, spread_and_visible

from omconnect.testing.cluster import ProcessCluster

pytestmark = pytest.mark.rabbitmq

CI_TRIALS = 2


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("cluster")


@pytest.fixture(scope="module")
def cluster(workdir: Path, rabbitmq_settings: dict[str, object]) -> Iterator[ProcessCluster]:
    with new_cluster(workdir, rabbitmq_settings) as running:
        running.start_all()
        yield running


def test_a_connector_created_through_one_worker_is_visible_on_all_and_spread(
        cluster: ProcessCluster, workdir: Path) -> None:
    spread_and_visible(cluster, workdir)


def test_killed_workers_tasks_run_elsewhere_and_the_pipeline_loses_nothing(
        cluster: ProcessCluster, workdir: Path) -> None:
    outcomes = [kill_trial(cluster, workdir, trial) for trial in range(CI_TRIALS)]
    print("\n".join(o.row() for o in outcomes))
    check_failover(outcomes)
