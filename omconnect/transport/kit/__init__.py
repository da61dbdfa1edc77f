"""The driver kit: what the built-in transports share, for transport authors too.

* :mod:`~omconnect.transport.kit.checks`: argument checks every transport makes the
  same way (topic names, batch sizes, unknown options), and the errors they raise;
* :mod:`~omconnect.transport.kit.partitioning`: the default partitioner (murmur2 of the
  key, as Kafka's), shared so that a key lands on the same partition everywhere;
* :mod:`~omconnect.transport.kit.grouping`: a consumer-group protocol over a shared
  table (members, heartbeats, assignment), for stores without groups of their own;
* :mod:`~omconnect.transport.kit.sql_groups`: that protocol's state in a SQL database;
* :mod:`~omconnect.transport.kit.log_consumer`: a complete :class:`~omconnect.transport.
  Consumer` over a partitioned log that a transport reads by range;
* :mod:`~omconnect.transport.kit.log_kv_store`: a key/value store kept as a log of writes;
* :mod:`~omconnect.transport.kit.log_store` and :mod:`~omconnect.transport.kit.
  log_transport`: the log-transport base, a whole transport derived from a few storage
  primitives (``examples/sqlite_transport`` and the embedded transport are two), with
  its writer thread (:mod:`~omconnect.transport.kit.log_writer`), the columnar send's
  placement (:mod:`~omconnect.transport.kit.column_runs`) and the consumers' heartbeat
  (:mod:`~omconnect.transport.kit.heartbeat`);
* :mod:`~omconnect.transport.kit.clock`: the wall clock in milliseconds.

The in-core transports are built from these pieces; see ``docs/writing-a-transport.md``.
"""
