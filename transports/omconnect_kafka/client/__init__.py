"""Client-library drivers of the Kafka transport (``kafka.client.driver``).

* ``confluent`` (extra ``confluent``): confluent-kafka on librdkafka; several times the
  throughput per core (a 100,000-row table copy with ~1.6 KB JSON records: 31 s against
  128 s with kafka-python).
* ``kafka-python`` (extra ``kafka``): pure Python, no native code.
* ``auto`` (the default): ``confluent`` when confluent-kafka is installed, else
  ``kafka-python``; the transport logs which one it chose.

:func:`load_driver` imports a driver module only when it is chosen; the driver imports
its client library only when it is constructed.
"""

from __future__ import annotations

import importlib
import importlib.util

from omconnect.errors import ConfigError
from omconnect_kafka.client.base import (
    AdminClient,
    BatchAck,
    ClientSettings,
    ConsumerClient,
    Driver,
    ProducerClient,
)

__all__ = [
    "AUTO",
    "DRIVERS",
    "AdminClient",
    "BatchAck",
    "ClientSettings",
    "ConsumerClient",
    "Driver",
    "ProducerClient",
    "load_driver",
    "resolve_driver_name",
]

DRIVERS = {
    "kafka-python": "omconnect_kafka.client.kafka_python:KafkaPythonDriver",
    "confluent": "omconnect_kafka.client.confluent:ConfluentDriver",
}
"""Driver name -> ``module:Class``."""

AUTO = "auto"
"""The ``kafka.client.driver`` that picks the fastest installed driver."""


def resolve_driver_name(name: str) -> str:
    """``name``, or for :data:`AUTO` the driver to use: ``confluent`` when confluent-kafka
    is installed, else ``kafka-python``.
    """
    if name != AUTO:
        return name
    return "confluent" if importlib.util.find_spec("confluent_kafka") is not None \
        else "kafka-python"


def load_driver(name: str, settings: ClientSettings) -> Driver:
    """The driver called ``name``, built for ``settings``.

    Raises:
        ConfigError: ``name`` is not a driver (naming ``kafka.client.driver``), or a
            native option is unknown to the client library.
        MissingExtraError: The driver's client library is not installed.

    """
    path = DRIVERS.get(resolve_driver_name(name))
    if path is None:
        raise ConfigError(f"unknown Kafka client driver {name!r}; choose one of "
                          f"{', '.join(sorted([*DRIVERS, AUTO]))}",
                          key="kafka.client.driver")
    module_name, _, class_name = path.partition(":")
    driver_class: type[Driver] = getattr(importlib.import_module(module_name), class_name)
    return driver_class(settings)
