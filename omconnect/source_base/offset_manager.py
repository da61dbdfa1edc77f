"""Offset manager: where a source is in each object, and how far it got.

An :class:`OffsetManagerEntry` holds two maps of ``str`` to JSON scalars:

- the **key** map says where an object is (``{"bucket": "b", "object": "a/b.jsonl"}``); it
  becomes every record's ``source_partition`` and never changes;
- the **data** map says how far processing got (``{"records": 1200, "done": False}``); it
  becomes every record's ``source_offset``.

The runtime stores both as JSON and hands them back through the task context's
:class:`~omconnect.connector.OffsetStorageReader` after a restart. Values are normalised
when set so that a reloaded map compares equal to the one stored: integral numbers of any
type (``numpy.int64``, ...) become ``int``, floats stay ``float`` (finite only), ``bool``
stays ``bool``, strings become ``str``; anything else is a :class:`~omconnect.errors.DataError`
naming the entry and the key.

The :class:`OffsetManager` caches entries for one task. Its life cycle::

    entry = manager.get_entry(key, MyEntry) or MyEntry(key)   # storage, or a fresh one
    ... per record: entry.increment("records"); manager.add_entry(entry)
                    yield entry.to_record(...)
    runtime acknowledges a record  -> manager.remove_record(record)      (any thread)
    runtime committed offsets      -> manager.evict_committed()          (task thread)

An entry leaves the cache only once the storage holds exactly its cached state, so a
later :meth:`OffsetManager.get_entry` never reloads an older state than the one already
handed to the runtime.
"""

from __future__ import annotations

import collections
import math
import numbers
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Self, TypeVar

from omconnect.connector.context import OffsetStorageReader, freeze_partition
from omconnect.data.headers import Headers
from omconnect.data.schema import Schema
from omconnect.data.struct import SchemaAndValue
from omconnect.errors import DataError
from omconnect.records import JsonScalar, SourceRecord

__all__ = [
    "EntryCreator",
    "FrozenKey",
    "OffsetManager",
    "OffsetManagerEntry",
    "normalise_map",
    "normalise_value",
]

FrozenKey = tuple[tuple[str, JsonScalar], ...]
"""A hashable key map: :func:`~omconnect.connector.freeze_partition` of it."""

E = TypeVar("E", bound="OffsetManagerEntry")

EntryCreator = Callable[[Mapping[str, JsonScalar], Mapping[str, JsonScalar]], E]
"""Builds an entry from a key map and a data map (an entry class itself will do)."""

_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_POPULATE_CHUNK = 1000


def normalise_value(value: Any, *, name: str = "", where: str = "offset") -> JsonScalar:
    """``value`` as a JSON scalar that compares equal after a JSON round trip.

    Args:
        value: The value to store.
        name: Its key in the map (for the error message).
        where: What the map is (for the error message).

    Raises:
        DataError: ``value`` is not a string, a finite number within 64 bits, a boolean
            or ``None``.

    """
    kind = type(value)
    if kind is str or kind is bool or value is None:
        return value  # type: ignore[no-any-return]
    if kind is int:
        if _INT64_MIN <= value <= _INT64_MAX:
            return value  # type: ignore[no-any-return]
        raise DataError(f"{where} value {name!r} = {value} does not fit in 64 bits")
    if kind is float:
        if math.isfinite(value):
            return value  # type: ignore[no-any-return]
        raise DataError(f"{where} value {name!r} = {value} is not finite; JSON cannot hold it")
    if isinstance(value, bool):  # pragma: no cover - bool cannot be subclassed
        return bool(value)
    if isinstance(value, str):
        return str.__str__(value)  # the characters, not a subclass's __str__ (enums)
    item = getattr(value, "item", None)  # numpy scalars: numpy.int64, numpy.bool_, ...
    if callable(item) and type(value).__module__ == "numpy":
        return normalise_value(item(), name=name, where=where)
    if isinstance(value, numbers.Integral):
        return normalise_value(int(value), name=name, where=where)
    if isinstance(value, numbers.Real):
        return normalise_value(float(value), name=name, where=where)
    raise DataError(
        f"{where} value {name!r} is a {type(value).__name__}; use a str, int, float, bool "
        "or None (the runtime stores offsets as JSON)"
    )


def normalise_map(values: Mapping[str, Any], *, where: str = "offset") -> dict[str, JsonScalar]:
    """A new dict of ``values`` with every value normalised by :func:`normalise_value`.

    Raises:
        DataError: A key is not a string, or a value is not a JSON scalar.

    """
    out: dict[str, JsonScalar] = {}
    for name, value in values.items():
        if type(name) is not str:
            if not isinstance(name, str):
                raise DataError(f"{where} keys must be strings, got {name!r}")
            name = str.__str__(name)
        out[name] = normalise_value(value, name=name, where=where)
    return out


