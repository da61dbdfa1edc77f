"""The ``rabbitmq`` transport: omconnect topics on RabbitMQ, through pika.

Features:
    * Topics with partitions on direct exchanges; a keyed message goes to Kafka's
      partition for its key (murmur2, :mod:`omconnect.transport.kit.partitioning`), routed by
      the partition number, so order per key holds. Topics are created by the admin, a
      first send or a first subscribe (``rabbitmq.default.partitions``); creation is
      create-if-absent and atomic across processes (:mod:`omconnect_rabbitmq.admin`).
    * Two kinds of topic (the mapping is drawn in :mod:`omconnect_rabbitmq.topology`):
      *stream* (the default, ``rabbitmq.streams=true``): a stream queue per partition
      with the broker's offsets; a new group reads from the first message kept; replay,
      ``seek``, ``assign``, ``offset_range``; groups' positions live in the key/value
      store. *classic* (``rabbitmq.streams=false``): a durable classic queue per (group,
      topic, partition); every group receives every message published after its queues
      exist; a commit acknowledges deliveries, and whatever is not acknowledged is
      delivered again; a message no queue takes is not acknowledged (``mandatory``).
    * Publisher confirms as acknowledgements (asynchronous, on the producer's I/O thread):
      a send's future completes once the broker has written every message of the batch
      (persistent messages, durable queues: they survive a broker restart).
    * Consumer groups sharing partitions with rebalance callbacks (range or round-robin),
      members announcing themselves on a fanout exchange and each partition held through an
      exclusive consumer on a lock queue (:mod:`omconnect_rabbitmq.groups`).
    * Prefetch (``basic.qos``) as flow control; pause/resume; ``wakeup``.
    * Reconnection with exponential backoff after a lost connection; unacknowledged
      deliveries come back, so delivery is at-least-once.
    * A key/value store on a stream per namespace (last write wins, survives broker and
      process restarts; :mod:`omconnect_rabbitmq.kv_store`).
    * Capabilities are per transport: ``replayable`` and
      ``new_subscriber_receives_old_messages`` are true with ``rabbitmq.streams=true`` (the
      default: every topic a stream).

Connection:
    ``rabbitmq.url`` is an AMQP URL naming the vhost
    (``amqp://user:password@host:5672/vhost``, the vhost percent-encoded, ``%2F`` for
    ``/``; ``amqps://`` with the ``rabbitmq.tls.*`` options for TLS). Every producer,
    consumer and key/value store has a connection of its own, driven by an I/O thread of its
    own (pika connections are not thread-safe); the transport shares one more for topic
    administration and the catalog. An unreachable broker fails with a
    :class:`~omconnect.errors.TransportTimeoutError` (or a retriable error, when the port
    refuses) within ``rabbitmq.connection.timeout.ms``; wrong credentials fail with a
    :class:`~omconnect.errors.TransportError` naming the user and vhost and quoting the
    broker.

Options (written ``rabbitmq.<key>`` in a worker config):
    * ``url`` (``amqp://guest:guest@127.0.0.1:5672/%2F``): broker and vhost (a secret).
    * ``connection.timeout.ms`` (10000): connecting and each broker round trip.
    * ``reconnect.backoff.ms`` (100) / ``reconnect.backoff.max.ms`` (5000): reconnection.
    * ``heartbeat.s`` (the broker's): AMQP heartbeat.
    * ``tls.ca.file``, ``tls.cert.file``, ``tls.key.file``, ``tls.verify`` (true),
      ``tls.server.name``: TLS for ``amqps://`` URLs.
    * ``default.partitions`` (1): partitions of a topic created implicitly.
    * ``max.message.bytes`` (8388608): largest message (key + value + headers).
    * ``streams`` (true): every topic a stream (false: classic queues per group).
    * ``stream.topics`` (empty): topics that are streams anyway.
    * ``declare.groups`` (empty): groups whose queues are declared with every classic topic.
    * ``prefetch`` (1000): messages per partition the broker pushes ahead of polls.
    * ``session.timeout.ms`` (10000), ``heartbeat.interval.ms`` (1000),
      ``group.assignment`` (``range``): consumer groups.

    Native options (``producer.*`` / ``consumer.*`` in a worker config) set pika connection
    parameters: ``channel_max``, ``frame_max``, ``heartbeat``, ``client_properties``, ...

pika is imported only when a connection opens; this package imports without it.
"""

from omconnect_rabbitmq.transport import RabbitMQTransport

__all__ = ["RabbitMQTransport"]
