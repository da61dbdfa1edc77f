"""Automatic restarts of failed tasks and connectors, with exponential backoff.

Kafka Connect never restarts a failed task; operators build that around it. Here it is a
setting: ``restart.policy=on-failure`` restarts a failed task (or connector) after
``restart.backoff.initial.ms``, doubling the wait after each further failure up to
``restart.backoff.max.ms``, at most ``restart.max.attempts`` times in a row (-1: no
limit). A task that ran for at least ``restart.backoff.max.ms`` before failing is
considered to have recovered: its next restart waits the initial backoff again.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

__all__ = ["RestartPolicy"]


@attrs.frozen(kw_only=True)
class RestartPolicy:
    """When and how soon to restart a failed task or connector.

    Attributes:
        enabled: ``restart.policy=on-failure``.
        initial_backoff_s: Wait before the first restart.
        max_backoff_s: Longest wait.
        max_attempts: Most restarts in a row; -1 for no limit.

    """

    enabled: bool = False
    initial_backoff_s: float = 1.0
    max_backoff_s: float = 60.0
    max_attempts: int = -1

    @classmethod
    def from_config(cls, connector: Mapping[str, Any], worker: Mapping[str, Any]
                    ) -> RestartPolicy:
        """The policy of a connector: its own ``restart.*`` settings over the worker's."""

        def pick(key: str) -> Any:
            value = connector.get(key)
            return worker[key] if value is None else value

        return cls(
            enabled=str(pick("restart.policy")).lower() == "on-failure",
            initial_backoff_s=int(pick("restart.backoff.initial.ms")) / 1000.0,
            max_backoff_s=int(pick("restart.backoff.max.ms")) / 1000.0,
            max_attempts=int(pick("restart.max.attempts")),
        )

    def next_delay(self, failures: int) -> float | None:
        """Seconds to wait before restarting after the ``failures``-th failure in a row
        (1-based), or ``None`` when no restart should happen.
        """
        if not self.enabled or failures < 1:
            return None
        if self.max_attempts >= 0 and failures > self.max_attempts:
            return None
        delay = self.initial_backoff_s * (2 ** min(failures - 1, 30))
        return float(min(delay, max(self.max_backoff_s, self.initial_backoff_s)))

    def recovered(self, ran_for_s: float) -> bool:
        """Whether a run of ``ran_for_s`` seconds before failing resets the failure count."""
        return ran_for_s >= max(self.max_backoff_s, 0.001)
