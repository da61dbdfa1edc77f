"""Filter: drop records.

Kafka Connect's ``org.apache.kafka.connect.transforms.Filter``. It drops every record it
applies to, so it is used with a predicate: ``transforms.drop.predicate=isTombstone``
drops the records the predicate holds for, and ``transforms.drop.negate=true`` keeps only
those.
"""

from __future__ import annotations

from typing import Any, TypeVar

from omconnect.records import ConnectRecord
from omconnect.transforms.base import Transformation

__all__ = ["Filter"]

R = TypeVar("R", bound=ConnectRecord)


class Filter(Transformation):
    """Drop every record this stage applies to (choose which with a predicate)."""

    def apply(self, record: R) -> R | None:
        """Nothing: the record is dropped."""
        return None

    def apply_columns(self, batch: Any, serialize_header: Any) -> Any:
        """Every row dropped."""
        import pyarrow as pa

        return batch, pa.repeat(pa.scalar(False), batch.num_rows)