class OffsetManagerEntry:
    """Where one object is (the key map) and how far processing got (the data map).

    Subclass it to give the data names, e.g. a ``records`` property over
    ``get_int("records", 0)``. Every map going in or out is copied, so an entry never
    shares state with a record or with the :class:`OffsetManager`.

    Args:
        key: Where the object is; fixed for the entry's life.
        data: How far processing got (empty for an object not started).

    Raises:
        DataError: A key or value is not JSON-compatible (see :func:`normalise_value`).

    """

    __slots__ = ("_data", "_frozen", "_key")

    def __init__(
        self, key: Mapping[str, Any], data: Mapping[str, Any] | None = None
    ) -> None:
        self._key = normalise_map(key, where="offset key")
        self._frozen: FrozenKey = freeze_partition(self._key)
        self._data = normalise_map(data, where="offset data") if data else {}

    @classmethod
    def create(cls, key: Mapping[str, JsonScalar], data: Mapping[str, JsonScalar]) -> Self:
        """An entry of this class from stored maps (the creator for
        :meth:`OffsetManager.get_entry`; the class itself works too).
        """
        return cls(key, data)

    # -- maps ------------------------------------------------------------------------
    @property
    def key(self) -> dict[str, JsonScalar]:
        """The key map (a copy): becomes the records' ``source_partition``."""
        return dict(self._key)

    @property
    def data(self) -> dict[str, JsonScalar]:
        """The data map (a copy): becomes the records' ``source_offset``."""
        return dict(self._data)

    @property
    def frozen_key(self) -> FrozenKey:
        """The key map in hashable form (how the offset reader keys its answers)."""
        return self._frozen

    # -- getters and setters over the data map -----------------------------------------
    def get(self, name: str, default: JsonScalar = None) -> JsonScalar:
        """The data value ``name``, or ``default`` when absent."""
        return self._data.get(name, default)

    def get_int(self, name: str, default: int | None = None) -> int | None:
        """The data value ``name`` as an ``int`` (from an int, an integral float or a
        numeric string), or ``default`` when absent or ``None``.

        Raises:
            DataError: The value is not integral.

        """
        value = self._data.get(name)
        if value is None:
            return default
        if type(value) is int:
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
        if isinstance(value, str):
            try:
                return int(value.strip())
            except ValueError:
                pass
        raise DataError(f"offset data value {name!r} = {value!r} is not an integer")

    def get_float(self, name: str, default: float | None = None) -> float | None:
        """The data value ``name`` as a ``float``, or ``default`` when absent or ``None``.

        Raises:
            DataError: The value is not a number.

        """
        value = self._data.get(name)
        if value is None:
            return default
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        if isinstance(value, str):
            try:
                return float(value.strip())
            except ValueError:
                pass
        raise DataError(f"offset data value {name!r} = {value!r} is not a number")

    def get_str(self, name: str, default: str | None = None) -> str | None:
        """The data value ``name`` as a ``str``, or ``default`` when absent or ``None``
        (booleans read ``"true"``/``"false"``, numbers as written).
        """
        value = self._data.get(name)
        if value is None:
            return default
        if isinstance(value, bool):
            return "true" if value else "false"
        return str(value)

    def get_bool(self, name: str, default: bool | None = None) -> bool | None:
        """The data value ``name`` as a ``bool`` (from a bool, ``0``/``1`` or
        ``"true"``/``"false"``), or ``default`` when absent or ``None``.

        Raises:
            DataError: The value is not a boolean.

        """
        value = self._data.get(name)
        if value is None:
            return default
        if isinstance(value, bool):
            return value
        if isinstance(value, int) and value in (0, 1):
            return bool(value)
        if isinstance(value, str) and value.strip().lower() in ("true", "false"):
            return value.strip().lower() == "true"
        raise DataError(f"offset data value {name!r} = {value!r} is not a boolean")

    def set(self, name: str, value: Any) -> None:
        """Set data value ``name`` (normalised; ``None`` is kept as a value).

        Raises:
            DataError: ``value`` is not JSON-compatible.

        """
        self._data[name] = normalise_value(value, name=name, where="offset data")

    def increment(self, name: str, by: int = 1) -> int:
        """Add ``by`` to the integer data value ``name`` (absent counts as 0).

        Returns:
            The new value.

        """
        value = self._data.get(name, 0)
        if type(value) is not int:
            value = self.get_int(name, 0) or 0
        value += by
        self._data[name] = value
        return value

    # -- records -----------------------------------------------------------------------
    def to_record(
        self,
        *,
        topic: str,
        value: SchemaAndValue | None,
        key: SchemaAndValue | None = None,
        partition: int | None = None,
        timestamp: int | None = None,
        headers: Headers | None = None,
    ) -> SourceRecord:
        """A source record carrying this entry's key map as ``source_partition`` and its
        current data map as ``source_offset`` (both copied).

        Args:
            topic: The topic to send it to.
            value: The value with its schema (``None`` for a tombstone).
            key: The key with its schema, or ``None``.
            partition: The transport partition, or ``None`` to partition by key.
            timestamp: Milliseconds since the epoch, or ``None``.
            headers: Headers, or ``None``.

        """
        key_schema: Schema | None = None
        key_value: Any = None
        if key is not None:
            key_schema, key_value = key.schema, key.value
        value_schema: Schema | None = None
        value_value: Any = None
        if value is not None:
            value_schema, value_value = value.schema, value.value
        return SourceRecord(
            topic=topic,
            partition=partition,
            key_schema=key_schema,
            key=key_value,
            value_schema=value_schema,
            value=value_value,
            timestamp=timestamp,
            headers=headers if headers is not None else Headers.EMPTY,
            source_partition=dict(self._key),
            source_offset=dict(self._data),
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, OffsetManagerEntry):
            return NotImplemented
        return (type(self) is type(other) and self._key == other._key
                and self._data == other._data)

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __repr__(self) -> str:
        return f"{type(self).__name__}(key={self._key!r}, data={self._data!r})"


