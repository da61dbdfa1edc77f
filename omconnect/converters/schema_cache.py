"""A bounded cache of per-schema work (compiled encoders, schema JSON, Avro schemas).

Converters look up the same schema object for every record of a batch, and hashing a
:class:`~omconnect.data.Schema` walks all of its fields. So the cache answers by object
identity first (one ``dict`` lookup on ``id``) and only then by value, which makes equal
schemas built separately share one entry.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Generic, TypeVar

from omconnect.data.schema import Schema

__all__ = ["SchemaCache"]

T = TypeVar("T")


class SchemaCache(Generic[T]):
    """Maps schemas to derived values; holds at most ``size`` schemas (least recently
    used evicted first).

    Not thread-safe: a converter instance belongs to one task thread.

    Args:
        size: The most schemas kept, at least 1 (``schemas.cache.size``).

    """

    def __init__(self, size: int) -> None:
        self._size = max(1, size)
        # id(schema) -> (schema, value). The schema is held, so its id cannot be reused
        # by another object while the entry exists.
        self._by_id: dict[int, tuple[Schema, T]] = {}
        # (schema, doc) -> value; doc is not part of Schema equality but is on the wire.
        self._by_value: OrderedDict[tuple[Schema, str | None], T] = OrderedDict()

    def __len__(self) -> int:
        return len(self._by_value)

    def get(self, schema: Schema) -> T | None:
        """The value cached for ``schema``, or ``None``."""
        entry = self._by_id.get(id(schema))
        if entry is not None and entry[0] is schema:
            return entry[1]
        key = (schema, schema.doc)
        value = self._by_value.get(key)
        if value is not None:
            self._by_value.move_to_end(key)
            self._remember_id(schema, value)
        return value

    def put(self, schema: Schema, value: T) -> None:
        """Cache ``value`` for ``schema``, evicting the least recently used entry if full."""
        self._by_value[(schema, schema.doc)] = value
        self._by_value.move_to_end((schema, schema.doc))
        while len(self._by_value) > self._size:
            self._by_value.popitem(last=False)
            # Identity entries are only a fast path; drop them all rather than track which
            # belonged to the evicted schema.
            self._by_id.clear()
        self._remember_id(schema, value)

    def _remember_id(self, schema: Schema, value: T) -> None:
        if len(self._by_id) >= 4 * self._size:
            self._by_id.clear()
        self._by_id[id(schema)] = (schema, value)
