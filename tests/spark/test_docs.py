"""docs/spark.md holds the option tables generated from the adapter's ConfigDefs.

Regenerate with: OMCONNECT_REGENERATE_DOCS=1 pytest tests/spark/test_docs.py
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from omconnect_spark.options import READ_CONFIG_DEF, WRITE_CONFIG_DEF
from omconnect_spark.sink import CONFIG_DEF as SINK_CONFIG_DEF

pytestmark = pytest.mark.spark

DOC = Path(__file__).resolve().parents[2] / "docs" / "spark.md"
TABLES = {"read-options": READ_CONFIG_DEF, "write-options": WRITE_CONFIG_DEF,
          "sink-config": SINK_CONFIG_DEF}


def _generated(text: str) -> str:
    for name, definition in TABLES.items():
        pattern = re.compile(rf"(<!-- BEGIN {name}[^\n]*-->\n).*?(<!-- END {name} -->)",
                             re.DOTALL)
        assert pattern.search(text), f"docs/spark.md lacks the {name} markers"
        text = pattern.sub(lambda m, d=definition: m.group(1) + d.documentation_table()
                           + "\n" + m.group(2), text)
    return text


def test_the_option_tables_in_the_docs_are_current():
    text = DOC.read_text()
    expected = _generated(text)
    if os.environ.get("OMCONNECT_REGENERATE_DOCS") == "1":
        DOC.write_text(expected)
        return
    assert text == expected, ("docs/spark.md is out of date; run "
                              "OMCONNECT_REGENERATE_DOCS=1 pytest tests/spark/test_docs.py")
