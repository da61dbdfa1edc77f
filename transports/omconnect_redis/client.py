"""The redis-py side of the transport: the lazy import, the connection pool and where
each piece of data lives (:class:`Keys`).

redis-py is imported only when a transport is created (:func:`redis_module`), so every
module of this package imports without it; the import error names the ``redis`` extra.

Connections come from one ``redis.ConnectionPool`` per transport, built from
``redis.url`` (``redis://``, ``rediss://`` for TLS, ``unix://``; TLS settings such as
``ssl_ca_certs`` go in the URL's query string, as redis-py reads them there). redis-py
retries nothing here: a command that fails raises at once, translated to a
:class:`~omconnect.errors.RetriableTransportError`, and the caller (the runtime, the
kit's consumer) decides; an append retried inside the client after the server applied it
would store its records twice without anyone knowing. Stream replies (``XRANGE``,
``XREAD``) are taken raw, as lists, not turned into a dict per entry.
"""

from __future__ import annotations

import urllib.parse
from typing import Any

from omconnect import plugins

__all__ = ["Keys", "open_pool", "public_url", "redis_client", "redis_module"]

_RAW_REPLIES = ("XRANGE", "XREVRANGE", "XREAD")


def redis_module() -> Any:
    """The ``redis`` package, or a MissingExtraError naming the ``redis`` extra."""
    return plugins.require("redis", plugin="redis transport", extra="redis")


def open_pool(url: str, *, password: str | None, operation_timeout_s: float,
              connection_timeout_s: float) -> Any:
    """A connection pool for ``url``, with the timeouts given and no retries.

    Raises:
        ValueError: The URL is not one redis-py understands.

    """
    redis = redis_module()
    from redis.backoff import NoBackoff
    from redis.retry import Retry

    settings: dict[str, Any] = {
        "socket_timeout": operation_timeout_s,
        "socket_connect_timeout": connection_timeout_s,
        "retry": Retry(NoBackoff(), 0),
        "client_name": "omconnect",
    }
    if password:
        settings["password"] = password
    return redis.ConnectionPool.from_url(url, **settings)


def redis_client(pool: Any) -> Any:
    """A ``redis.Redis`` on ``pool`` whose stream replies stay raw lists."""
    client = redis_module().Redis(connection_pool=pool)
    for command in _RAW_REPLIES:
        client.set_response_callback(command, _raw)
    return client


def _raw(response: Any, **_options: Any) -> Any:
    return response


def public_url(url: str) -> str:
    """``url`` without its password (for messages and logs)."""
    parts = urllib.parse.urlsplit(url)
    if parts.password is None:
        return url
    user = f"{parts.username}:***@" if parts.username else ":***@"
    host = parts.netloc.rpartition("@")[2]
    return urllib.parse.urlunsplit(parts._replace(netloc=user + host))


class Keys:
    """The Redis keys of one transport's data, all under ``prefix`` (``redis.key.prefix``).

    ================================  ====================================================
    key                               what it holds
    ================================  ====================================================
    ``<prefix>topics``                hash: topic -> partition count
    ``<prefix>t:<topic>:<partition>`` stream: the partition's records, entry id
                                      ``<offset>-0``
    ``<prefix>next:<topic>``          hash: partition -> the last offset given out
    ``<prefix>c:<topic>``             hash: ``<group>:<partition>`` -> committed offset
    ``<prefix>g:<group>:members``     hash: member -> its topics (JSON)
    ``<prefix>g:<group>:sessions``    hash: member -> its session timeout (ms)
    ``<prefix>g:<group>:beats``       hash: member -> its last heartbeat (server ms)
    ``<prefix>g:<group>:owners``      hash: ``<partition>:<topic>`` -> owning member
    ``<prefix>kv:<namespace>``        hash: the key/value store ``namespace``
    ================================  ====================================================

    A topic's key names end with its partition number, so two (topic, partition) pairs
    never share a stream, whatever characters the topic names hold.
    """

    __slots__ = ("prefix", "topics")

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.topics = f"{prefix}topics"

    def stream(self, topic: str, partition: int) -> str:
        """The stream of one partition."""
        return f"{self.prefix}t:{topic}:{partition}"

    def streams_prefix(self) -> str:
        """What every stream key starts with (``stream`` is this + ``<topic>:<n>``)."""
        return f"{self.prefix}t:"

    def next_offsets(self, topic: str) -> str:
        """The hash of the last offset given out per partition of ``topic``."""
        return f"{self.prefix}next:{topic}"

    def committed(self, topic: str) -> str:
        """The hash of every group's committed offsets of ``topic``."""
        return f"{self.prefix}c:{topic}"

    def group(self, group: str) -> tuple[str, str, str, str]:
        """The four hashes of ``group``'s membership: members, sessions, beats, owners."""
        base = f"{self.prefix}g:{group}:"
        return base + "members", base + "sessions", base + "beats", base + "owners"

    def kv(self, namespace: str) -> str:
        """The hash of the key/value store ``namespace``."""
        return f"{self.prefix}kv:{namespace}"


def committed_field(group: str, partition: int) -> str:
    """The field of ``group``'s offset of ``partition`` in :meth:`Keys.committed`."""
    return f"{group}:{partition}"
