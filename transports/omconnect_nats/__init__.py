"""The ``nats`` transport: omconnect topics on NATS JetStream, through nats-py.

Features:
    * **A stream per partition.** Partition ``p`` of topic ``t`` is the JetStream stream
      ``<prefix>_t_p`` on the subject ``<prefix>.t.p`` (file storage, limits retention;
      :mod:`omconnect_nats.topics`, names in :mod:`omconnect_nats.naming`). A stream's
      sequence numbers are dense and stable, so a partition's offset is its stream
      sequence minus one: replayable (``assign``, ``seek``, ``offset_range``), and a new
      group reads from the first message kept. Where the stream's limits
      (``retention.ms``, ``retention.bytes`` of the topic's config) or a delete removed
      messages, offsets have gaps; readers step over them and ``offset_range`` starts
      at the first sequence kept. Keyed messages go to Kafka's partition for their key
      (murmur2), so order per key holds; topics are created on first use, or by the
      admin, create-if-absent across processes (a catalog bucket entry written with
      compare-and-set).
    * **Publish acknowledgements are the send's acknowledgement.** ``send`` publishes
      every message of a batch without waiting, each with a reply subject; the server's
      PubAck says the message is stored and gives its sequence, so each
      :class:`~omconnect.records.RecordMetadata` carries the offset the consumer will
      see. A batch's future resolves once every PubAck arrived, or fails with a
      :class:`~omconnect.errors.SendError` saying which messages were stored
      (:mod:`omconnect_nats.producer`). ``send_batch`` publishes Arrow rows straight
      from their columns.
    * **Readers are pull consumers.** Each partition a consumer reads is an ephemeral,
      unacknowledged pull consumer created at the consumer's position, with one pull
      request outstanding, so messages stream into a bounded buffer ahead of the polls
      and an idle poll is woken by the server, not by a timer
      (:mod:`omconnect_nats.pulling`, :mod:`omconnect_nats.consumer`).
    * **Consumer groups** share partitions with the kit's group protocol (range or
      round-robin, rebalance callbacks, a heartbeat thread, hand-over when a member
      leaves or its process dies), its state one document per group in a key/value
      bucket updated with compare-and-set (:mod:`omconnect_nats.groups`). A commit is the
      group's position, written to the bucket ``<prefix>-positions`` and acknowledged
      by the server before ``commit`` returns; nothing else counts as committed.
    * Pause/resume, ``wakeup``, headers (as NATS headers where they fit, exactly always:
      :mod:`omconnect_nats.codec`), tombstones.
    * **A key/value store per namespace on a JetStream key/value bucket**
      (``<prefix>-kv-<namespace>``, keys encoded to the bucket's charset;
      :mod:`omconnect_nats.kv_store`).
    * One connection per transport, driven by an event loop on a daemon thread of its
      own (nats-py is asyncio-only; :mod:`omconnect_nats.client`); reconnects for as
      long as the transport is open. Client exceptions never escape: they become
      omconnect errors (:mod:`omconnect_nats.errors`).

Connection:
    ``nats.servers`` (``nats://127.0.0.1:4222``; several, comma-separated, for a
    cluster) with JetStream enabled (``nats-server -js``). Credentials: ``nats.user`` +
    ``nats.password``, ``nats.token`` or ``nats.creds.file``; TLS with ``nats.tls.*``
    or ``tls://`` URLs. Every server round trip is bounded by ``nats.request.timeout.ms``
    (plus ``nats.connection.timeout.ms`` while connecting): an unreachable server gives
    a :class:`~omconnect.errors.TransportTimeoutError`, never a hang.

Options (written ``nats.<key>`` in a worker config):
    * ``servers``, ``connection.timeout.ms`` (5000), ``request.timeout.ms`` (10000),
      ``reconnect.wait.ms`` (500), ``prefix`` (``omc``).
    * ``user``, ``password``, ``token``, ``creds.file``, ``tls.ca.file``,
      ``tls.cert.file``, ``tls.key.file``.
    * ``storage`` (``file``; ``memory`` makes the transport non-persistent),
      ``replicas`` (1), ``default.partitions`` (1).
    * ``max.message.bytes`` (1000000), ``send.timeout.ms`` (30000),
      ``max.pending.messages`` (20000).
    * ``fetch.max.messages`` (1000), ``fetch.wait.ms`` (5000),
      ``reader.inactive.threshold.ms`` (300000).
    * ``session.timeout.ms`` (10000), ``heartbeat.interval.ms`` (500),
      ``max.poll.interval.ms`` (300000), ``group.assignment`` (``range``).
    * ``client.*``: keyword arguments of ``nats.connect``, passed through.

This package imports nats-py only when a transport is created.
"""

from omconnect_nats.transport import NatsTransport

__all__ = ["NatsTransport"]
