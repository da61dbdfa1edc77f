"""Fixtures of the Spark adapter tests: one local[2] SparkSession per test module.

Every test module here sets ``pytestmark = pytest.mark.spark`` (the tox environment
``spark`` runs them). Spark
binds to 127.0.0.1 only, without its web UI, logging at ERROR, with Python workers on
this interpreter.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

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
    from pyspark.sql import SparkSession

    os.environ.update(spark_environment())
    session = (SparkSession.builder.master("local[2]").appName(app)
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.driver.host", "127.0.0.1")
               .config("spark.driver.bindAddress", "127.0.0.1")
               .config("spark.sql.shuffle.partitions", "2")
               .config("spark.default.parallelism", "2")
               .getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    omconnect_spark.register(session)
    return session


@pytest.fixture(scope="module")
def spark(request: pytest.FixtureRequest) -> Iterator[Any]:
    pytest.importorskip("pyspark", reason="the spark extra is not installed")
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.skip("Java is not installed (Spark needs Java 17)")
    session = new_session(f"omconnect-tests-{request.module.__name__}")
    yield session
    session.stop()
