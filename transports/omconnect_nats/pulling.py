"""Reading a stream from a sequence number: :class:`PullReader`; and the :class:`Mailbox`
the producers' acknowledgements come back to.

A reader is an ephemeral JetStream pull consumer (``AckPolicy.NONE``, memory storage,
``inactive_threshold``) created at a stream sequence (``DeliverPolicy.BY_START_SEQUENCE``),
a subscription to an inbox of its own (deliveries keep their stream subject, so they are
told apart by subscription) and a buffer. It keeps one pull request outstanding while
its buffer is below ``batch / 2``: ``{"batch": n, "expires": ...}`` to
``$JS.API.CONSUMER.MSG.NEXT``, which the server answers with up to ``n`` messages as they
are stored, with an idle heartbeat (status ``100``) while nothing comes, and a status at
its end (``408`` when the request expired, ``409`` when the consumer went away). So
messages flow into the buffer ahead of the application's polls, at most ``batch`` of
them per partition, and an idle reader costs one request per ``expires``.

Without acknowledgements the consumer moves on as it delivers; the position that counts is
the application's (the next sequence it will take from the buffer). A reader asked for
another position (a seek, a position the group committed elsewhere) or whose consumer is
gone (deleted with its stream, expired while paused, lost in a server restart, or a
request unanswered past its expiry) is opened again at the position asked for: nothing is
skipped and nothing the application already took comes again.

Sequences are dense per stream (one stream per partition), except where the stream's
limits or a delete removed messages: the consumer then delivers the next sequence kept
and the reader's position jumps over the gap.

Everything here runs on the client's loop, except what the methods say.
"""

from __future__ import annotations

import asyncio
import collections
import functools
import itertools
import json
import time
from collections.abc import Awaitable, Callable
from typing import Any

__all__ = ["Delivery", "Mailbox", "PullReader", "delivery_of"]

Delivery = tuple[int, bytes, "dict[str, str] | None", int, str]
"""A buffered message: (stream sequence, payload, NATS headers, stored-at nanoseconds,
subject)."""

_GRACE = 2.0
"""Seconds past a request's expiry after which it counts as lost."""


class Mailbox:
    """One wildcard subscription of a connection that routes each reply to the handler
    registered for its token, the first token after the mailbox's prefix (publish
    acknowledgements: ``<prefix><token>.<message index>``).
    """

    def __init__(self) -> None:
        self._handlers: dict[str, Callable[[Any], None]] = {}
        self._prefix = ""
        self._subscription: Any = None
        self._opening: asyncio.Future[Any] | None = None
        self._tokens = itertools.count(1)

    async def open(self, nc: Any) -> None:
        """Subscribe (once: callers at the same time wait for the one subscription) to
        ``<inbox>.>`` on ``nc``.
        """
        if self._subscription is not None:
            return
        if self._opening is None:
            self._prefix = nc.new_inbox() + "."
            self._opening = asyncio.ensure_future(nc.subscribe(
                self._prefix + ">", cb=self._route, pending_msgs_limit=1_000_000,
                pending_bytes_limit=1 << 30))
        try:
            self._subscription = await asyncio.shield(self._opening)
        except Exception:
            self._opening = None
            raise

    def register(self, handler: Callable[[Any], None]) -> tuple[str, str]:
        """A new token and its reply subject; replies to it go to ``handler``."""
        token = format(next(self._tokens), "x")
        self._handlers[token] = handler
        return token, self._prefix + token

    def reply_subject(self, token: str) -> str:
        """The reply subject of ``token``."""
        return self._prefix + token

    def unregister(self, token: str) -> None:
        """Drop ``token``'s handler: later replies to it are ignored."""
        self._handlers.pop(token, None)

    async def _route(self, msg: Any) -> None:
        token = msg.subject[len(self._prefix):].partition(".")[0]
        handler = self._handlers.get(token)
        if handler is not None:
            handler(msg)


def delivery_of(msg: Any) -> Delivery | None:
    """The delivery a pulled message is, from its reply subject
    (``$JS.ACK.<stream>.<consumer>.<delivered>.<seq>.<cseq>.<ns>.<pending>``, or the
    longer form with a domain and account hash), or ``None`` for a status message.
    """
    reply = msg.reply
    if not reply:
        return None
    tokens = reply.split(".")
    if len(tokens) == 9:
        return int(tokens[5]), msg.data, msg.headers, int(tokens[7]), msg.subject
    return int(tokens[7]), msg.data, msg.headers, int(tokens[9]), msg.subject


