"""The Spark adapter: Spark reads from and writes to any omconnect transport.

Features:
    * A PySpark data source named ``omconnect`` (PySpark 4.2+'s Python Data Source API,
      no JVM code): batch and streaming reads with the columns of Spark's Kafka source
      (key, value, topic, partition, offset, timestamp, headers), optionally decoded by
      an omconnect converter; batch and streaming writes.
    * Exactly-once reads on replayable transports: each micro-batch is an offset range
      per partition, kept in Spark's checkpoint and re-read exactly after a crash.
      At-least-once, with a warning, on transports that cannot replay.
    * ``Trigger.AvailableNow``, ``maxRecordsPerTrigger`` (Spark's ReadMaxRows),
      ``failOnDataLoss``, ``startingOffsets``/``endingOffsets`` as Spark's Kafka source.
    * Records reach Spark as Arrow record batches; clients are opened inside the tasks.
    * A sink connector for the standalone runtime that writes micro-batches to a Parquet
      table through a SparkSession (:mod:`omconnect_spark.sink`, entry point
      ``spark-parquet``).

Connection:
    The ``transport`` option picks the transport and ``<transport>.<option>`` gives its
    options, exactly as in a worker configuration (``embedded.path``,
    ``kafka.bootstrap.servers``, ...); the transport is opened the way the standalone
    runtime opens it.

Options:
    See :data:`omconnect_spark.options.READ_CONFIG_DEF` and
    :data:`omconnect_spark.options.WRITE_CONFIG_DEF`, and docs/spark.md.

Usage::

    import omconnect_spark
    omconnect_spark.register(spark)
    df = (spark.readStream.format("omconnect")
          .option("transport", "embedded").option("embedded.path", "/var/lib/omc")
          .option("topics", "orders").load())

PySpark has no entry-point discovery for Python data sources; it imports top-level
modules named ``pyspark_*`` that define ``DefaultSource``. The companion module
``pyspark_omconnect`` does, so ``format("omconnect")`` also works without
:func:`register` wherever omconnect is installed on Spark's Python path.
"""

from __future__ import annotations

from typing import Any

__all__ = ["local_session", "offsets_behind_latest", "register"]


def register(spark: Any) -> None:
    """Register the ``omconnect`` data source with a SparkSession.

    Args:
        spark: The ``pyspark.sql.SparkSession``.

    Raises:
        MissingExtraError: PySpark is not installed (install ``omconnect[spark]``).

    """
    from omconnect_spark._pyspark import require_pyspark

    require_pyspark()
    from omconnect_spark.datasource import OmconnectDataSource

    spark.dataSource.register(OmconnectDataSource)


def local_session(app_name: str = "omconnect", master: str = "local[2]",
                  conf: dict[str, str] | None = None) -> Any:
    """A local SparkSession with the ``omconnect`` data source registered: for examples,
    notebooks, tests and benchmarks on one machine.

    It has no web UI and binds the driver to the loopback address
    (:data:`omconnect_spark.session.LOCAL_DEFAULTS`); ``conf`` adds or overrides Spark
    settings. An existing session is returned as it is (Spark keeps one per process),
    registered. The log level is ``spark.log.level`` (default ``ERROR``).

    Args:
        app_name: The application name.
        master: Spark's master URL (``local[N]``).
        conf: Further Spark settings (``spark.*``).

    Raises:
        MissingExtraError: PySpark is not installed (install ``omconnect[spark]``).

    """
    from omconnect_spark._pyspark import require_pyspark

    require_pyspark()
    from omconnect_spark.session import build_session

    spark = build_session(master, app_name, conf or {})
    register(spark)
    return spark


def offsets_behind_latest(progress: Any, source: int = 0) -> dict[str, float]:
    """Spark's Kafka lag metrics (min/max/avgOffsetsBehindLatest) of a streaming query
    reading this source, from one of its progresses; see
    :func:`omconnect_spark.progress.offsets_behind_latest`.
    """
    from omconnect_spark.progress import offsets_behind_latest as compute

    return compute(progress, source)
