"""How topics, partitions and groups map onto RabbitMQ exchanges and queues.

::

    producer ── publish(routing key = partition) ──▶ exchange omc.t.<topic> (direct, durable)
        partition = murmur2(key) mod N (Kafka's default partitioner; key-less batches stick
        to one partition), or the partition the message names
                                                       │
             ┌─────────────────────────────────────────┼──────────────────────────┐
             │ classic topic (bound per group)         │ stream topic (bound once) │
             ▼                                         ▼                           │
      omc.q.<group>.<topic>.<p>   one durable    omc.s.<topic>.<p>  one stream     │
      classic queue per (group, topic,           queue per partition, shared by    │
      partition), bound with routing key "<p>"   every group; each group reads it  │
      → every group gets every message,          at its own offset                 │
        order per partition holds                                                  │
             │                                         │                           │
             ▼                                         ▼                           │
      one member of the group consumes it at a time: the member holding the group's
      lock queue omc.l.<group>.<topic>.<p> (an exclusive consumer on it; the broker
      refuses a second one and frees it when the holder's connection dies)

* **Topics** are direct exchanges ``omc.t.<topic>``. Their partition count (and whether
  they are streams) lives in the topic catalog, the key/value store ``__omconnect.topics``
  (an exchange's arguments cannot be read back over AMQP 0-9-1).
* **Partitions** are routing keys ``"0"`` to ``"N-1"``.
* **Groups** (classic topics): a durable classic queue per (group, topic, partition), declared
  when a consumer of the group subscribes (and, for the groups named in
  ``rabbitmq.declare.groups``, when the topic is created). A group only receives what was
  published after its queues exist. Committing acknowledges (``basic.ack``) deliveries; what
  is not acknowledged when the consumer's channel closes is delivered again.
* **Streams** (replayable topics): a stream queue per partition; offsets are the broker's
  (``x-stream-offset``); consumer positions are committed to the key/value store
  ``__omconnect.positions``.
* **Group membership**: members announce themselves (id, topics, partitions held) every
  heartbeat interval on the fanout exchange ``omc.g.<group>``; every member computes the same
  assignment (range or round-robin); a partition is read only by the member holding its lock
  queue.
* **Key/value stores** are stream queues ``omc.kv.<namespace>``.

Names longer than RabbitMQ's 255-byte limit are shortened: their tail is replaced by a hash
of the full name, so distinct names stay distinct.
"""

from __future__ import annotations

import hashlib

__all__ = [
    "CATALOG_NAMESPACE",
    "POSITIONS_NAMESPACE",
    "group_exchange",
    "group_queue",
    "kv_queue",
    "lock_queue",
    "routing_key",
    "stream_queue",
    "topic_exchange",
]

CATALOG_NAMESPACE = "__omconnect.topics"
"""The key/value store that holds every topic's partition count and kind."""

POSITIONS_NAMESPACE = "__omconnect.positions"
"""The key/value store that holds groups' committed positions on stream topics."""

_MAX_NAME = 255
LOCK_EXPIRES_MS = 600_000
"""An unused lock queue is deleted by the broker after this long (``x-expires``)."""


def _name(*parts: str) -> str:
    name = ".".join(parts)
    encoded = name.encode()
    if len(encoded) <= _MAX_NAME:
        return name
    digest = hashlib.sha256(encoded).hexdigest()[:32]
    head = encoded[: _MAX_NAME - len(digest) - 1].decode(errors="ignore")
    return f"{head}~{digest}"


def topic_exchange(topic: str) -> str:
    """The exchange a topic's messages are published to."""
    return _name("omc.t", topic)


def routing_key(partition: int) -> str:
    """The routing key of a partition."""
    return str(partition)


def group_queue(group: str, topic: str, partition: int) -> str:
    """The classic queue holding one group's messages of one partition."""
    return _name("omc.q", group, topic, str(partition))


def stream_queue(topic: str, partition: int) -> str:
    """The stream queue holding one partition of a stream topic."""
    return _name("omc.s", topic, str(partition))


def lock_queue(group: str, topic: str, partition: int) -> str:
    """The queue whose exclusive consumer is the group member reading the partition."""
    return _name("omc.l", group, topic, str(partition))


def group_exchange(group: str) -> str:
    """The fanout exchange a group's members announce themselves on."""
    return _name("omc.g", group)


def kv_queue(namespace: str) -> str:
    """The stream queue of a key/value store namespace."""
    return _name("omc.kv", namespace)


STREAM_ARGUMENTS = {"x-queue-type": "stream"}
"""Arguments of every stream queue the transport declares."""

LOCK_ARGUMENTS = {"x-expires": LOCK_EXPIRES_MS}
"""Arguments of every lock queue."""
