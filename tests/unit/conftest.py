"""Fixtures for the spine's unit tests."""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from omconnect import plugins

FAKE_PACKAGE = "omc_fake_plugins"

_MODULES = {
    "__init__.py": "",
    "source.py": '''
        from omconnect import ConfigDef, ConfigType, SourceConnector, SourceTask

        __version__ = "3.1.4"


        class TickTask(SourceTask):
            def version(self): return "3.1.4"
            def start(self, config): pass
            def poll(self): return None
            def stop(self): pass


        class TickSourceConnector(SourceConnector):
            def version(self): return "3.1.4"
            def config_def(self):
                return ConfigDef().define("topic", ConfigType.STRING)
            def start(self, config): pass
            def task_class(self): return TickTask
            def task_configs(self, max_tasks): return [{}]
            def stop(self): pass

            class Nested:
                """A class inside a class, for dotted attribute paths."""


        class HalfConnector(SourceConnector):
            def version(self): return "0"
            def config_def(self): return ConfigDef()


        class NotAConnector:
            pass
    ''',
    "other.py": '''
        from omc_fake_plugins.source import TickSourceConnector


        class TwinSourceConnector(TickSourceConnector):
            pass
    ''',
    "twin.py": '''
        from omc_fake_plugins.source import TickSourceConnector as TwinSourceConnector
    ''',
    "broken.py": '''
        import omc_dependency_that_is_not_installed  # a bug in the plugin, not an extra

        class Thing: pass
    ''',
    "needy.py": '''
        from omconnect.plugins import require

        driver = require("omc_driver_that_is_not_installed", plugin="needy transport",
                         extra="needy")

        class Thing: pass
    ''',
}

_ENTRY_POINTS = f"""
[omconnect.connectors]
tick = {FAKE_PACKAGE}.source:TickSourceConnector
tick-alias = {FAKE_PACKAGE}.source:TickSourceConnector
half = {FAKE_PACKAGE}.source:HalfConnector
not-a-connector = {FAKE_PACKAGE}.source:NotAConnector
twin-a = {FAKE_PACKAGE}.twin:TwinSourceConnector
twin-b = {FAKE_PACKAGE}.other:TwinSourceConnector
broken = {FAKE_PACKAGE}.broken:Thing
needy = {FAKE_PACKAGE}.needy:Thing
"""


def _forget_fake_modules() -> None:
    for name in [m for m in sys.modules if m == FAKE_PACKAGE or m.startswith(FAKE_PACKAGE + ".")]:
        del sys.modules[name]


@pytest.fixture
def fake_plugins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A third-party distribution installed on ``sys.path`` with connector entry points.

    Discovery is real (``importlib.metadata`` reads the ``.dist-info`` directory); the
    plugin cache is cleared before and after, so other tests see the real installation.
    """
    package = tmp_path / FAKE_PACKAGE
    package.mkdir()
    for name, text in _MODULES.items():
        (package / name).write_text(textwrap.dedent(text))
    dist_info = tmp_path / f"{FAKE_PACKAGE}-1.0.dist-info"
    dist_info.mkdir()
    (dist_info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {FAKE_PACKAGE}\nVersion: 1.0\n")
    (dist_info / "entry_points.txt").write_text(_ENTRY_POINTS)
    (dist_info / "top_level.txt").write_text(FAKE_PACKAGE + "\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    plugins._entry_points.cache_clear()
    _forget_fake_modules()
    try:
        yield tmp_path
    finally:
        plugins._entry_points.cache_clear()
        _forget_fake_modules()
