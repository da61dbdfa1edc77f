"""Headless Chromium against a live worker's dashboard: Debian's ``chromium`` (the
``browser`` tox environment installs it) driven by Playwright's Python client, which
uses it in place of a browser of its own.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from typing import Any

import pytest

CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]


def _chromium() -> str | None:
    return os.environ.get("OMCONNECT_CHROMIUM") or shutil.which("chromium") \
        or shutil.which("chromium-browser")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    # tox -e browser sets OMCONNECT_REQUIRE_BROWSER: there, a missing browser fails.
    missing = pytest.fail if os.environ.get("OMCONNECT_REQUIRE_BROWSER") else pytest.skip
    try:
        from playwright import sync_api
    except ImportError:
        missing("the browser tests need playwright (tox -e browser installs it)")
    executable = _chromium()
    if executable is None:
        missing("Chromium is not installed (tox -e browser installs Debian's chromium)")
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable,
                                              args=CHROMIUM_ARGS)
        yield launched
        launched.close()
