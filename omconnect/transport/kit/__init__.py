"""The driver kit: what the built-in transports share, for transport authors too.

* :mod:`~omconnect.transport.kit.checks`: argument checks every transport makes the
  same way (topic names, batch sizes, unknown options), and the errors they raise;
* :mod:`~omconnect.transport.kit.partitioning`: the default partitioner (murmur2 of the
  key, as Kafka's), shared so that a key lands on the same partition everywhere;
* :mod:`~omconnect.transport.kit.grouping`: a consumer-group protocol over a shared
  table (members, heartbeats, assignment), for stores without groups of their own;
* :mod:`~omconnect.transport.kit.log_consumer`: a complete :class:`~omconnect.transport.
  Consumer` over a partitioned log that a transport reads by range.

The embedded and memory transports are built from these pieces; see
``docs/writing-a-transport.md``.
"""
