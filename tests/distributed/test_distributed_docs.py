"""docs/distributed.md holds the distributed worker's settings table generated from
DISTRIBUTED_CONFIG_DEF, kept current.

Regenerate with: OMCONNECT_REGENERATE_DOCS=1 pytest tests/distributed/test_distributed_docs.py
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from omconnect.runtime.worker_config import DISTRIBUTED_CONFIG_DEF

DOC = Path(__file__).resolve().parents[2] / "docs" / "distributed.md"
PATTERN = re.compile(r"(<!-- BEGIN distributed-config[^\n]*-->\n).*?"
                     r"(<!-- END distributed-config -->)", re.DOTALL)


def test_the_settings_table_is_current() -> None:
    text = DOC.read_text()
    assert PATTERN.search(text), "docs/distributed.md lacks the distributed-config markers"
    expected = PATTERN.sub(lambda m: m.group(1) + DISTRIBUTED_CONFIG_DEF.documentation_table()
                           + "\n" + m.group(2), text)
    if os.environ.get("OMCONNECT_REGENERATE_DOCS") == "1":
        DOC.write_text(expected)
        return
    assert text == expected, ("docs/distributed.md is out of date; run "
                              "OMCONNECT_REGENERATE_DOCS=1 pytest "
                              "tests/distributed/test_distributed_docs.py")
