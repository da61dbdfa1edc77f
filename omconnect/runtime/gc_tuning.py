"""Garbage-collector thresholds for a process whose job is running a worker.

CPython's cyclic collector starts a young collection after every 700 net allocations of
container objects (records, messages, dicts, lists). A worker allocates about six such
objects per record (a ``SourceRecord`` and its offset dict, a ``Message`` each way, a
``SinkRecord``, the transport's acknowledgement) and keeps each batch alive for a few
thousand allocations while it is converted, sent and acknowledged. With the default
threshold nearly every object is still alive at some young collection, is walked there,
promoted, and walked again by the full collections that promotions trigger: measured on
the pipeline benchmark, the collector took 0.6-0.7 s of 2.1-2.9 s of CPU (25-30 %).

With a young threshold of 50,000 most batches are garbage before the next collection
and are freed by reference counting alone, never walked: the collector's share drops to
0.05-0.2 s. Cyclic garbage (rare in the runtime) waits a little longer, which costs a few
MiB at most.

The thresholds are process-wide, so the runtime never changes them on its own:
``omconnect standalone`` calls :func:`tune_gc` at start (``--python-gc`` keeps CPython's
defaults), and an application embedding :class:`~omconnect.runtime.StandaloneHerder`
may call it too.
"""

from __future__ import annotations

import gc

__all__ = ["WORKER_GC_THRESHOLDS", "tune_gc"]

WORKER_GC_THRESHOLDS = (50_000, 20, 10)
"""The collector thresholds :func:`tune_gc` sets (see :func:`gc.set_threshold`)."""


def tune_gc(thresholds: tuple[int, int, int] = WORKER_GC_THRESHOLDS) -> tuple[int, ...]:
    """Raise the collector's thresholds to ``thresholds`` for a worker process.

    A threshold the process already set higher is kept, and nothing changes when the
    collector is disabled (``gc.disable()`` or a young threshold of 0).

    Args:
        thresholds: The (young, middle, old) thresholds.

    Returns:
        The thresholds before the call (to restore them with :func:`gc.set_threshold`).

    """
    previous = gc.get_threshold()
    if gc.isenabled() and previous[0] > 0:
        gc.set_threshold(*(max(old, new) for old, new in zip(previous, thresholds,
                                                              strict=True)))
    return previous
