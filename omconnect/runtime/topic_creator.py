"""Creating the topics a connector writes to, once, when they are missing."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable

from omconnect.errors import UnsupportedOperationError
from omconnect.transport.messages import TopicSpec
from omconnect.transport.spi import Admin

__all__ = ["TopicCreator"]

_log = logging.getLogger(__name__)


class TopicCreator:
    """Makes sure topics exist before records are sent to them.

    Topics seen once are remembered, so the admin client is consulted only for topics
    not seen before (never per batch). A transport without topic administration
    (:class:`~omconnect.errors.UnsupportedOperationError`) is noted once and then trusted
    to create topics on first send. Safe to share between threads.

    Args:
        admin: Opens the transport's admin client (called lazily, once).
        enabled: ``topic.creation.enable``; when false, nothing is created.
        default_partitions: Partitions of created topics unless told otherwise.

    """

    def __init__(self, admin: Callable[[], Admin], *, enabled: bool = True,
                 default_partitions: int = 1) -> None:
        self._open_admin = admin
        self._admin: Admin | None = None
        self._enabled = enabled
        self._default_partitions = default_partitions
        self._known: set[str] = set()
        self._lock = threading.Lock()

    def ensure(self, topics: Iterable[str], partitions: int | None = None) -> None:
        """Create those of ``topics`` that do not exist, with ``partitions`` partitions.

        Raises:
            TransportError: The admin client failed (other than being unsupported).

        """
        known = self._known
        missing = [t for t in topics if t not in known]
        if not missing or not self._enabled:
            return
        with self._lock:
            missing = [t for t in dict.fromkeys(missing) if t not in self._known]
            if not missing:
                return
            try:
                if self._admin is None:
                    self._admin = self._open_admin()
                existing = self._admin.list_topics()
                self._known.update(existing)
                to_create = [t for t in missing if t not in existing]
                if to_create:
                    count = partitions or self._default_partitions
                    self._admin.create_topics([TopicSpec(t, count) for t in to_create])
                    _log.info("created topics %s with %d partition(s)", to_create, count)
            except UnsupportedOperationError:
                _log.info("the transport does not administer topics; topics are created "
                          "by the transport on first use")
                self._enabled = False
            self._known.update(missing)

    def close(self) -> None:
        """Close the admin client, if one was opened."""
        with self._lock:
            if self._admin is not None:
                self._admin.close()
                self._admin = None
