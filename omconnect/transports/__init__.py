"""Moved: the built-in transports and the driver kit live in :mod:`omconnect.transport`,
beside the Transport SPI they implement.

==========================================  =============================================
old name                                    new name
==========================================  =============================================
``omconnect.transports.memory``             :mod:`omconnect.transport.memory`
``omconnect.transports.embedded``           :mod:`omconnect.transport.embedded`
``omconnect.transports.checks``             :mod:`omconnect.transport.kit.checks`
``omconnect.transports.grouping``           :mod:`omconnect.transport.kit.grouping`
``omconnect.transports.logconsumer``        :mod:`omconnect.transport.kit.log_consumer`
``omconnect.transports.partitioning``       :mod:`omconnect.transport.kit.partitioning`
==========================================  =============================================

The old names keep working (with a deprecation warning): importing one gives the module
at its new name.
"""

from omconnect.module_aliases import alias_modules

MOVES = {
    "omconnect.transports.memory": "omconnect.transport.memory",
    "omconnect.transports.embedded": "omconnect.transport.embedded",
    "omconnect.transports.checks": "omconnect.transport.kit.checks",
    "omconnect.transports.grouping": "omconnect.transport.kit.grouping",
    "omconnect.transports.logconsumer": "omconnect.transport.kit.log_consumer",
    "omconnect.transports.partitioning": "omconnect.transport.kit.partitioning",
}
"""Old module name → new module name."""

alias_modules(MOVES)
