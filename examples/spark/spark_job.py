"""The Spark half of the example: the topic "orders" on the embedded transport → Parquet.

Run from the repository root, after the file source has filled the topic::

    python examples/spark/spark_job.py

A streaming query reads the topic through the ``omconnect`` data source, decoding each
JSON value into typed columns, and writes them to a Parquet table with a checkpoint
(``Trigger.AvailableNow``: it stops once it has read what is there). Run it again after
adding lines to orders.jsonl (and running the source again): only the new records are
read. It then reads the table back and prints what it holds.
"""

from __future__ import annotations

import os
import sys

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")

import omconnect_spark
from pyspark.sql import functions as F

DATA = "spark-example-data"
TABLE = "spark-example-output/orders"
CHECKPOINT = "spark-example-output/orders-checkpoint"
ORDER = "id BIGINT, customer STRING, item STRING, qty INT, price DOUBLE"


def main() -> None:
    spark = omconnect_spark.local_session("omconnect-spark-example")

    orders = (spark.readStream.format("omconnect")
              .option("transport", "embedded").option("embedded.path", DATA)
              .option("topics", "orders").option("startingOffsets", "earliest")
              .option("value.converter", "json")
              .option("value.converter.schemas.enable", "false")
              .option("value.schema", ORDER)
              .load()
              .select("value.*", "partition", "offset", "timestamp"))
    query = (orders.writeStream.format("parquet").option("path", TABLE)
             .option("checkpointLocation", CHECKPOINT)
             .trigger(availableNow=True).start())
    query.awaitTermination()
    read = sum(p["numInputRows"] for p in query.recentProgress)
    print(f"read {read} new records from the topic into {TABLE}")

    table = spark.read.parquet(TABLE)
    print(f"the table holds {table.count()} orders")
    (table.groupBy("item").agg(F.count("*").alias("orders"), F.sum("qty").alias("units"),
                               F.round(F.sum(F.col("qty") * F.col("price")), 2).alias("revenue"))
     .orderBy("item").show())
    spark.stop()


if __name__ == "__main__":
    main()
