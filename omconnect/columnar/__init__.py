"""The columnar path: records as Arrow record batches, beside the per-record path.

A source task may return a :class:`SourceBatch` from ``poll_batch()`` (one Arrow
``RecordBatch`` of keys and values, with one source partition and the source offset
reached after it); a sink task may take an Arrow batch in ``put_batch()``. Transports
send and poll the same columns (``Producer.send_batch``, ``Consumer.poll_batch``). When
the converters can work on whole columns and no transform is configured, the runtime
moves a batch from poll to send and from poll to put without making a Python object per
record; otherwise it converts the batch to records and back, so a per-record task and a
batch task can sit on either side of a pipeline. The column names and types are in
:mod:`omconnect.columnar.columns`; ``specs/connector.md`` (CONNECTOR-30 to 36) and
``specs/transport.md`` (TRANSPORT-70 to 73) state the rules.

Needs pyarrow (the ``columnar`` extra): ``pip install 'omconnect[columnar]'``.
"""

from __future__ import annotations

from omconnect.plugins import require

require("pyarrow", plugin="the columnar path", extra="columnar")
require("numpy", plugin="the columnar path", extra="columnar")

from omconnect.columnar.columns import (  # noqa: E402
    HEADERS,
    KEY,
    OFFSET,
    PARTITION,
    TIMESTAMP,
    TOPIC,
    VALUE,
    WIRE_HEADERS_TYPE,
    consumed_schema,
    empty_consumed_batch,
)
from omconnect.columnar.metadata import BatchMetadata  # noqa: E402
from omconnect.columnar.records import (  # noqa: E402
    sink_records_to_batch,
    source_batch_to_records,
)
from omconnect.columnar.source_batch import SourceBatch  # noqa: E402

__all__ = [
    "HEADERS",
    "KEY",
    "OFFSET",
    "PARTITION",
    "TIMESTAMP",
    "TOPIC",
    "VALUE",
    "WIRE_HEADERS_TYPE",
    "BatchMetadata",
    "SourceBatch",
    "consumed_schema",
    "empty_consumed_batch",
    "sink_records_to_batch",
    "source_batch_to_records",
]
