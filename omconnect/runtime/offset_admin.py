"""Reading and changing a connector's committed offsets by hand (Kafka Connect's
``GET``/``PATCH``/``DELETE .../offsets``): :class:`OffsetAdmin`.

Source connectors' offsets are the worker's offset store entries (source partition →
source offset); sink connectors' are their consumer group's positions
(:class:`~omconnect.runtime.sink_offsets.SinkOffsets`). Before anything is written, the
connector's ``alter_offsets`` hook sees the change on a fresh instance and may refuse it.
The herder checks that the connector is stopped; this module does not.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from omconnect.config.secrets import scrub, secret_values
from omconnect.connector.connector import SinkConnector, SourceConnector
from omconnect.errors import ConfigError, ConnectError
from omconnect.records import TopicPartition
from omconnect.runtime.connector_config import load_connector_class, resolve_connector_config
from omconnect.runtime.connector_entry import ConnectorEntry
from omconnect.runtime.sink_offsets import SinkOffsets, parse_sink_offsets
from omconnect.runtime.status import ConnectorOffsets
from omconnect.runtime.worker import Worker

__all__ = ["OffsetAdmin", "source_offset_entries"]

SourceOffsetEntries = list[tuple[dict[str, Any], dict[str, Any] | None]]


class OffsetAdmin:
    """The offsets of the connectors of one worker.

    Args:
        worker: The worker whose transport and offset store hold them.

    """

    def __init__(self, worker: Worker) -> None:
        self._worker = worker

    def read(self, entry: ConnectorEntry) -> ConnectorOffsets:
        """The connector's committed offsets (sources: per source partition; sinks: the
        group's position per topic partition).
        """
        if entry.kind == "source":
            offsets, store = self._worker.fresh_offset_store(entry.name)
            try:
                items = tuple({"partition": p, "offset": o} for p, o in offsets.all())
            finally:
                store.close()
        else:
            items = tuple(self._sink_offsets(entry).read())
        return ConnectorOffsets(name=entry.name, type=entry.kind, offsets=items)

    def alter(self, entry: ConnectorEntry, offsets: Sequence[Mapping[str, Any]]) -> bool:
        """Check ``offsets`` (shape first, then the connector's hook), then write them.

        Returns:
            Whether the connector's hook confirmed it handled them.

        Raises:
            ConfigError: An entry is malformed, or the connector refused it.

        """
        if entry.kind == "source":
            pairs = source_offset_entries(offsets)
            handled = self._ask_connector(entry, pairs)
            source, store = self._worker.fresh_offset_store(entry.name)
            try:
                source.write(pairs)
            finally:
                store.close()
        else:
            positions = parse_sink_offsets(offsets)
            handled = self._ask_connector(entry, positions)
            self._sink_offsets(entry).commit(positions)
        return handled

    def reset(self, entry: ConnectorEntry) -> bool:
        """Forget every offset of the connector, after telling its hook (every offset
        ``None``).

        Returns:
            As for :meth:`alter`.

        Raises:
            ConfigError: The connector's hook refused the reset.

        """
        if entry.kind == "source":
            source, store = self._worker.fresh_offset_store(entry.name)
            try:
                handled = self._ask_connector(
                    entry, [(dict(partition), None) for partition, _ in source.all()])
                source.reset()
            finally:
                store.close()
        else:
            sink = self._sink_offsets(entry)
            positions: dict[TopicPartition, int | None] = dict.fromkeys(
                sink.committed_partitions())
            handled = self._ask_connector(entry, positions)
            sink.commit(positions)
        return handled

    def _ask_connector(
        self, entry: ConnectorEntry,
        offsets: SourceOffsetEntries | dict[TopicPartition, int | None],
    ) -> bool:
        """Run the connector's ``alter_offsets`` hook on a fresh instance; what it
        raises becomes a :class:`ConfigError` naming the connector.
        """
        resolved = resolve_connector_config(entry.config)
        connector = load_connector_class(str(resolved.get("connector.class")))()
        try:
            if isinstance(connector, SourceConnector) and isinstance(offsets, list):
                return bool(connector.alter_offsets(dict(resolved), offsets))
            if isinstance(connector, SinkConnector) and isinstance(offsets, dict):
                return bool(connector.alter_offsets(dict(resolved), offsets))
        except Exception as exc:
            reason = exc.message if isinstance(exc, ConnectError) else (
                str(exc) or type(exc).__name__)
            raise ConfigError(
                f"connector {entry.name!r} refused these offsets: "
                f"{scrub(reason, secret_values(resolved))}",
                key=exc.context.get("key") if isinstance(exc, ConnectError) else None,
                connector=entry.name) from exc
        return False

    def _sink_offsets(self, entry: ConnectorEntry) -> SinkOffsets:
        values = resolve_connector_config(entry.config)
        return SinkOffsets(self._worker.transport,
                           group=self._worker.config.sink_group(entry.name, values),
                           topics=_names(values.get("topics")),
                           regex=values.get("topics.regex"))


def source_offset_entries(offsets: Sequence[Mapping[str, Any]]) -> SourceOffsetEntries:
    """``{"partition": {...}, "offset": {...} | None}`` entries as (partition, offset)
    pairs.

    Raises:
        ConfigError: An entry has no partition object or an offset that is not an
            object or null (naming the entry).

    """
    result = []
    for index, entry in enumerate(offsets):
        if not isinstance(entry, Mapping) or not isinstance(entry.get("partition"), Mapping):
            raise ConfigError(f"offsets[{index}] needs a 'partition' object (the source "
                              "partition)", key=f"offsets[{index}].partition")
        offset = entry.get("offset")
        if offset is not None and not isinstance(offset, Mapping):
            raise ConfigError(f"offsets[{index}].offset must be an object or null",
                              key=f"offsets[{index}].offset")
        result.append((dict(entry["partition"]), None if offset is None else dict(offset)))
    return result


def _names(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, list | tuple):
        return [str(v).strip() for v in value if str(v).strip()]
    return [part.strip() for part in str(value).split(",") if part.strip()]
