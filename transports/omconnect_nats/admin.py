"""Topic administration: the catalog and the streams of :mod:`omconnect_nats.topics`.

``create_topics`` is create-if-absent (an existing topic keeps its partition count and
config), ``list_topics`` reads the catalog, ``delete_topics`` deletes each topic's
catalog entry, streams (with their messages) and the groups' committed positions on it,
ignoring unknown names.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from omconnect.transport.kit.checks import check_topic_spec
from omconnect.transport.messages import TopicSpec
from omconnect.transport.spi import Admin
from omconnect_nats.client import NatsClient
from omconnect_nats.errors import ErrorContext, translated_errors
from omconnect_nats.topics import Topology

__all__ = ["NatsAdmin"]


class NatsAdmin(Admin):
    """Creates, lists and deletes topics. Thread-safe.

    Args:
        client: The transport's client.
        topology: The transport's topics.
        where: For error messages.
        forget: Called with a topic whose partition count the transport must look up
            again (after it was created or deleted).

    """

    def __init__(self, client: NatsClient, topology: Topology, *, where: ErrorContext,
                 forget: Callable[[str], None]) -> None:
        self._client = client
        self._topology = topology
        self._where = where
        self._forget = forget

    def create_topics(self, topics: Sequence[TopicSpec]) -> None:
        """Create topics; existing ones are left as they are."""
        self._check_open()
        for spec in topics:
            check_topic_spec(spec)

        async def create() -> None:
            js = await self._client.jetstream()
            for spec in topics:
                await self._topology.create(js, spec)

        with translated_errors("creating topics", self._where):
            self._client.call(create(), action="creating topics")
        for spec in topics:
            self._forget(spec.name)

    def list_topics(self) -> dict[str, TopicSpec]:
        """Every topic, by name."""
        self._check_open()

        async def specs() -> dict[str, TopicSpec]:
            js = await self._client.jetstream()
            return await self._topology.specs(js, await self._client.connection())

        with translated_errors("listing topics", self._where):
            return self._client.call(specs(), action="listing topics")

    def delete_topics(self, names: Sequence[str]) -> None:
        """Delete topics, their messages and the positions committed on them."""
        self._check_open()

        async def delete() -> None:
            js = await self._client.jetstream()
            for name in names:
                await self._topology.delete(js, name)

        with translated_errors("deleting topics", self._where):
            self._client.call(delete(), action="deleting topics")
        for name in names:
            self._forget(name)

    def close(self) -> None:
        """Nothing to release (the connection is the transport's). Idempotent."""
        self._closed = True
