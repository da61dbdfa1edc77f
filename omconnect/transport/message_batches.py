"""Between :class:`~omconnect.transport.messages.Message` lists and Arrow batches.

The transports whose client takes or gives one message at a time derive their columnar
calls from these (the SPI's default ``send_batch`` and ``poll_batch`` do); the runtime
uses them where a batch falls back to the per-record path. Needs pyarrow (the
``columnar`` extra).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import repeat
from operator import attrgetter

from omconnect.plugins import require

require("pyarrow", plugin="the columnar path", extra="columnar")

import pyarrow as pa  # noqa: E402

from omconnect.columnar.columns import (  # noqa: E402
    HEADERS,
    KEY,
    OFFSET,
    PARTITION,
    TIMESTAMP,
    TOPIC,
    VALUE,
    consumed_batch,
    empty_consumed_batch,
    wire_headers,
)
from omconnect.transport.messages import Message, build_message  # noqa: E402

__all__ = ["batch_to_messages", "messages_to_batch"]

_FIELDS = attrgetter("topic", "partition", "offset", "timestamp", "key", "value", "headers")


def messages_to_batch(messages: Sequence[Message]) -> pa.RecordBatch:
    """A consumed batch (:func:`~omconnect.columnar.columns.consumed_schema`) of
    ``messages``, which must have partition and offset set.
    """
    if not messages:
        return empty_consumed_batch()
    return consumed_batch(*zip(*map(_FIELDS, messages), strict=True))


def batch_to_messages(topic: str | None, batch: pa.RecordBatch) -> list[Message]:
    """The messages of a sent (``topic`` given) or consumed (``topic`` ``None``) batch."""
    rows = batch.num_rows
    names = batch.schema.names

    def column(name: str) -> list[object]:
        if name not in names:
            return [None] * rows
        return batch.column(name).to_pylist()  # type: ignore[no-any-return]

    topics = repeat(topic, rows) if topic is not None else column(TOPIC)
    headers = wire_headers(batch.column(HEADERS) if HEADERS in names else None, rows)
    return list(map(build_message, topics, _as_bytes(column(KEY)), _as_bytes(column(VALUE)),
                    headers, column(TIMESTAMP), column(PARTITION),
                    column(OFFSET)))


def _as_bytes(values: list[object]) -> list[bytes | None]:
    """Binary columns read as ``bytes``; string columns (a sender's choice) as UTF-8."""
    return [v.encode() if isinstance(v, str) else v for v in values]  # type: ignore[misc]
