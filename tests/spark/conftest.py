"""Fixtures of the Spark adapter tests: one local[2] SparkSession per test module.

Every test module here sets ``pytestmark = pytest.mark.spark`` (the tox environment
``spark`` runs them). Spark
binds to 127.0.0.1 only, without its web UI, logging at ERROR, with Python workers on
this interpreter.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from typing import Any

import pytest
from spark_support import HERE, new_session, spark_environment  # noqa: F401


@pytest.fixture(scope="module")
def spark(request: pytest.FixtureRequest) -> Iterator[Any]:
    pytest.importorskip("pyspark", reason="the spark extra is not installed")
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.skip("Java is not installed (Spark needs Java 17)")
    session = new_session(f"omconnect-tests-{request.module.__name__}")
    yield session
    session.stop()
