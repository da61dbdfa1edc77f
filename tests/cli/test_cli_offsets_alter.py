"""``omconnect offsets alter``: an operator rewinds a stopped connector from a JSON file
(``show``'s output, edited); bad entries and bad files are refused and change nothing.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from omconnect.cli import main


def _props(path: Path, **settings: object) -> str:
    path.write_text("".join(f"{k}={v}\n" for k, v in settings.items()), encoding="utf-8")
    return str(path)


@pytest.fixture
def pipeline(tmp_path: Path) -> dict[str, str]:
    """A file → embedded → file pipeline that has run once over ``a``, ``bb``."""
    (tmp_path / "in.txt").write_text("a\nbb\n")
    paths = {
        "worker": _props(tmp_path / "w.properties", transport="embedded",
                         **{"embedded.path": tmp_path / "data"}),
        "source": _props(tmp_path / "s.properties", name="src",
                         **{"connector.class": "FileStreamSource"},
                         file=tmp_path / "in.txt", topic="t"),
        "sink": _props(tmp_path / "k.properties", name="snk",
                       **{"connector.class": "FileStreamSink"},
                       file=tmp_path / "out.txt", topics="t"),
        "out": str(tmp_path / "out.txt"),
    }
    _run(paths)
    assert Path(paths["out"]).read_text() == "a\nbb\n"
    return paths


def _run(paths: dict[str, str]) -> None:
    assert main(["standalone", paths["worker"], paths["source"], paths["sink"],
                 "--stop-when-idle", "1"]) == 0


def _show(connector: str, paths: dict[str, str], capsys) -> dict:
    capsys.readouterr()
    assert main(["offsets", "show", connector, "--worker", paths["worker"]]) == 0
    return json.loads(capsys.readouterr().out)


def test_a_source_rewound_from_its_edited_show_output_reads_again(pipeline, tmp_path,
                                                                   capsys):
    shown = _show("src", pipeline, capsys)
    assert shown["offsets"][0]["offset"]["position"] == 5
    shown["offsets"][0]["offset"]["position"] = 2  # the start of "bb"
    edited = tmp_path / "offsets.json"
    edited.write_text(json.dumps(shown))
    assert main(["offsets", "alter", "src", "--worker", pipeline["worker"],
                 "--file", str(edited)]) == 0
    assert "1 offset(s) of connector 'src' altered" in capsys.readouterr().out
    assert _show("src", pipeline, capsys)["offsets"][0]["offset"]["position"] == 2
    _run(pipeline)
    assert Path(pipeline["out"]).read_text() == "a\nbb\nbb\n"


def test_a_sink_rewound_from_standard_input_puts_again(pipeline, capsys, monkeypatch):
    assert _show("snk", pipeline, capsys)["offsets"] == [
        {"partition": {"kafka_topic": "t", "kafka_partition": 0},
         "offset": {"kafka_offset": 2}}]
    monkeypatch.setattr("sys.stdin", io.StringIO(json.dumps({"offsets": [
        {"partition": {"kafka_topic": "t", "kafka_partition": 0},
         "offset": {"kafka_offset": 1}}]})))
    assert main(["offsets", "alter", "snk", "--worker", pipeline["worker"],
                 "--file", "-"]) == 0
    _run(pipeline)
    assert Path(pipeline["out"]).read_text() == "a\nbb\nbb\n"


def test_a_malformed_entry_exits_one_naming_it_and_changes_nothing(pipeline, tmp_path,
                                                                    capsys):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"offsets": [
        {"partition": {"kafka_topic": "t", "kafka_partition": 0},
         "offset": {"kafka_offset": 0}},
        {"partition": {"kafka_topic": "t", "kafka_partition": -1},
         "offset": {"kafka_offset": 0}}]}))
    capsys.readouterr()
    assert main(["offsets", "alter", "snk", "--worker", pipeline["worker"],
                 "--file", str(bad)]) == 1
    assert "offsets[1].partition.kafka_partition" in capsys.readouterr().err
    assert _show("snk", pipeline, capsys)["offsets"][0]["offset"] == {"kafka_offset": 2}


@pytest.mark.parametrize(("content", "message"), [
    (None, "cannot read it"),
    ("{not json", "not JSON"),
    ('{"offsets": []}', "at least one entry"),
    ('[{"partition": {}, "offset": null}]', 'expected {"offsets"'),
])
def test_a_bad_offsets_file_exits_two_naming_it(pipeline, tmp_path, capsys, content,
                                                message):
    path = tmp_path / "offsets.json"
    if content is not None:
        path.write_text(content)
    capsys.readouterr()
    assert main(["offsets", "alter", "src", "--worker", pipeline["worker"],
                 "--file", str(path)]) == 2
    err = capsys.readouterr().err
    assert str(path) in err and message in err
    assert _show("src", pipeline, capsys)["offsets"][0]["offset"]["position"] == 5


def test_alter_without_a_file_and_a_file_for_show_are_usage_errors(pipeline, capsys):
    assert main(["offsets", "alter", "src", "--worker", pipeline["worker"]]) == 2
    assert "alter needs --file" in capsys.readouterr().err
    assert main(["offsets", "show", "src", "--worker", pipeline["worker"],
                 "--file", "x.json"]) == 2
    assert "--file is for 'alter'" in capsys.readouterr().err
