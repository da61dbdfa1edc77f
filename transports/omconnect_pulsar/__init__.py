"""The ``pulsar`` transport: Apache Pulsar through pulsar-client.

Features:
    * Persistent topics (``persistent://<tenant>/<namespace>/<topic>``) and partitioned
      topics. Keyed messages carry their key as Pulsar's partition key, so equal keys
      land in one partition; a message that names a partition goes to that partition.
    * Batch-first producing: ``send(batch)`` hands every message to ``send_async`` and
      returns one future for the batch's acknowledgements. Producers block when their
      queue is full (``block_if_queue_full``), so a send never fails for lack of room.
    * Groups are subscriptions: ``Failover`` (default; order per key, one active
      consumer per partition), ``Shared`` (more throughput, no order) or ``Key_Shared``
      (``pulsar.subscription.type``); the capabilities follow the choice. Every group
      gets every message; a new group starts at the earliest (or latest) message.
    * Commits are acknowledgements: cumulative where the subscription type allows it,
      individual otherwise. Offsets are consumer-local sequence numbers per partition
      mapped to MessageIds (:mod:`omconnect_pulsar.consumer`); negative
      acknowledgement and seeking by MessageId or publish time are Pulsar-specific
      methods of the consumer.
    * Headers as message properties (binary values, repeated keys and order kept, see
      :mod:`omconnect_pulsar.codec`); null values are Pulsar tombstones.
    * A key/value store per namespace on a compaction-ready topic
      (:mod:`omconnect_pulsar.kv_store`); topic administration through the admin REST
      API or, without it, by producer creation (:mod:`omconnect_pulsar.admin`).
    * Client exceptions never escape: they become omconnect errors
      (:mod:`omconnect_pulsar.errors`).

Connection:
    ``pulsar.service.url`` (``pulsar://host:6650``, or ``pulsar+ssl://`` for TLS),
    optional ``pulsar.admin.url`` (``http://host:8080``). Authentication with
    ``pulsar.auth.token`` or ``pulsar.auth.plugin`` + ``pulsar.auth.params``; TLS
    settings pass through as ``pulsar.client.tls_*``. Every broker call is bounded by
    ``pulsar.operation.timeout.ms``: an unreachable broker gives a
    :class:`~omconnect.errors.TransportTimeoutError`, never a hang.

Options (written ``pulsar.<key>`` in a worker config):
    * ``service.url`` (``pulsar://127.0.0.1:6650``), ``tenant`` (``public``),
      ``namespace`` (``default``), ``admin.url`` (none), ``default.partitions`` (1).
    * ``operation.timeout.ms`` (30000), ``connection.timeout.ms`` (10000).
    * ``max.message.bytes`` (5242880), ``send.timeout.ms`` (30000),
      ``batching.enabled`` (true), ``batching.max.messages`` (1000),
      ``batching.max.bytes`` (131072), ``batching.max.publish.delay.ms`` (10),
      ``max.pending.messages`` (10000).
    * ``subscription.type`` (``Failover``), ``receiver.queue.size`` (1000).
    * ``auth.token``, ``auth.plugin``, ``auth.params``.
    * ``client.*``, ``producer.*``, ``consumer.*``, ``reader.*``: keyword arguments of
      ``pulsar.Client``, ``create_producer``, ``subscribe`` and ``create_reader``,
      passed through (typed from their defaults, unknown names rejected).

This package imports pulsar-client only when a transport is created.
"""

from omconnect_pulsar.transport import PulsarTransport

__all__ = ["PulsarTransport"]
