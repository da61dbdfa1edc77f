"""When a failed connector or task restarts: the failure counting behind the herder's
automatic restarts (the backoff itself is :class:`~omconnect.runtime.restart_policy.
RestartPolicy`, configured by ``restart.policy`` and ``restart.backoff.*``).

Failures are counted in a row per task (and for the connector instance, under ``None``)
in the entry; a task that ran longer than the policy's recovery time before failing
starts counting again from one.
"""

from __future__ import annotations

import time

from omconnect.config.providers import resolve_references
from omconnect.runtime.connector_entry import ConnectorEntry
from omconnect.runtime.restart_policy import RestartPolicy
from omconnect.runtime.task_runner import TaskRunner
from omconnect.runtime.worker_config import WorkerConfig

__all__ = ["connector_restart_delay", "restart_policy", "task_restart_delay"]


def restart_policy(entry: ConnectorEntry, worker: WorkerConfig) -> RestartPolicy:
    """The running instance's restart policy, else one read from the stored config
    (the worker's defaults when that cannot be resolved).
    """
    if entry.runner is not None:
        policy: RestartPolicy = entry.runner.settings.restart
        return policy
    try:
        return RestartPolicy.from_config(resolve_references(entry.config)[0], worker.values)
    except (TypeError, ValueError):  # e.g. a reference that no longer resolves
        return RestartPolicy.from_config({}, worker.values)


def connector_restart_delay(entry: ConnectorEntry, worker: WorkerConfig
                            ) -> tuple[float | None, int]:
    """Count one more failure of the connector instance.

    Returns:
        The seconds to wait before restarting it (``None``: do not restart), and its
        failures in a row.

    """
    failures = entry.failures.get(None, 0) + 1
    entry.failures[None] = failures
    return restart_policy(entry, worker).next_delay(failures), failures


def task_restart_delay(entry: ConnectorEntry, runner: TaskRunner, worker: WorkerConfig
                       ) -> tuple[float | None, int]:
    """Count one more failure of ``runner``'s task.

    Returns:
        As for :func:`connector_restart_delay`.

    """
    number = runner.id.task
    policy = restart_policy(entry, worker)
    if policy.recovered(time.time() - runner.metrics.started_at):
        entry.failures[number] = 0
    failures = entry.failures.get(number, 0) + 1
    entry.failures[number] = failures
    return policy.next_delay(failures), failures
