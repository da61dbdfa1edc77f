"""The consumer: the kit's log consumer on a :class:`~omconnect_redis.store.RedisLogStore`,
woken by the server when records arrive.

Everything but waiting is the kit's
:class:`~omconnect.transport.kit.log_transport.LogStoreConsumer`: positions per
partition, the group protocol with a heartbeat thread, rebalance callbacks, ``assign``
and ``seek``, pause and resume, ``wakeup``, ``poll_batch``. An idle consumer waits in
``XREAD BLOCK`` on the streams of the partitions it reads, from their positions, so a
record stored by any process wakes it at once; it blocks for at most
``redis.poll.interval.ms`` at a time (and half ``redis.operation.timeout.ms``, the
socket's own limit), which bounds how long a ``wakeup`` from another thread takes.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from omconnect.transport.kit.log_transport import LogStoreConsumer
from omconnect.transport.spi import StartFrom
from omconnect_redis.errors import translated_errors

if TYPE_CHECKING:
    from omconnect_redis.store import RedisLogStore
    from omconnect_redis.transport import RedisTransport

__all__ = ["RedisConsumer"]


class RedisConsumer(LogStoreConsumer):
    """A consumer of the ``redis`` transport (see the module docstring).

    Args:
        transport: The transport.
        group: The consumer group, or ``None`` for one that only assigns.
        start: Where a partition with no committed position starts.

    """

    def __init__(self, transport: RedisTransport, *, group: str | None,
                 start: StartFrom) -> None:
        super().__init__(transport, group=group, start=start)
        store: RedisLogStore = self._store  # type: ignore[assignment]
        self._redis = store.client
        self._keys = store.keys
        self._where = store.where
        # A blocked XREAD must answer within the socket's timeout.
        self._slice = min(transport.config["poll.interval.ms"],
                          transport.config["operation.timeout.ms"] / 2) / 1000

    def _wait(self, timeout: float) -> None:
        """Block in ``XREAD`` until a stream this consumer reads gets an entry past its
        position, ``self._signal`` is set (``wakeup``, or this process stored records),
        or ``timeout`` seconds passed.
        """
        deadline = time.monotonic() + timeout
        while not self._signal.is_set():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return
            step = min(remaining, self._slice)
            streams = self._watched()
            if not streams:
                self._signal.wait(step)
                continue
            block_ms = max(1, int(step * 1000))
            with translated_errors("waiting for records", self._where):
                found = self._redis.execute_command(
                    "XREAD", "COUNT", 1, "BLOCK", block_ms, "STREAMS",
                    *streams.keys(), *streams.values())
            if found:
                return

    def _watched(self) -> dict[str, str]:
        """Each readable partition's stream, with the id of the entry before its position
        (``XREAD`` answers with entries after it).
        """
        keys = self._keys
        return {keys.stream(tp.topic, tp.partition): f"{max(0, position - 1)}-0"
                for tp, position in self._positions.items() if tp not in self._paused}

