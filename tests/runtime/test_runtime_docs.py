"""docs/runtime.md holds the config tables generated from the ConfigDefs, kept current.

Regenerate with: OMCONNECT_REGENERATE_DOCS=1 pytest tests/runtime/test_docs.py
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from omconnect.runtime import COMMON_CONFIG_DEF, SINK_CONFIG_DEF, WORKER_CONFIG_DEF

DOC = Path(__file__).resolve().parents[2] / "docs" / "runtime.md"
TABLES = {
    "worker-config": WORKER_CONFIG_DEF,
    "connector-config": COMMON_CONFIG_DEF,
    "sink-config": SINK_CONFIG_DEF,
}


def _generated(text: str) -> str:
    for name, definition in TABLES.items():
        pattern = re.compile(rf"(<!-- BEGIN {name}[^\n]*-->\n).*?(<!-- END {name} -->)",
                             re.DOTALL)
        assert pattern.search(text), f"docs/runtime.md lacks the {name} markers"
        text = pattern.sub(lambda m, d=definition: m.group(1) + d.documentation_table()
                           + "\n" + m.group(2), text)
    return text


def test_the_config_tables_in_the_docs_are_current():
    text = DOC.read_text()
    expected = _generated(text)
    if os.environ.get("OMCONNECT_REGENERATE_DOCS") == "1":
        DOC.write_text(expected)
        return
    assert text == expected, ("docs/runtime.md is out of date; run "
                              "OMCONNECT_REGENERATE_DOCS=1 pytest tests/runtime/test_docs.py")
