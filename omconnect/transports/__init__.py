"""The transports that ship in core, and the pieces they share.

* :mod:`omconnect.transports.memory` — ``memory``: in-process, for tests and connector
  authors.
* :mod:`omconnect.transports.embedded` — ``embedded`` (the default): a durable local log
  on SQLite, shared by several processes of one machine.

Both store topics as partitioned logs and share the same partitioner
(:mod:`~omconnect.transports.partitioning`), consumer-group protocol
(:mod:`~omconnect.transports.grouping`) and consumer logic
(:mod:`~omconnect.transports.logconsumer`), so they behave alike; only where the log lives
differs. Load them by name through :func:`omconnect.plugins.load`.
"""
