"""Helpers shared by the tests in tests/spark/ (a uniquely named module, so that test modules
import them by name without clashing with other directories' conftest modules)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent


def spark_environment() -> dict[str, str]:
    """What a Spark driver process needs in its environment here."""
    path = os.pathsep.join(p for p in (str(HERE), os.environ.get("PYTHONPATH", "")) if p)
    return {"PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable,
            "SPARK_LOCAL_IP": "127.0.0.1",
            # Spark's Python workers import test helpers (spark_helpers) by module path.
            "PYTHONPATH": path}


def new_session(app: str) -> Any:
    """A local[2] SparkSession for tests, the omconnect source registered."""
    import omconnect_spark

    os.environ.update(spark_environment())
    session = omconnect_spark.local_session(app, conf={"spark.default.parallelism": "2"})
    return session
