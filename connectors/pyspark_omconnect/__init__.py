"""Lets PySpark find the ``omconnect`` data source without a ``register`` call.

PySpark (4.0+) looks, on the first use of a Python data source, for top-level modules
whose names start with ``pyspark_`` and registers their ``DefaultSource`` under its
``name()``. This module is that hook; the data source lives in :mod:`omconnect_spark`.
"""

from omconnect_spark.datasource import OmconnectDataSource as DefaultSource

__all__ = ["DefaultSource"]
