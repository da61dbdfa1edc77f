"""The ``kafka`` transport: Apache Kafka through kafka-python or confluent-kafka.

Features:
    * Topics and partitions; a topic is created on first use with
      ``kafka.default.partitions`` partitions (``kafka.auto.create.topics``).
    * Keyed messages go where Kafka's default partitioner puts them
      (``toPositive(murmur2(key)) % partitions``, :mod:`omconnect_kafka.partitioner`),
      with both drivers, so order per key holds and Java producers agree.
    * Batch-first producing: ``send(batch)`` returns one future that resolves when the
      broker acknowledged every message (``acks=all``); a message over the size limit
      is refused before anything of its batch is sent.
    * Consumer groups with rebalance callbacks, manual (synchronous) commits,
      ``committed``, ``assign``/``seek``/``offset_range`` for replay, pause/resume,
      ``wakeup``, headers (ordered, repeated names).
    * A key/value store per namespace on a compacted topic, read to its end when opened
      (as Kafka Connect keeps its offsets).
    * Swappable client drivers (``kafka.client.driver``): ``kafka-python`` (default,
      extra ``kafka``) or ``confluent`` (extra ``confluent``, librdkafka, several times
      faster). Client exceptions never escape: they become omconnect errors
      (:mod:`omconnect_kafka.errors`).

Connection:
    ``kafka.bootstrap.servers`` (``host:port[,host:port...]``). TLS and SASL with
    ``kafka.security.protocol``, ``kafka.ssl.*`` and ``kafka.sasl.*`` (librdkafka/Java
    names, translated for kafka-python). Reaching the cluster is bounded by
    ``kafka.connect.timeout.ms``: an unreachable broker gives a
    :class:`~omconnect.errors.TransportTimeoutError`, never a hang.

Options (written ``kafka.<key>`` in a worker config):
    * ``bootstrap.servers`` (``localhost:9092``), ``client.driver`` (``kafka-python``),
      ``client.id`` (``omconnect``).
    * ``default.partitions`` (1), ``auto.create.topics`` (true), ``kv.topic.prefix``
      (``omconnect-kv-``).
    * ``max.request.size`` (1048576), ``request.timeout.ms`` (30000),
      ``connect.timeout.ms`` (10000), ``delivery.timeout.ms`` (120000).
    * ``security.protocol``, ``ssl.ca.location``, ``ssl.certificate.location``,
      ``ssl.key.location``, ``ssl.key.password``, ``ssl.crl.location``,
      ``ssl.cipher.suites``, ``ssl.endpoint.identification.algorithm``,
      ``sasl.mechanism``, ``sasl.username``, ``sasl.password``.
    * ``producer.*``, ``consumer.*``, ``admin.*``: the native client's own settings,
      passed through (kafka-python: ``linger.ms`` or ``linger_ms``; confluent: librdkafka
      names), checked when the transport opens.

This package imports no client library; a driver imports its own when chosen.
"""

from omconnect_kafka.transport import KafkaTransport

__all__ = ["KafkaTransport"]
