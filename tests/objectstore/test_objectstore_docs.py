"""docs/connectors/objectstore.md holds the settings table generated from the ConfigDef.

Regenerate with: OMCONNECT_REGENERATE_DOCS=1 pytest tests/objectstore/test_docs.py
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from omconnect_objectstore.config import OBJECTSTORE_CONFIG_DEF

DOC = Path(__file__).resolve().parents[2] / "docs" / "connectors" / "objectstore.md"


def test_the_settings_table_in_the_docs_is_current():
    text = DOC.read_text()
    pattern = re.compile(r"(<!-- BEGIN objectstore-config[^\n]*-->\n).*?"
                         r"(<!-- END objectstore-config -->)", re.DOTALL)
    assert pattern.search(text), "the doc lacks the objectstore-config markers"
    expected = pattern.sub(lambda m: m.group(1) + OBJECTSTORE_CONFIG_DEF.documentation_table()
                           + "\n" + m.group(2), text)
    if os.environ.get("OMCONNECT_REGENERATE_DOCS") == "1":
        DOC.write_text(expected)
        return
    assert text == expected, ("docs/connectors/objectstore.md is out of date; run "
                              "OMCONNECT_REGENERATE_DOCS=1 pytest tests/objectstore/test_docs.py")
