"""Copycat's own example files (Kafka Connect's first release, ``org.apache.kafka.copycat``
class names and serializer keys) run unchanged through ``omconnect standalone``."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from omconnect import plugins

COPYCAT = Path(__file__).parent / "copycat"
FILES = ["copycat-standalone.properties", "copycat-file-source.properties",
         "copycat-file-sink.properties"]


def test_copycat_example_files_copy_a_file_unchanged(tmp_path: Path) -> None:
    for name in FILES:
        shutil.copy(COPYCAT / name, tmp_path / name)
    lines = "".join(f"line {n}\n" for n in range(500))
    (tmp_path / "test.txt").write_text(lines, encoding="utf-8")
    result = subprocess.run(
        [sys.executable, "-m", "omconnect.cli", "standalone", *FILES, "--stop-when-idle", "2",
         "--no-progress"], cwd=tmp_path, capture_output=True, text=True, timeout=240)
    assert result.returncode == 0, result.stderr[-3000:]
    assert (tmp_path / "test.sink.txt").read_text(encoding="utf-8") == lines
    for key in ("key.serializer", "value.serializer", "key.deserializer",
                "value.deserializer"):
        assert f"{key} is a setting of Kafka Connect's first release (Copycat)" in \
            result.stderr, key


@pytest.mark.parametrize(("group", "connect_name"), [
    (plugins.CONVERTERS, "org.apache.kafka.connect.json.JsonConverter"),
    (plugins.CONVERTERS, "org.apache.kafka.connect.storage.StringConverter"),
    (plugins.CONVERTERS, "org.apache.kafka.connect.converters.ByteArrayConverter"),
    (plugins.CONNECTORS, "org.apache.kafka.connect.file.FileStreamSinkConnector"),
    (plugins.TRANSFORMS, "org.apache.kafka.connect.transforms.RegexRouter"),
    (plugins.PREDICATES, "org.apache.kafka.connect.transforms.predicates.HasHeaderKey"),
])
def test_every_connect_class_name_has_its_copycat_spelling(group: str, connect_name: str
                                                            ) -> None:
    copycat_name = connect_name.replace(".connect.", ".copycat.", 1)
    assert plugins.load(group, copycat_name) is plugins.load(group, connect_name)
