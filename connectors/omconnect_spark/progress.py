"""Lag of a streaming query that reads the ``omconnect`` source, from its progress.

Spark's Kafka source reports ``minOffsetsBehindLatest``, ``maxOffsetsBehindLatest`` and
``avgOffsetsBehindLatest`` in each progress's source ``metrics``. PySpark 4.3's Python
data source API has no way for a source to fill ``metrics`` (nor to name itself: the
progress calls it ``PythonMicroBatchStream...@<hash>``), but this source reports the end
of every partition as ``latestOffset`` (``reportLatestOffset``) beside the batch's
``endOffset``, both per partition, so the same figures follow from the progress::

    for progress in query.recentProgress:
        print(offsets_behind_latest(progress))   # {'minOffsetsBehindLatest': 0, ...}
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

__all__ = ["offsets_behind_latest"]


def offsets_behind_latest(progress: Any, source: int = 0) -> dict[str, float]:
    """Spark's Kafka lag metrics for one source of a query progress: records between
    the end of the batch and each partition's end, their minimum, maximum and average
    over partitions. Empty when the progress has no such offsets (no batch yet).

    Args:
        progress: A ``StreamingQueryProgress`` (``query.lastProgress`` in PySpark is a
            dict; ``recentProgress`` items too), or its JSON text.
        source: Which of the progress's sources.

    """
    data = json.loads(progress) if isinstance(progress, str) else progress
    if hasattr(data, "json") and not isinstance(data, Mapping):
        data = json.loads(data.json)
    sources = data.get("sources") or []
    if source >= len(sources):
        return {}
    entry = sources[source]
    end, latest = _offsets(entry.get("endOffset")), _offsets(entry.get("latestOffset"))
    if not end or not latest:
        return {}
    behind = [max(0, latest[tp] - end.get(tp, 0)) for tp in latest]
    return {"minOffsetsBehindLatest": float(min(behind)),
            "maxOffsetsBehindLatest": float(max(behind)),
            "avgOffsetsBehindLatest": sum(behind) / len(behind)}


def _offsets(value: Any) -> dict[tuple[str, str], int]:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return {}
    if not isinstance(value, Mapping):
        return {}
    result: dict[tuple[str, str], int] = {}
    for topic, partitions in value.items():
        if not isinstance(partitions, Mapping):
            return {}  # not this source's offsets (e.g. a group-mode batch counter)
        for number, offset in partitions.items():
            result[(str(topic), str(number))] = int(offset)
    return result
