"""The omconnect conformance kit: transport and connector suites for pytest.

Run the transport suite against any installed transport::

    pytest --omconnect-transport embedded [--omconnect-transport-config FILE]

or subclass :class:`TransportConformance` and provide a ``transport_factory`` fixture.
Connector authors use :class:`ConnectorConformance` (or ``--omconnect-connector``) and
:class:`ConnectorHarness`. See ``docs/conformance.md``.
"""

from omconnect.testing.connector import ConnectorConformance, ConnectorHooks
from omconnect.testing.harness import ConnectorHarness, DictOffsetStore
from omconnect.testing.profile import (
    BrokerControl,
    CommandBrokerControl,
    TransportFactory,
    TransportProfile,
    UnreachableBroker,
)
from omconnect.testing.transport import Kit, TransportConformance

__all__ = [
    "BrokerControl",
    "CommandBrokerControl",
    "ConnectorConformance",
    "ConnectorHarness",
    "ConnectorHooks",
    "DictOffsetStore",
    "Kit",
    "TransportConformance",
    "TransportFactory",
    "TransportProfile",
    "UnreachableBroker",
]