_ABSENT: dict[str, JsonScalar] = {}
"""Cached marker: storage has nothing for this key (compared by identity)."""


class OffsetManager:
    """Caches the offset entries of one source task, loaded from the runtime's storage.

    Thread safety: every method runs on the task thread except :meth:`remove_record`,
    which the runtime may call from any thread (it only queues the record).

    Args:
        reader: The task context's offset reader, or ``None`` (nothing stored: every
            object starts from scratch and nothing is ever evicted).

    """

    def __init__(self, reader: OffsetStorageReader | None) -> None:
        self._reader = reader
        self._cache: dict[FrozenKey, dict[str, JsonScalar]] = {}
        self._acknowledged: collections.deque[Mapping[str, JsonScalar]] = collections.deque()

    def __len__(self) -> int:
        return sum(1 for data in self._cache.values() if data is not _ABSENT)

    def _load(self, frozen_keys: Iterable[FrozenKey]) -> None:
        wanted = [k for k in frozen_keys if k not in self._cache]
        if not wanted:
            return
        if self._reader is None:
            for k in wanted:
                self._cache[k] = _ABSENT
            return
        for start in range(0, len(wanted), _POPULATE_CHUNK):
            chunk = wanted[start:start + _POPULATE_CHUNK]
            stored = self._reader.offsets([dict(k) for k in chunk])
            for k in chunk:
                data = stored.get(k)
                self._cache[k] = (normalise_map(data, where="stored offset")
                                  if data is not None else _ABSENT)

    def populate(self, keys: Iterable[Mapping[str, Any]]) -> None:
        """Load the stored state of many keys in few storage reads (e.g. for a whole
        object listing), so that :meth:`get_entry` needs none.
        """
        self._load(freeze_partition(normalise_map(k, where="offset key")) for k in keys)

    def get_entry(self, key: Mapping[str, Any], creator: EntryCreator[E]) -> E | None:
        """The entry for ``key``: its latest state in this task (cached), else the one the
        storage holds (read now unless :meth:`populate` loaded it), else ``None``.

        Args:
            key: The key map.
            creator: Builds the entry from ``(key map, data map)``; an entry class will do.

        """
        normal = normalise_map(key, where="offset key")
        frozen = freeze_partition(normal)
        data = self._cache.get(frozen)
        if data is None:
            self._load((frozen,))
            data = self._cache[frozen]
        if data is _ABSENT:
            return None
        return creator(normal, dict(data))

    def add_entry(self, entry: OffsetManagerEntry) -> None:
        """Record ``entry``'s current state (call it for each record made from the entry,
        before handing the record over).
        """
        self._cache[entry._frozen] = dict(entry._data)

    def remove(self, key: Mapping[str, Any]) -> None:
        """Forget ``key`` now; the next :meth:`get_entry` reads the storage again.

        Only safe once the storage holds the latest state (or the object is gone).
        """
        self._cache.pop(freeze_partition(normalise_map(key, where="offset key")), None)

    def remove_record(self, record: SourceRecord) -> None:
        """``record`` was acknowledged: its entry may leave the cache once the storage
        holds its state (see :meth:`evict_committed`). Any thread; O(1).
        """
        self._acknowledged.append(record.source_partition)

    def handed_over(self, partition: Mapping[str, Any]) -> None:
        """Rows of ``partition`` were handed to the runtime in a batch (a columnar source
        gets no per-record acknowledgement): its entry may leave the cache once the
        storage holds its state, as after :meth:`remove_record`. Any thread; O(1).
        """
        self._acknowledged.append(partition)

    def evict_committed(self) -> int:
        """Drop the cached entries of acknowledged records whose stored state now equals
        the cached one (one batched storage read). Call after the runtime committed offsets.

        Returns:
            How many entries left the cache.

        """
        if self._reader is None or not self._acknowledged:
            return 0
        candidates: set[FrozenKey] = set()
        pop = self._acknowledged.popleft
        try:
            while True:
                candidates.add(freeze_partition(pop()))
        except IndexError:
            pass
        candidates = {k for k in candidates if self._cache.get(k, _ABSENT) is not _ABSENT}
        if not candidates:
            return 0
        stored = self._reader.offsets([dict(k) for k in candidates])
        evicted = 0
        for k in candidates:
            if stored.get(k) == self._cache[k]:
                del self._cache[k]
                evicted += 1
            else:  # not committed yet, or newer records since: look again next time
                self._acknowledged.append(dict(k))
        return evicted
