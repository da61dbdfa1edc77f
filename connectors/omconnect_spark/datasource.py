"""The ``omconnect`` data source: Spark reads from and writes to any omconnect transport.

Register it with :func:`omconnect_spark.register` (or let PySpark discover it: see the
package docs), then::

    (spark.readStream.format("omconnect").option("transport", "embedded")
        .option("embedded.path", "/var/lib/omc").option("topics", "orders").load())

Spark builds a data source instance from the options for each step (schema, reader,
writer); the options are checked each time, first in :meth:`schema`, which ``load()``
calls, so bad read options fail there, before any query starts.
"""

from __future__ import annotations

from typing import Any

from omconnect_spark._pyspark import DataSource
from omconnect_spark.batch import OmconnectBatchReader
from omconnect_spark.options import ReadOptions, WriteOptions
from omconnect_spark.streaming import OmconnectStreamReader
from omconnect_spark.writing import OmconnectBatchWriter, OmconnectStreamWriter, check_write_schema

__all__ = ["OmconnectDataSource"]


class OmconnectDataSource(DataSource):
    """The ``omconnect`` format: batch and streaming reads and writes on any transport."""

    @classmethod
    def name(cls) -> str:
        """``omconnect``: the name given to ``format()``."""
        return "omconnect"

    def schema(self) -> str:
        """The read columns, as DDL; checks every read option first.

        Raises:
            ConfigError: An option is invalid (each named, with its fix).

        """
        return ReadOptions.parse(self.options).spark_schema()

    def reader(self, schema: Any) -> OmconnectBatchReader:
        """A batch reader (``spark.read``).

        Raises:
            ConfigError: An option is invalid, or not allowed in a batch read.

        """
        options = ReadOptions.parse(self.options)
        options.check_batch()
        return OmconnectBatchReader(options, schema)

    def streamReader(self, schema: Any) -> OmconnectStreamReader:
        """A stream reader (``spark.readStream``).

        Raises:
            ConfigError: An option is invalid, or an ending option is set (streams do
                not end).

        """
        options = ReadOptions.parse(self.options)
        options.check_stream()
        return OmconnectStreamReader(options, schema)

    def writer(self, schema: Any, overwrite: bool) -> OmconnectBatchWriter:
        """A batch writer (``df.write``); ``overwrite`` has no meaning for a queue.

        Raises:
            ConfigError: An option is invalid.
            DataError: The DataFrame's columns cannot be written (naming the column).

        """
        options = WriteOptions.parse(self.options)
        check_write_schema(schema, options)
        return OmconnectBatchWriter(options)

    def streamWriter(self, schema: Any, overwrite: bool) -> OmconnectStreamWriter:
        """A stream writer (``df.writeStream``).

        Raises:
            ConfigError: An option is invalid.
            DataError: The DataFrame's columns cannot be written (naming the column).

        """
        options = WriteOptions.parse(self.options)
        check_write_schema(schema, options)
        return OmconnectStreamWriter(options)
