"""The data generator source connector (entry point ``datagen``): splits the work into
tasks (:class:`~omconnect_datagen.task.DatagenTask`, or its columnar form
:class:`~omconnect_datagen.payload_batches.PayloadBatchTask` for ``quickstart=payload``);
the settings and how the work is split are described in :mod:`omconnect_datagen.task`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from omconnect import __version__
from omconnect.config import ConfigDef
from omconnect.connector import SourceConnector, SourceTask
from omconnect.errors import ConfigError
from omconnect_datagen.task import (
    _TASK,
    _TASKS,
    CONFIG_DEF,
    KAFKA_TOPIC,
    QUICKSTART,
    TOPIC,
    DatagenTask,
    parse_config,
)

__all__ = ["DatagenConnector", "DatagenTask"]


class DatagenConnector(SourceConnector):
    """Generates records (entry point ``datagen``)."""

    def __init__(self) -> None:
        super().__init__()
        self._config: dict[str, Any] = {}

    def version(self) -> str:
        """The omconnect version."""
        return __version__

    def config_def(self) -> ConfigDef:
        """The settings listed in the module documentation."""
        return CONFIG_DEF

    def validate(self, config: Mapping[str, Any]) -> dict[str, list[str]]:
        """The declared checks, plus: ``topic`` (or ``kafka.topic``) is set."""
        errors = super().validate(config)
        if not str(config.get(TOPIC) or config.get(KAFKA_TOPIC) or "").strip():
            errors.setdefault(TOPIC, []).append(
                "missing required setting; set topic (the topic to write the generated "
                "records to)")
        return errors

    def start(self, config: Mapping[str, Any]) -> None:
        """Keep the parsed config for the tasks."""
        self._config = parse_config(config)

    def task_class(self) -> type[SourceTask]:
        """:class:`DatagenTask`; for ``quickstart=payload`` with pyarrow installed, its
        columnar form :class:`~omconnect_datagen.payload_batches.PayloadBatchTask`.
        """
        if str(self._config.get(QUICKSTART) or "").lower() == "payload":
            try:
                from omconnect_datagen.payload_batches import PayloadBatchTask
            except ImportError:  # no pyarrow: the per-record task makes the same records
                return DatagenTask
            return PayloadBatchTask
        return DatagenTask

    def task_configs(self, max_tasks: int) -> list[dict[str, Any]]:
        """``max_tasks`` tasks, each making every ``max_tasks``-th block of records."""
        base = {k: v for k, v in self._config.items() if k in CONFIG_DEF and v is not None}
        return [{**base, _TASK: i, _TASKS: max_tasks} for i in range(max_tasks)]

    def stop(self) -> None:
        """Nothing to release."""

    def exactly_once_support(self) -> bool:
        """Record ``n`` is the same whenever it is made: a replay yields no duplicates."""
        return True

    def alter_offsets(
        self,
        config: Mapping[str, Any],
        offsets: Sequence[tuple[Mapping[str, Any], Mapping[str, Any] | None]],
    ) -> bool:
        """Check offsets set by hand: a non-null offset needs a partition
        ``{"datagen": <quickstart>, "task": <non-negative int>}`` and an offset
        ``{"sequence": <non-negative int>}`` (records that task made); a null offset is
        accepted for any partition. ``True``: nothing is kept elsewhere.

        Raises:
            ConfigError: Naming the entry and the field that is wrong.

        """
        for index, (partition, offset) in enumerate(offsets):
            if offset is None:
                continue
            where = f"offsets[{index}]"
            if not isinstance(partition.get("datagen"), str) \
                    or not _non_negative(partition.get("task")):
                raise ConfigError(
                    f"{where}.partition must be {{\"datagen\": <quickstart>, \"task\": "
                    f"<non-negative int>}}, got {dict(partition)!r}",
                    key=f"{where}.partition")
            if not _non_negative(offset.get("sequence")):
                raise ConfigError(
                    f"{where}.offset.sequence must be a non-negative integer (the records "
                    f"that task made), got {offset.get('sequence')!r}",
                    key=f"{where}.offset.sequence")
        return True


def _non_negative(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**63
