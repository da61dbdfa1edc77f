"""Liveness from the transport's consumer group: :class:`Membership`.

Every worker of a cluster is a consumer in one group (``group.id``) over the cluster's
membership topic, ``connect-members-<group.id>``, whose ``cluster.slots`` partitions
stand for slots. Nothing is ever written to it: the transport's group protocol alone
decides who holds which slot, exactly as it shares a topic's partitions among consumers.
A worker whose process dies stops heart-beating; after the transport's session timeout
the group gives its slots to the others. So the group is the failure detector and
nothing of omconnect's own keeps time between workers.

This class polls the membership consumer on a thread of its own and reports the slots it
holds whenever they change; the herder writes them to the config log as a *claim*
(:mod:`~omconnect.runtime.distributed.cluster_state`), where every worker reads who is
alive and who leads (the holder of slot 0).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from omconnect.records import TopicPartition
from omconnect.runtime.distributed.shared_log import with_retries
from omconnect.transport.messages import TopicSpec
from omconnect.transport.spi import Consumer, RebalanceListener, Transport

__all__ = ["Membership", "membership_topic"]

_log = logging.getLogger(__name__)

_POLL_S = 0.2
_RETRY_S = 0.5


def membership_topic(group_id: str) -> str:
    """The membership topic of cluster ``group_id``."""
    return f"connect-members-{group_id}"


class Membership(RebalanceListener):
    """This worker's membership in the cluster's group (see the module docstring).

    Args:
        transport: The open transport.
        group_id: The cluster's ``group.id``.
        slots: Partitions of the membership topic when this worker creates it.
        on_change: Called (on the membership thread) with the slots held after each
            change.

    """

    def __init__(self, transport: Transport, group_id: str, *, slots: int,
                 on_change: Callable[[frozenset[int]], None]) -> None:
        self.topic = membership_topic(group_id)
        self.group_id = group_id
        self._transport = transport
        self._slots_wanted = slots
        self._on_change = on_change
        self._held: frozenset[int] = frozenset()
        self._consumer: Consumer | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def slots(self) -> frozenset[int]:
        """The slots held now."""
        return self._held

    def start(self) -> None:
        """Create the topic if needed, join the group and keep polling."""
        with_retries(self._create_topic, f"creating the membership topic {self.topic!r}")
        consumer = self._transport.consumer(self.group_id, start="latest")
        consumer.subscribe([self.topic], self)
        self._consumer = consumer
        self._thread = threading.Thread(target=self._run, daemon=True,
                                        name="omconnect-membership")
        self._thread.start()

    def _create_topic(self) -> None:
        admin = self._transport.admin()
        try:
            existing = admin.list_topics().get(self.topic)
            if existing is None:
                admin.create_topics([TopicSpec(self.topic, self._slots_wanted)])
            elif existing.partitions != self._slots_wanted:
                _log.info("cluster %s: the membership topic has %d slots (cluster.slots=%d "
                          "applies only when the first worker creates it)", self.group_id,
                          existing.partitions, self._slots_wanted)
        finally:
            admin.close()

    def on_partitions_assigned(self, partitions: frozenset[TopicPartition]) -> None:
        """Slots gained."""
        self._changed(self._held | {p.partition for p in partitions
                                    if p.topic == self.topic})

    def on_partitions_revoked(self, partitions: frozenset[TopicPartition]) -> None:
        """Slots given up."""
        self._changed(self._held - {p.partition for p in partitions})

    def _changed(self, held: frozenset[int]) -> None:
        if held == self._held:
            return
        self._held = held
        _log.debug("cluster %s: holding slots %s", self.group_id, sorted(held))
        try:
            self._on_change(held)
        except Exception:
            _log.exception("cluster %s: handling a slot change failed", self.group_id)

    def _run(self) -> None:
        consumer = self._consumer
        assert consumer is not None
        while not self._stop.is_set():
            try:
                consumer.poll(100, _POLL_S)
            except Exception as exc:
                if self._stop.is_set():
                    return
                _log.warning("cluster %s: polling the membership group failed (retrying): "
                             "%s", self.group_id, exc)
                self._stop.wait(_RETRY_S)

    def close(self) -> None:
        """Leave the group (the others take this worker's slots at once). Idempotent."""
        self._stop.set()
        consumer, self._consumer = self._consumer, None
        if consumer is not None:
            consumer.wakeup()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=5.0)
        if consumer is not None:
            try:
                consumer.close()
            except Exception:
                _log.debug("cluster %s: leaving the group failed", self.group_id,
                           exc_info=True)
        self._held = frozenset()
