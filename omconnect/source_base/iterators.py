"""Small iterator helpers for source authors."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TypeVar

__all__ = ["mark_last"]

T = TypeVar("T")


def mark_last(items: Iterable[T]) -> Iterator[tuple[T, bool]]:
    """Each item with whether it is the last one (reads one item ahead).

    A source uses it to flag the last record of an object as done in its offset, so a
    restart does not reopen a finished object::

        for (number, key, value, error), last in mark_last(record_format.records(...)):
            entry.increment("records")
            if last:
                entry.set("done", True)
    """
    iterator = iter(items)
    try:
        previous = next(iterator)
    except StopIteration:
        return
    for item in iterator:
        yield previous, False
        previous = item
    yield previous, True
