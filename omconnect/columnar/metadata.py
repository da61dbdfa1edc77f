"""Where a transport stored the rows of a batch: one acknowledgement for the batch."""

from __future__ import annotations

from itertools import repeat

import attrs
import pyarrow as pa

from omconnect.records import RecordMetadata, build_record_metadata

__all__ = ["BatchMetadata"]


@attrs.frozen(slots=True)
class BatchMetadata:
    """The acknowledgement of a batch sent with ``Producer.send_batch``.

    Attributes:
        topic: The topic every row went to.
        partitions: The partition of each row (``int32``), in the batch's row order.
        offsets: The offset of each row (``int64``), or an all-null array when the
            transport does not report offsets.
        timestamps: The timestamp of each row (``int64``, ms), null where unknown.

    """

    topic: str
    partitions: pa.Array
    offsets: pa.Array
    timestamps: pa.Array

    def __len__(self) -> int:
        return len(self.partitions)

    def records(self) -> list[RecordMetadata]:
        """One :class:`~omconnect.records.RecordMetadata` per row (a Python object each:
        for callers that need them, such as ``commit_record``).
        """
        return list(map(build_record_metadata, repeat(self.topic, len(self)),
                        self.partitions.to_pylist(), self.offsets.to_pylist(),
                        self.timestamps.to_pylist()))

    @classmethod
    def from_records(cls, topic: str, metadata: list[RecordMetadata]) -> BatchMetadata:
        """The batch acknowledgement of per-message acknowledgements."""
        return cls(topic,
                   pa.array([m.partition for m in metadata], pa.int32()),
                   pa.array([m.offset for m in metadata], pa.int64()),
                   pa.array([m.timestamp for m in metadata], pa.int64()))
