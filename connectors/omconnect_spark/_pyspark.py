"""PySpark's data source classes, or stand-ins when the ``spark`` extra is absent.

Every module of :mod:`omconnect_spark` imports cleanly without PySpark (the plugin listing
and the packaging test import them all); a class built on a stand-in raises
:class:`~omconnect.errors.MissingExtraError`, naming the extra to install, when it is
instantiated. With PySpark installed these are PySpark's own classes.

PySpark 4.2 or newer is needed: ``latestOffset(start, limit)`` and the read limits
(``ReadMaxRows``) arrived in 4.2.
"""

from __future__ import annotations

from typing import Any

from omconnect.errors import MissingExtraError

__all__ = [
    "PYSPARK_AVAILABLE",
    "DataSource",
    "DataSourceArrowWriter",
    "DataSourceReader",
    "DataSourceStreamArrowWriter",
    "DataSourceStreamReader",
    "InputPartition",
    "ReadAllAvailable",
    "ReadLimit",
    "ReadMaxRows",
    "SupportsTriggerAvailableNow",
    "WriterCommitMessage",
    "require_pyspark",
]


def require_pyspark() -> None:
    """Raise :class:`MissingExtraError` (naming the ``spark`` extra) without PySpark.

    Raises:
        MissingExtraError: PySpark (4.2 or newer) is not installed.

    """
    if not PYSPARK_AVAILABLE:
        raise MissingExtraError("the omconnect Spark adapter", "spark", "pyspark")


class _StandIn:
    """Base of the stand-ins: instantiating one says which extra to install."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        require_pyspark()


try:
    from pyspark.sql.datasource import (
        DataSource,
        DataSourceArrowWriter,
        DataSourceReader,
        DataSourceStreamArrowWriter,
        DataSourceStreamReader,
        InputPartition,
        WriterCommitMessage,
    )
    from pyspark.sql.streaming.datasource import (
        ReadAllAvailable,
        ReadLimit,
        ReadMaxRows,
        SupportsTriggerAvailableNow,
    )

    PYSPARK_AVAILABLE = True
except ImportError as exc:  # only PySpark's own absence (or an old PySpark) is tolerated
    if not (exc.name or "").startswith("pyspark") and "pyspark" not in str(exc):
        raise
    PYSPARK_AVAILABLE = False

    class DataSource(_StandIn):  # type: ignore[no-redef]
        """Stand-in for ``pyspark.sql.datasource.DataSource``."""

    class DataSourceReader(_StandIn):  # type: ignore[no-redef]
        """Stand-in for ``pyspark.sql.datasource.DataSourceReader``."""

    class DataSourceStreamReader(_StandIn):  # type: ignore[no-redef]
        """Stand-in for ``pyspark.sql.datasource.DataSourceStreamReader``."""

    class DataSourceArrowWriter(_StandIn):  # type: ignore[no-redef]
        """Stand-in for ``pyspark.sql.datasource.DataSourceArrowWriter``."""

    class DataSourceStreamArrowWriter(_StandIn):  # type: ignore[no-redef]
        """Stand-in for ``pyspark.sql.datasource.DataSourceStreamArrowWriter``."""

    class InputPartition:  # type: ignore[no-redef]
        """Stand-in for ``pyspark.sql.datasource.InputPartition`` (plain data)."""

        def __init__(self, value: Any) -> None:
            self.value = value

    class WriterCommitMessage:  # type: ignore[no-redef]
        """Stand-in for ``pyspark.sql.datasource.WriterCommitMessage`` (plain data)."""

    class SupportsTriggerAvailableNow:  # type: ignore[no-redef]
        """Stand-in for ``pyspark.sql.streaming.datasource.SupportsTriggerAvailableNow``."""

    class ReadLimit:  # type: ignore[no-redef]
        """Stand-in for ``pyspark.sql.streaming.datasource.ReadLimit``."""

    class ReadAllAvailable(ReadLimit):  # type: ignore[no-redef]
        """Stand-in for ``pyspark.sql.streaming.datasource.ReadAllAvailable``."""

    class ReadMaxRows(ReadLimit):  # type: ignore[no-redef]
        """Stand-in for ``pyspark.sql.streaming.datasource.ReadMaxRows``."""

        def __init__(self, max_rows: int) -> None:
            self.max_rows = max_rows
