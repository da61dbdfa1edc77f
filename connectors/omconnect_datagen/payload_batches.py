"""``quickstart=payload`` on the columnar path: each poll is one Arrow batch.

The values are the same bytes :class:`~omconnect_datagen.task.DatagenTask` makes for
the same seed and sequence numbers (both cut them from
:func:`~omconnect_datagen.quickstarts.payload_bytes`), and the offsets are the same
(``{"sequence": n}``), so a connector resumes across the two. The batch's ``value``
column is built from the generated buffer and an offsets buffer: no object per record.
"""

from __future__ import annotations

from omconnect.plugins import require

require("pyarrow", plugin="the columnar path", extra="columnar")
require("numpy", plugin="the columnar path", extra="columnar")

from typing import Any  # noqa: E402

import numpy as np  # noqa: E402
import pyarrow as pa  # noqa: E402

from omconnect.columnar import SourceBatch  # noqa: E402
from omconnect.connector.batch_tasks import BatchSourceTask  # noqa: E402
from omconnect_datagen.quickstarts import BLOCK, block_rng, payload_bytes  # noqa: E402
from omconnect_datagen.task import DatagenTask  # noqa: E402

__all__ = ["PayloadBatchTask"]


class PayloadBatchTask(DatagenTask, BatchSourceTask):
    """Makes ``quickstart=payload`` records as Arrow batches (see the module docs)."""

    def __init__(self) -> None:
        super().__init__()
        self._data_block = -1
        self._data = b""

    def poll_batch(self) -> SourceBatch | None:
        """Up to ``batch.size`` values (fewer to keep to ``rate``) as one batch, or
        ``None`` when ``max.messages`` were made.
        """
        want = self._wanted()
        if want <= 0:
            return None
        size = self._payload_size
        parts: list[bytes] = []
        made = self._made
        count = 0
        while count < want:
            run = min(want - count, self._remaining_in_block(made + count))
            if run <= 0:
                break
            sequence = self._sequence(made + count)
            block = sequence // BLOCK
            if block != self._data_block:
                self._data = payload_bytes(block_rng(self._seed, block), BLOCK, size)
                self._data_block = block
            start = (sequence % BLOCK) * size
            parts.append(self._data[start:start + run * size])
            count += run
        if count == 0:
            return None
        data = parts[0] if len(parts) == 1 else b"".join(parts)
        offsets = np.arange(0, (count + 1) * size, size, dtype=np.int32) if size else \
            np.zeros(count + 1, dtype=np.int32)
        values = pa.Array.from_buffers(pa.binary(), count,
                                       [None, pa.py_buffer(offsets), pa.py_buffer(data)])
        self._made = made + count
        self._rate_made += count
        return SourceBatch(topic=self._topic, records=pa.RecordBatch.from_arrays(
            [values], names=["value"]), source_partition=self._partition,
            source_offset={"sequence": self._made}, value_schema=self._quickstart.value_schema)

    def _wanted(self) -> Any:
        if self._stopping.is_set():
            return 0
        if self.exhausted:
            self._stopping.wait(0.1)
            return 0
        want = self._batch_size
        if self._rate > 0:
            want = min(want, self._allowed())
        return want
