"""The Transport SPI and the helpers to open a configured transport."""

from omconnect.transport.capabilities import Capabilities
from omconnect.transport.messages import Message, TopicSpec, WireHeaders
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
    "WireHeaders",
]
