"""The ``embedded`` transport (the default): a durable partitioned log on SQLite.

It is the kit's log transport (:mod:`omconnect.transport.kit.log_transport`) on SQLite
storage primitives (:mod:`omconnect.transport.embedded.store`): producers, consumers,
groups, the key/value store and the admin are the kit's, as for any transport built on it.

Features:
    * Topics with partitions, created on first send (``embedded.default.partitions``) or
      through the admin. A keyed message goes to Kafka's partition for its key (murmur2,
      :mod:`omconnect.transport.kit.partitioning`), so order per key holds.
    * Durable acknowledgements: a send's future resolves only after the transaction
      holding its batch committed; with ``embedded.synchronous=full`` (the default) the
      WAL was fsync'ed too. An acknowledged record survives ``kill -9`` of any process,
      and with ``full`` a power loss.
    * Consumer groups shared by every process using the directory: committed positions,
      partitions shared among the group's consumers with rebalance callbacks, a member
      that dies evicted after ``embedded.session.timeout.ms`` (the kit's groups,
      :mod:`omconnect.transport.kit.grouping`, in the database's tables).
    * Replay: messages are kept until their topic is deleted (no retention); ``assign``,
      ``seek`` and ``offset_range`` work on every partition; a new group starts from the
      oldest message (or the newest with ``start="latest"``).
    * Pause/resume, headers, ``wakeup``, a key/value store (last write wins, survives
      restarts), an admin.

Connection:
    ``embedded.path`` names a directory on a *local* filesystem (WAL mode needs shared
    memory between processes, which network filesystems do not give); it holds
    ``omconnect.db`` and SQLite's ``-wal``/``-shm`` files. Every process that opens the
    same directory shares the same topics, groups and stores. Writes from several
    processes are serialised by SQLite's lock (``BEGIN IMMEDIATE``, waiting up to
    ``embedded.busy.timeout.ms``); readers never wait.

Options (written ``embedded.<key>`` in a worker config):
    * ``path`` (``./omconnect-data``): the data directory.
    * ``default.partitions`` (1): partitions of a topic created by its first send.
    * ``max.message.bytes`` (8388608): largest message, key + value + headers.
    * ``synchronous`` (``full``): ``full`` or ``normal`` (see Features).
    * ``busy.timeout.ms`` (30000): how long a write waits for another process's.
    * ``max.pending.records`` (100000): queued records beyond which ``send`` blocks.
    * ``session.timeout.ms`` (10000): silence after which a group member is evicted.
    * ``heartbeat.interval.ms`` (1000): how often members heartbeat and rebalance.
    * ``max.poll.interval.ms`` (300000): a member that stops polling this long stops
      heart-beating.
    * ``poll.interval.ms`` (20): how often an idle poll looks for other processes'
      writes.
    * ``group.assignment`` (``range``): ``range`` or ``roundrobin``.
"""

from omconnect.transport.embedded.transport import EmbeddedTransport

__all__ = ["EmbeddedTransport"]
