"""The omconnect conformance suite: transport and connector suites for pytest.

Run the transport suite against any installed transport::

    pytest --omconnect-transport embedded [--omconnect-transport-config FILE]

or subclass :class:`TransportConformance` and provide a ``transport_factory`` fixture.
Connector authors use :class:`ConnectorConformance` (or ``--omconnect-connector``) and
:class:`ConnectorHarness`. See ``docs/conformance.md``.

The names below are imported on first use: the pytest plugin (``omconnect.testing.plugin``)
is loaded in every pytest run wherever omconnect is installed, and must not import the
suite unless it is asked to run.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from omconnect.testing.connector import ConnectorConformance, ConnectorHooks
    from omconnect.testing.error_translation import TranslationCase, check_error_translation
    from omconnect.testing.harness import ConnectorHarness, DictOffsetStore
    from omconnect.testing.profile import (
        BrokerControl,
        CommandBrokerControl,
        TransportFactory,
        TransportProfile,
        UnreachableBroker,
    )
    from omconnect.testing.transport import TransportConformance, TransportHarness

__all__ = [
    "BrokerControl",
    "CommandBrokerControl",
    "ConnectorConformance",
    "ConnectorHarness",
    "ConnectorHooks",
    "DictOffsetStore",
    "TranslationCase",
    "TransportConformance",
    "TransportFactory",
    "TransportHarness",
    "TransportProfile",
    "UnreachableBroker",
    "check_error_translation",
]

_HOMES = {
    "BrokerControl": "profile",
    "CommandBrokerControl": "profile",
    "TransportFactory": "profile",
    "TransportProfile": "profile",
    "UnreachableBroker": "profile",
    "ConnectorConformance": "connector",
    "ConnectorHooks": "connector",
    "ConnectorHarness": "harness",
    "DictOffsetStore": "harness",
    "TransportHarness": "transport",
    "TransportConformance": "transport",
    "TranslationCase": "error_translation",
    "check_error_translation": "error_translation",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'omconnect.testing' has no attribute {name!r}")
    return getattr(importlib.import_module(f"omconnect.testing.{home}"), name)
