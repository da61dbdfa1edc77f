"""A streaming query in its own process, for the crash test: the topic ``orders`` of a
transport through the ``omconnect`` source into a Parquet table, with a checkpoint.

    python streaming_query.py OPTIONS_JSON OUTPUT_DIR CHECKPOINT_DIR

``OPTIONS_JSON`` holds the source's transport options (``{"transport": "embedded",
"embedded.path": ...}``). Prints ``STARTED`` once the query runs and ``DONE`` when it has
read everything (``Trigger.AvailableNow``). It does not call ``omconnect_spark.register``:
PySpark finds the source through the ``pyspark_omconnect`` module.
"""

from __future__ import annotations

import json
import sys

from omconnect_spark.session import build_session


def main(options: str, out: str, checkpoint: str) -> None:
    # not registered: format("omconnect") is found through the pyspark_omconnect module
    spark = build_session("local[2]", "omconnect-crash-test", {})
    frame = (spark.readStream.format("omconnect").options(**json.loads(options))
             .option("subscribe", "orders").option("startingOffsets", "earliest")
             .option("maxRecordsPerTrigger", "500").load())
    query = (frame.writeStream.format("parquet").option("path", out)
             .option("checkpointLocation", checkpoint).trigger(availableNow=True).start())
    print("STARTED", flush=True)
    query.awaitTermination()
    print("DONE", flush=True)
    spark.stop()


if __name__ == "__main__":
    main(*sys.argv[1:4])
