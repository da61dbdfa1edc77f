"""File → transport → file through the ``omconnect`` command: exact lines, both embedded
transports, Kafka Connect's own example files, and the README quick start.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from e2e_helpers import pipeline_files

from omconnect.cli import main

REPO = Path(__file__).resolve().parents[2]


def _lines(n: int) -> list[str]:
    samples = ["ascii", "naïve café", "Grüße", "日本語テキスト", "emoji 🚀✨", "tab\tinside",
               "", "  leading and trailing  ", "quote \" and backslash \\"]
    return [f"{i:05d} {samples[i % len(samples)]}" if i % 50 else "" for i in range(n)]


@pytest.mark.parametrize("transport", ["memory", "embedded"])
def test_ten_thousand_lines_arrive_exactly(tmp_path, transport):
    lines = _lines(10_000)
    (tmp_path / "in.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    args = pipeline_files(tmp_path, transport=transport, batch_size=500)
    assert main(["standalone", *args, "--stop-when-idle", "2"]) == 0
    assert (tmp_path / "out.txt").read_text(encoding="utf-8") == \
        (tmp_path / "in.txt").read_text(encoding="utf-8")


def test_a_second_run_resumes_and_adds_only_new_lines(tmp_path):
    (tmp_path / "in.txt").write_text("a\nb\n", encoding="utf-8")
    args = pipeline_files(tmp_path)
    assert main(["standalone", *args, "--stop-when-idle", "1"]) == 0
    with (tmp_path / "in.txt").open("a", encoding="utf-8") as f:
        f.write("c\n")
    assert main(["standalone", *args, "--stop-when-idle", "1"]) == 0
    assert (tmp_path / "out.txt").read_text(encoding="utf-8") == "a\nb\nc\n"


def test_kafka_connect_example_files_run_unchanged(tmp_path, monkeypatch):
    for name in ("connect-standalone.properties", "connect-file-source.properties",
                 "connect-file-sink.properties"):
        shutil.copy(REPO / "examples" / "kafka-connect" / name, tmp_path / name)
    (tmp_path / "test.txt").write_text("hello\nwörld\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)  # the files name test.txt and test.sink.txt relatively
    status = main(["standalone", "connect-standalone.properties",
                   "connect-file-source.properties", "connect-file-sink.properties",
                   "--stop-when-idle", "1"])
    assert status == 0
    assert (tmp_path / "test.sink.txt").read_text(encoding="utf-8") == "hello\nwörld\n"


def test_the_readme_quick_start_copies_its_input(tmp_path, monkeypatch):
    shutil.copytree(REPO / "examples" / "quickstart", tmp_path / "examples" / "quickstart")
    monkeypatch.chdir(tmp_path)  # the quick start runs from the repository's root
    quickstart = "examples/quickstart/"
    status = main(["standalone", quickstart + "worker.properties",
                   quickstart + "file-source.properties", quickstart + "file-sink.properties",
                   "--stop-when-idle", "2"])
    assert status == 0
    assert (tmp_path / "quickstart-output.txt").read_bytes() == \
        (tmp_path / "examples" / "quickstart" / "input.txt").read_bytes()


def test_the_readme_opens_with_the_quick_start_and_the_test_command():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    commands = [line for line in readme.splitlines() if line.startswith(("python3 ", "pip "))]
    assert "omconnect standalone examples/quickstart/worker.properties" in commands[0]
    assert "diff examples/quickstart/input.txt quickstart-output.txt" in commands[0]
    assert commands[1] == "python3 -m pip install --quiet tox tox-uv && python3 -m tox"
