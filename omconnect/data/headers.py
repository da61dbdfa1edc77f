"""Headers: an ordered, immutable list of (key, value, schema); a key may repeat."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any, overload

import attrs

from omconnect.data.schema import Schema

__all__ = ["Header", "Headers"]


@attrs.frozen(slots=True)
class Header:
    """One header: a key, a value and the value's optional schema."""

    key: str
    value: Any
    schema: Schema | None = None


class Headers(Sequence[Header]):
    """An ordered, immutable sequence of :class:`Header`; keys may repeat.

    Changes return a new ``Headers``; the empty one is :data:`Headers.EMPTY`.

    Args:
        headers: Headers, or (key, value) / (key, value, schema) tuples.

    """

    __slots__ = ("_items",)
    EMPTY: Headers

    def __init__(self, headers: Iterable[Header | tuple[Any, ...]] = ()) -> None:
        self._items: tuple[Header, ...] = tuple(
            h if isinstance(h, Header) else Header(*h) for h in headers
        )

    @overload
    def __getitem__(self, index: int) -> Header: ...
    @overload
    def __getitem__(self, index: slice) -> Headers: ...
    def __getitem__(self, index: int | slice) -> Header | Headers:
        if isinstance(index, slice):
            return Headers(self._items[index])
        return self._items[index]

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[Header]:
        return iter(self._items)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Headers):
            return self._items == other._items
        return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple((h.key, repr(h.value)) for h in self._items))

    def __repr__(self) -> str:
        return f"Headers({list(self._items)!r})"

    def keys(self) -> list[str]:
        """Every key, in order, repeated keys repeated."""
        return [h.key for h in self._items]

    def all(self, key: str) -> list[Header]:
        """Every header with ``key``, in order."""
        return [h for h in self._items if h.key == key]

    def last(self, key: str) -> Header | None:
        """The last header with ``key``, or ``None``."""
        for header in reversed(self._items):
            if header.key == key:
                return header
        return None

    def with_header(self, key: str, value: Any, schema: Schema | None = None) -> Headers:
        """A copy with one header appended."""
        return Headers((*self._items, Header(key, value, schema)))

    def without(self, *keys: str) -> Headers:
        """A copy without any header whose key is in ``keys``."""
        drop = set(keys)
        return Headers(h for h in self._items if h.key not in drop)

    def replacing(self, key: str, value: Any, schema: Schema | None = None) -> Headers:
        """A copy where every ``key`` header is replaced by one with ``value``."""
        return self.without(key).with_header(key, value, schema)


Headers.EMPTY = Headers()
