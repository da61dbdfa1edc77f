"""The ``redis`` transport: Redis Streams through redis-py.

Features:
    * A stream per topic partition (``<prefix>t:<topic>:<partition>``); keyed records
      land on a partition by Kafka's murmur2 of the key, so equal keys stay in order in
      one stream. Each entry's id is ``<offset>-0``: offsets are dense (1, 2, 3, ...),
      given out by a Lua script that adds a whole batch in one step, so any number of
      writers in any number of processes never collide nor leave a gap a reader could
      skip.
    * Replayable: a consumer can ``assign`` a partition, ``seek`` to any offset the
      stream still keeps and read it again (``XRANGE <offset>-0 +``); Spark reads are
      exactly-once. ``redis.max.length`` trims each stream to about that many entries
      (off by default): trimmed records cannot be read again, by anyone.
    * Consumer groups share partitions (the kit's group protocol on Redis hashes, one
      owner per partition, evicted after ``redis.session.timeout.ms`` without a
      heartbeat); a commit stores, per partition, the next offset to read, and only what
      the consumer committed: a member that takes over a partition starts from it.
      Idle consumers wait in ``XREAD BLOCK``, woken by the first new record.
    * Send acknowledgements mean "the server applied it"; ``persistent`` is declared
      from the server's settings (append-only file on), read once per transport.
    * Headers, null keys and tombstones kept (:mod:`omconnect_redis.codec`); the
      columnar ``send_batch``/``poll_batch`` go from Arrow columns to the script's
      arguments and from ``XRANGE`` replies to columns, with no message per record.
    * A key/value store per namespace on a hash (``<prefix>kv:<namespace>``).
    * redis-py exceptions never escape: they become omconnect errors
      (:mod:`omconnect_redis.errors`).

Connection:
    ``redis.url`` (``redis://[user:password@]host:6379/0``, ``rediss://`` for TLS,
    ``unix://``), ``redis.password``. Every command is bounded by
    ``redis.operation.timeout.ms``; a server that is down gives a retriable error at
    once. One server (or a primary behind one address: a managed service, a proxy): not
    Redis Cluster, where one script cannot span the keys of several hash slots.

Options (written ``redis.<key>`` in a worker config):
    * ``url`` (``redis://127.0.0.1:6379/0``), ``password`` (none), ``key.prefix``
      (``omc:``), ``operation.timeout.ms`` (10000), ``connection.timeout.ms`` (5000),
      ``max.length`` (0: keep everything).
    * The log-transport options: ``default.partitions`` (1), ``max.message.bytes``
      (1048576), ``max.pending.records`` (100000), ``send.timeout.ms`` (30000),
      ``session.timeout.ms`` (10000), ``heartbeat.interval.ms`` (500),
      ``max.poll.interval.ms`` (300000), ``group.assignment`` (``range``),
      ``poll.interval.ms`` (100: here, the longest an idle consumer blocks before it
      looks at ``wakeup``).

This package imports redis-py only when a transport is created.
"""

from omconnect_redis.transport import RedisTransport

__all__ = ["RedisTransport"]
