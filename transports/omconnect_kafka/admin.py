"""Creating, listing and deleting Kafka topics, and creating them on first use.

:class:`KafkaAdmin` is the SPI's admin over a driver's admin client.
:class:`TopicCreator` is what producers, subscribers and key/value stores call before
they touch a topic: a topic the transport has not seen yet is looked up and, when
missing and ``kafka.auto.create.topics`` is on, created with
``kafka.default.partitions`` partitions (the embedded transport's "created on first
send"), rather than left to the broker's ``auto.create.topics.enable`` and its
``num.partitions``.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence

from omconnect.errors import IllegalStateError, TransportError
from omconnect.transport.messages import TopicSpec
from omconnect.transport.spi import Admin
from omconnect_kafka.client.base import AdminClient
from omconnect_kafka.errors import translated_errors

__all__ = ["KafkaAdmin", "TopicCreator"]

_log = logging.getLogger(__name__)

MAX_PARTITIONS = 2**31 - 1
"""Kafka's partition ids are 32-bit signed integers."""


def _check_spec(spec: TopicSpec) -> None:
    if not isinstance(spec.name, str) or not spec.name:
        raise ValueError(f"a topic needs a non-empty name, got {spec.name!r}")
    partitions = spec.partitions
    if isinstance(partitions, bool) or not isinstance(partitions, int) or not (
            1 <= partitions <= MAX_PARTITIONS):
        raise ValueError(f"topic {spec.name!r}: partitions must be a positive integer, got "
                         f"{partitions!r}")


class KafkaAdmin(Admin):
    """Topic administration through one admin client of the driver.

    Args:
        client: The driver's admin client.
        topics: The transport's :class:`TopicCreator`, told what is created and deleted.
        where: The cluster, for error messages (e.g. its address and timeout).

    """

    def __init__(self, client: AdminClient, topics: TopicCreator | None = None,
                 where: str = "the cluster") -> None:
        self._client: AdminClient | None = client
        self._topics = topics
        self._where = where

    def _admin(self) -> AdminClient:
        if self._client is None:
            raise IllegalStateError("the admin is closed")
        return self._client

    def create_topics(self, topics: Sequence[TopicSpec]) -> None:
        """Create ``topics``; a topic that exists is left as it is.

        Raises:
            ValueError: A spec has no name or a partition count below 1.
            TransportError: The broker refused (its message kept).

        """
        for spec in topics:
            _check_spec(spec)
        with translated_errors(f"creating topics at {self._where}"):
            self._admin().create_topics(list(topics))
        if self._topics is not None:
            self._topics.known(spec.name for spec in topics)

    def list_topics(self) -> dict[str, TopicSpec]:
        """Every topic (internal ``__*`` topics excluded), with its partition count."""
        with translated_errors(f"listing topics at {self._where}"):
            return self._admin().list_topics()

    def delete_topics(self, names: Sequence[str]) -> None:
        """Delete topics and their messages; unknown names are ignored."""
        with translated_errors(f"deleting topics at {self._where}"):
            self._admin().delete_topics(list(names))
        if self._topics is not None:
            self._topics.forget(names)

    def close(self) -> None:
        """Release the client. Idempotent."""
        client, self._client = self._client, None
        if client is not None:
            with translated_errors("closing the admin"):
                client.close()


class TopicCreator:
    """Makes sure topics exist before the transport uses them. Thread-safe.

    Args:
        admin: Opens the admin client to use (called once, on first need).
        default_partitions: Partitions of a topic it creates.
        enabled: ``kafka.auto.create.topics``; when off, nothing is looked up or
            created (the broker's own auto-creation, if any, applies).
        where: The cluster, for error messages (e.g. its address and timeout).

    """

    def __init__(self, admin: Callable[[], AdminClient], *, default_partitions: int,
                 enabled: bool, where: str = "the cluster") -> None:
        self._where = where
        self._open_admin = admin
        self._admin: AdminClient | None = None
        self._default_partitions = default_partitions
        self._enabled = enabled
        self._known: set[str] = set()
        self._lock = threading.Lock()

    def known(self, names: Iterable[str]) -> None:
        """Note that ``names`` exist (e.g. an admin just created them)."""
        self._known.update(names)

    def forget(self, names: Iterable[str]) -> None:
        """Note that ``names`` were deleted (a later use creates them again)."""
        self._known.difference_update(names)

    def ensure(self, names: set[str], config: Mapping[str, str] | None = None,
               partitions: int | None = None) -> None:
        """Create those of ``names`` that do not exist yet.

        Args:
            names: Topic names.
            config: Topic settings for topics it creates (e.g. ``cleanup.policy``).
            partitions: Partitions of topics it creates (default
                ``kafka.default.partitions``).

        Raises:
            TransportTimeoutError: The cluster is not reachable in time.
            TransportError: A topic could not be created (the broker's message kept).

        """
        if not self._enabled or names <= self._known:
            return
        with self._lock:
            missing = names - self._known
            if not missing:
                return
            admin = self._admin_client()
            with translated_errors(f"looking up topics at {self._where}"):
                existing = admin.list_topics()
            absent = sorted(missing - existing.keys())
            if absent:
                specs = [TopicSpec(name, partitions or self._default_partitions,
                                   dict(config or {})) for name in absent]
                try:
                    with translated_errors(f"creating topics on first use at {self._where}"):
                        admin.create_topics(specs)
                except TransportError as exc:
                    if "refused access" not in exc.message:
                        raise
                    # Not allowed to create topics: the broker may still auto-create
                    # them, or the send will report that they are missing.
                    _log.warning("kafka transport: cannot create topics %s (%s); relying "
                                 "on the broker", ", ".join(absent), exc)
            self._known |= missing

    def _admin_client(self) -> AdminClient:
        if self._admin is None:
            with translated_errors("connecting the admin client"):
                self._admin = self._open_admin()
        return self._admin

    def close(self) -> None:
        """Release the admin client. Idempotent."""
        with self._lock:
            admin, self._admin = self._admin, None
        if admin is not None:
            with translated_errors("closing the admin"):
                admin.close()
