"""Source offsets in the transport's key/value store, and the reader tasks resume from.

Layout, in the namespace ``offset.storage.namespace`` (default ``connect-offsets``):

* key: ``["<connector>",{<source partition>}]`` — JSON, keys sorted, no spaces (the
  form Kafka Connect writes to its offsets topic);
* value: the source offset as JSON (``{"position":8812}``); deleting the key resets the
  partition.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from omconnect.connector.context import OffsetStorageReader, freeze_partition
from omconnect.errors import DataError
from omconnect.records import JsonScalar
from omconnect.transport.spi import KeyValueStore

__all__ = ["KvOffsetStorageReader", "SourceOffsetStore", "offset_key"]

_SEPARATORS = (",", ":")


def offset_key(connector: str, partition: Mapping[str, JsonScalar]) -> str:
    """The store key of ``partition``'s offset for ``connector``.

    Raises:
        DataError: The partition is not JSON-serialisable.

    """
    try:
        return json.dumps([connector, dict(partition)], sort_keys=True, separators=_SEPARATORS)
    except (TypeError, ValueError) as exc:
        raise DataError(f"source partition {partition!r} is not JSON-serialisable ({exc}); "
                        "a source partition holds str keys and JSON scalar values",
                        connector=connector) from exc


def _encode_offset(connector: str, partition: Mapping[str, Any],
                   offset: Mapping[str, Any] | None) -> bytes | None:
    if offset is None:
        return None
    try:
        return json.dumps(dict(offset), sort_keys=True, separators=_SEPARATORS).encode()
    except (TypeError, ValueError) as exc:
        raise DataError(f"source offset {offset!r} of partition {partition!r} is not "
                        f"JSON-serialisable ({exc}); a source offset holds str keys and JSON "
                        "scalar values", connector=connector) from exc


class SourceOffsetStore:
    """One connector's source offsets in a key/value store.

    Args:
        store: The transport's store for ``offset.storage.namespace``.
        connector: The connector's name.

    """

    def __init__(self, store: KeyValueStore, connector: str) -> None:
        self._store = store
        self.connector = connector
        self._prefix = json.dumps([connector], separators=_SEPARATORS)[:-1] + ","

    def write(self, offsets: Iterable[tuple[Mapping[str, JsonScalar],
                                             Mapping[str, Any] | None]]) -> int:
        """Store (partition, offset) pairs at once; an offset ``None`` deletes the
        partition's entry. Returns how many were written.

        Raises:
            DataError: A partition or offset is not JSON-serialisable.
            TransportError: The store failed; nothing may be assumed written.

        """
        items = {offset_key(self.connector, partition):
                 _encode_offset(self.connector, partition, offset)
                 for partition, offset in offsets}
        if items:
            self._store.put_many(items)
        return len(items)

    def read(self, partition: Mapping[str, JsonScalar]) -> dict[str, Any] | None:
        """The stored offset of ``partition``, or ``None``."""
        data = self._store.get(offset_key(self.connector, partition))
        return None if data is None else dict(json.loads(data))

    def all(self) -> list[tuple[dict[str, Any], dict[str, Any]]]:
        """Every (partition, offset) stored for the connector, in key order."""
        result = []
        for key, value in self._store.scan(self._prefix):
            name, partition = json.loads(key)
            if name == self.connector:
                result.append((dict(partition), dict(json.loads(value))))
        return result

    def reset(self) -> int:
        """Delete every offset of the connector; returns how many there were."""
        keys = [key for key, _ in self._store.scan(self._prefix)]
        if keys:
            self._store.put_many(dict.fromkeys(keys))
        return len(keys)


class KvOffsetStorageReader(OffsetStorageReader):
    """What a source task reads its committed offsets through.

    Args:
        offsets: The connector's offset store.

    """

    def __init__(self, offsets: SourceOffsetStore) -> None:
        self._offsets = offsets

    def offsets(
        self, partitions: Iterable[Mapping[str, JsonScalar]]
    ) -> dict[tuple[tuple[str, JsonScalar], ...], dict[str, Any]]:
        """Committed offsets for ``partitions``, keyed by ``freeze_partition``."""
        result = {}
        for partition in partitions:
            offset = self._offsets.read(partition)
            if offset is not None:
                result[freeze_partition(partition)] = offset
        return result
