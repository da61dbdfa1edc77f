"""The Transport SPI, opening a configured transport (:mod:`~omconnect.transport.opening`),
the driver kit (:mod:`~omconnect.transport.kit`) and the in-core transports
(:mod:`~omconnect.transport.embedded`, :mod:`~omconnect.transport.memory`).
"""

from omconnect.transport.capabilities import Capabilities
from omconnect.transport.messages import Message, TopicSpec, WireHeaders
from omconnect.transport.opening import (
    TransportSelection,
    open_transport,
    select_transport,
    transport_config_errors,
)
from omconnect.transport.spi import (
    Admin,
    Consumer,
    KeyValueStore,
    Producer,
    RebalanceListener,
    StartFrom,
    Transport,
)

__all__ = [
    "Admin",
    "Capabilities",
    "Consumer",
    "KeyValueStore",
    "Message",
    "Producer",
    "RebalanceListener",
    "StartFrom",
    "TopicSpec",
    "Transport",
    "TransportSelection",
    "WireHeaders",
    "open_transport",
    "select_transport",
    "transport_config_errors",
]
