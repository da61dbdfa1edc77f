"""Client-library drivers of the Kafka transport (``kafka.client.driver``).

* ``kafka-python`` (the default, extra ``kafka``): pure Python, no native code.
* ``confluent`` (extra ``confluent``): confluent-kafka on librdkafka; several times the
  throughput per core.

:func:`load_driver` imports a driver module only when it is chosen; the driver imports
its client library only when it is constructed.
"""

from __future__ import annotations

import importlib

from omconnect.errors import ConfigError
from omconnect_kafka.drivers.base import (
    AdminClient,
    BatchAck,
    ClientSettings,
    ConsumerClient,
    Driver,
    ProducerClient,
)

__all__ = [
    "DRIVERS",
    "AdminClient",
    "BatchAck",
    "ClientSettings",
    "ConsumerClient",
    "Driver",
    "ProducerClient",
    "load_driver",
]

DRIVERS = {
    "kafka-python": "omconnect_kafka.drivers.kafka_python:KafkaPythonDriver",
    "confluent": "omconnect_kafka.drivers.confluent:ConfluentDriver",
}
"""Driver name -> ``module:Class``."""


def load_driver(name: str, settings: ClientSettings) -> Driver:
    """The driver called ``name``, built for ``settings``.

    Raises:
        ConfigError: ``name`` is not a driver (naming ``kafka.client.driver``), or a
            native option is unknown to the client library.
        MissingExtraError: The driver's client library is not installed.

    """
    path = DRIVERS.get(name)
    if path is None:
        raise ConfigError(f"unknown Kafka client driver {name!r}; choose one of "
                          f"{', '.join(sorted(DRIVERS))}", key="kafka.client.driver")
    module_name, _, class_name = path.partition(":")
    driver_class: type[Driver] = getattr(importlib.import_module(module_name), class_name)
    return driver_class(settings)
