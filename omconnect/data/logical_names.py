"""The names of the logical types (Kafka Connect's, so that wire formats stay
compatible): the lowest layer of the data model, shared by schemas, validation and
:mod:`omconnect.data.logical`.
"""

from __future__ import annotations

__all__ = ["DATE", "DECIMAL", "LOGICAL_NAMES", "SCALE", "TIME", "TIMESTAMP"]

DECIMAL = "org.apache.kafka.connect.data.Decimal"
"""A decimal number: BYTES, the unscaled integer, with the scale in :data:`SCALE`."""
DATE = "org.apache.kafka.connect.data.Date"
"""A date: INT32, days since the Unix epoch."""
TIME = "org.apache.kafka.connect.data.Time"
"""A time of day: INT32, milliseconds since midnight."""
TIMESTAMP = "org.apache.kafka.connect.data.Timestamp"
"""An instant: INT64, milliseconds since the Unix epoch."""
SCALE = "scale"
"""The schema parameter holding a Decimal's scale."""
LOGICAL_NAMES = frozenset({DECIMAL, DATE, TIME, TIMESTAMP})
"""Every logical type's name."""
