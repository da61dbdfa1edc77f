"""Distributed mode: workers sharing one ``group.id`` on a transport form a cluster that
shares connectors and spreads their instances and tasks over its workers, with the
transport's consumer group and ordered logs as the only coordination. Start with
:class:`~omconnect.runtime.distributed.herder.DistributedHerder`; see
``docs/distributed.md``.
"""

from __future__ import annotations

from omconnect.runtime.distributed.herder import CLUSTER_CAPABILITIES, DistributedHerder

__all__ = ["CLUSTER_CAPABILITIES", "DistributedHerder"]
