"""Capabilities: what a transport can do, as data the runtime and conformance suite read."""

from __future__ import annotations

import attrs

__all__ = ["Capabilities"]


@attrs.frozen(slots=True, kw_only=True)
class Capabilities:
    """What a transport offers. Each flag decides which conformance cases apply to it.

    Nothing is claimed by default: every flag is false and ``max_partitions`` is 1, so a
    transport that forgets a flag under-claims (the suite skips the cases it gates, naming
    the flag) rather than claiming what it may not do.

    Attributes:
        ordered_per_key: Messages with equal keys are consumed in the order sent.
        consumer_groups: Consumers of one group share the partitions; each group receives
            every message.
        replayable: Offsets are stable, so a consumer can ``assign``/``seek`` and read a
            range again (needed for exactly-once reads).
        persistent: Acknowledged messages and committed positions survive a restart of the
            broker (or of the process, for in-process transports).
        new_subscriber_receives_old_messages: A new group starts from the earliest message
            still kept, not only from messages sent after it subscribed.
        transactions: Sends and commits can be made atomic.
        pause: Consumers can pause and resume single partitions.
        cross_process: Several processes can share the transport (false for in-memory).
        headers: Message headers are carried.
        max_message_bytes: The largest message accepted (key + value + headers), or
            ``None`` when there is no fixed limit.
        max_partitions: The most partitions a topic can have (1 when partitions are not
            supported).

    """

    ordered_per_key: bool = False
    consumer_groups: bool = False
    replayable: bool = False
    persistent: bool = False
    new_subscriber_receives_old_messages: bool = False
    transactions: bool = False
    pause: bool = False
    cross_process: bool = False
    headers: bool = False
    max_message_bytes: int | None = None
    max_partitions: int = 1

    def missing(self, **required: bool) -> list[str]:
        """The names among ``required`` (flag=True) that this transport lacks."""
        return [name for name, wanted in required.items() if wanted and not getattr(self, name)]
