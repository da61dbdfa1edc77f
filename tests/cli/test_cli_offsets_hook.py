"""``omconnect offsets reset`` asks the connector's ``alter_offsets`` hook first: a refusal
exits 1 naming it and keeps the offsets; a connector that does not confirm gets a note.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from omconnect_file.source import FileStreamSourceConnector

from omconnect.cli import main
from omconnect.errors import ConfigError


class ExternallyTrackedSource(FileStreamSourceConnector):
    """A file source that (as if it kept positions in another system) cannot be reset."""

    def alter_offsets(self, config: Mapping[str, Any],
                      offsets: Sequence[tuple[Mapping[str, Any], Mapping[str, Any] | None]]
                      ) -> bool:
        if any(offset is None for _, offset in offsets):
            raise ConfigError("positions are kept in the audit log and cannot be reset")
        return True


class SilentSource(FileStreamSourceConnector):
    """A file source with the SPI's default hook (it confirms nothing)."""

    def alter_offsets(self, config: Mapping[str, Any],
                      offsets: Sequence[tuple[Mapping[str, Any], Mapping[str, Any] | None]]
                      ) -> bool:
        return False


def _props(path: Path, **settings: object) -> str:
    path.write_text("".join(f"{k}={v}\n" for k, v in settings.items()), encoding="utf-8")
    return str(path)


def _run_once(tmp_path: Path, connector_class: str) -> str:
    (tmp_path / "in.txt").write_text("a\nbb\n")
    worker = _props(tmp_path / "w.properties", transport="embedded",
                    **{"embedded.path": tmp_path / "data"})
    source = _props(tmp_path / "s.properties", **{
        "name": "src", "connector.class": connector_class, "file": tmp_path / "in.txt",
        "topic": "t"})
    assert main(["standalone", worker, source, "--stop-when-idle", "1"]) == 0
    return worker


def test_a_reset_the_connector_refuses_exits_one_and_keeps_the_offsets(tmp_path, capsys):
    worker = _run_once(tmp_path, "test_cli_offsets_hook:ExternallyTrackedSource")
    capsys.readouterr()
    assert main(["offsets", "reset", "src", "--worker", worker]) == 1
    err = capsys.readouterr().err
    assert "'src' refused these offsets" in err
    assert "cannot be reset" in err
    assert main(["offsets", "show", "src", "--worker", worker]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["offsets"][0]["offset"]["position"] == 5


def test_a_reset_the_connector_does_not_confirm_says_so(tmp_path, capsys):
    worker = _run_once(tmp_path, "test_cli_offsets_hook:SilentSource")
    capsys.readouterr()
    assert main(["offsets", "reset", "src", "--worker", worker]) == 0
    out = capsys.readouterr().out
    assert "did not confirm" in out
    assert main(["offsets", "show", "src", "--worker", worker]) == 0
    assert json.loads(capsys.readouterr().out) == {"offsets": []}