class PullReader:
    """One stream read from a sequence on; see the module docstring.

    Args:
        stream: The stream.
        subject: Its subject (the consumer's filter).
        batch: Messages asked for per request (the most buffered ahead).
        expires: Seconds a request waits on the server for messages.
        inactive_threshold: Seconds after which the server deletes an idle consumer.
        wake: Called (on the loop) when messages or a failure arrived.

    """

    def __init__(self, stream: str, subject: str, *, batch: int,
                 expires: float, inactive_threshold: float,
                 wake: Callable[[], None]) -> None:
        self.stream = stream
        self.subject = subject
        self.buffer: collections.deque[Delivery] = collections.deque()
        self.next_seq = 0
        """The sequence the application takes next (owned by the consumer thread while
        the reader is open)."""
        self.missing = False
        """The stream does not exist (set by :meth:`open`)."""
        self.paused = False
        self._batch = batch
        self._expires = expires
        self._inactive = inactive_threshold
        self._wake = wake
        self._js: Any = None
        self._consumer: str | None = None
        self._subscription: Any = None
        self._inbox = ""
        self._outstanding = 0
        self._deadline = 0.0
        self._broken = True
        self._closed = False

    @property
    def healthy(self) -> bool:
        """Whether the consumer is there and its requests are answered."""
        if self._broken or self._consumer is None:
            return False
        if self._outstanding and time.monotonic() > self._deadline:
            self._broken = True  # a request nobody answered: the consumer is gone
        return not self._broken

    async def open(self, js: Any, start_seq: int, nats_api: Any) -> None:
        """(Re)create the consumer at ``start_seq``, dropping what was buffered, and ask
        for the first messages. Sets :attr:`missing` when the stream does not exist.

        Raises:
            Exception: What the JetStream API raised (but "stream not found").

        """
        self._drop()
        self._js = js
        nc = js._nc
        self._inbox = nc.new_inbox()
        self._subscription = await nc.subscribe(
            self._inbox, cb=functools.partial(self._on_message, self._inbox),
            pending_msgs_limit=self._batch * 4 + 100, pending_bytes_limit=1 << 30)
        config = nats_api.ConsumerConfig(
            deliver_policy=(nats_api.DeliverPolicy.BY_START_SEQUENCE if start_seq > 1
                            else nats_api.DeliverPolicy.ALL),
            opt_start_seq=start_seq if start_seq > 1 else None,
            ack_policy=nats_api.AckPolicy.NONE, filter_subject=self.subject,
            inactive_threshold=self._inactive, mem_storage=True,
            max_waiting=16, num_replicas=1)
        try:
            info = await js._jsm.add_consumer(self.stream, config)
        except Exception as exc:
            if getattr(exc, "err_code", None) == 10059:  # stream not found
                self.missing = True
                self.next_seq = start_seq
                return
            raise
        self.missing = False
        self._consumer = info.name
        self._broken = False
        self.next_seq = start_seq
        self.refill()

    def refill(self) -> None:
        """Ask for more when no request is outstanding and the buffer is below half."""
        if (self._closed or self._broken or self._consumer is None or self._outstanding
                or self.paused or len(self.buffer) > self._batch // 2):
            return
        wanted = self._batch - len(self.buffer)
        self._outstanding = wanted
        self._deadline = time.monotonic() + self._expires + _GRACE
        request = json.dumps({"batch": wanted, "expires": int(self._expires * 1e9),
                              "idle_heartbeat": int(min(self._expires / 2, 5.0) * 1e9)})
        js = self._js
        publish: Awaitable[Any] = js._nc.publish(
            f"{js._prefix}.CONSUMER.MSG.NEXT.{self.stream}.{self._consumer}",
            request.encode(), reply=self._inbox)
        _spawn(publish, self._failed_request)

    def _failed_request(self, _error: BaseException) -> None:
        self._outstanding = 0
        self._broken = True
        self._wake()

    async def _on_message(self, inbox: str, msg: Any) -> None:
        if inbox != self._inbox:
            return  # a delivery to the consumer this reader had before it opened again
        delivery = delivery_of(msg)
        if delivery is not None:
            self.buffer.append(delivery)
            if self._outstanding:
                self._outstanding -= 1
            self._wake()
            return
        status = (msg.headers or {}).get("Status")
        if status == "100":  # idle heartbeat: the request is alive
            self._deadline = time.monotonic() + self._expires + _GRACE
            return
        self._outstanding = 0
        if status == "409":
            description = str((msg.headers or {}).get("Description", ""))
            if "Deleted" in description or "Leadership" in description:
                self._broken = True
        if self._broken:
            self._wake()
        else:
            self.refill()  # the request ended (expired, or nothing more): ask again

    def mark_broken(self) -> None:
        """Have the next read open the reader again (its consumer may be gone)."""
        self._broken = True

    def take(self, limit: int) -> list[Delivery]:
        """Up to ``limit`` buffered messages from :attr:`next_seq` on (any thread: deque
        pops are atomic); moves :attr:`next_seq` past them.
        """
        taken: list[Delivery] = []
        buffer = self.buffer
        while buffer and len(taken) < limit:
            delivery = buffer.popleft()
            if delivery[0] < self.next_seq:
                continue  # before the position (a replay's overlap)
            taken.append(delivery)
        if taken:
            self.next_seq = taken[-1][0] + 1
        return taken

    def wants_more(self) -> bool:
        """Whether :meth:`refill` would ask the server for more (any thread)."""
        return (not self._outstanding and not self._broken and not self.paused
                and len(self.buffer) <= self._batch // 2)

    def _drop(self) -> None:
        subscription, self._subscription = self._subscription, None
        if subscription is not None:
            _spawn(subscription.unsubscribe(), _ignore)
        self._consumer = None
        self._outstanding = 0
        self._broken = True
        self.buffer.clear()

    async def close(self, js: Any) -> None:
        """Stop reading and delete the consumer (best effort)."""
        consumer = self._consumer
        self._closed = True
        self._drop()
        if consumer is not None:
            try:
                await js._jsm.delete_consumer(self.stream, consumer)
            except Exception:  # gone already, or the server is away: it expires anyway
                return


def _spawn(awaitable: Awaitable[Any], on_error: Callable[[BaseException], None]) -> None:
    """Run ``awaitable`` as a task; call ``on_error`` if it fails."""
    async def run() -> None:
        try:
            await awaitable
        except Exception as exc:
            on_error(exc)

    task = asyncio.get_running_loop().create_task(run())
    _TASKS.add(task)
    task.add_done_callback(_TASKS.discard)


def _ignore(_error: BaseException) -> None:
    """A failure that does not matter (unsubscribing from a lost connection)."""


_TASKS: set[Any] = set()
