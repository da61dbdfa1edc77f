"""Helpers for end-to-end tests: config files, the ``omconnect`` command in a subprocess,
and the check that an output file holds the input with re-deliveries only.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

OMCONNECT = [sys.executable, "-m", "omconnect.cli"]


def write_properties(path: Path, settings: Mapping[str, object]) -> Path:
    path.write_text("".join(f"{k}={v}\n" for k, v in settings.items()), encoding="utf-8")
    return path


def pipeline_files(workdir: Path, *, transport: str = "embedded",
                   flush_ms: int = 1000, batch_size: int = 2000,
                   extra_worker: Mapping[str, object] | None = None) -> list[str]:
    """Worker, file-source and file-sink configs for in.txt → topic → out.txt."""
    worker = {"transport": transport, "key.converter": "string",
              "value.converter": "string", "offset.flush.interval.ms": flush_ms,
              **(extra_worker or {})}
    if transport == "embedded":
        worker["embedded.path"] = workdir / "data"
    elif transport == "memory":  # memory transports of one process share a namespace
        worker["memory.namespace"] = workdir
    return [
        str(write_properties(workdir / "worker.properties", worker)),
        str(write_properties(workdir / "source.properties", {
            "name": "lines-in", "connector.class": "FileStreamSource",
            "file": workdir / "in.txt", "topic": "lines", "batch.size": batch_size})),
        str(write_properties(workdir / "sink.properties", {
            "name": "lines-out", "connector.class": "FileStreamSink",
            "file": workdir / "out.txt", "topics": "lines"})),
    ]


def start_worker(args: Sequence[str], log: Path) -> subprocess.Popen[bytes]:
    """``omconnect standalone ARGS`` in a subprocess, its stderr going to ``log``."""
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    with log.open("ab") as err:
        return subprocess.Popen([*OMCONNECT, "standalone", *args], stdout=subprocess.DEVNULL,
                                stderr=err, stdin=subprocess.DEVNULL, env=env)


def run_cli(args: Sequence[str], timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """``omconnect ARGS`` to completion, output captured."""
    return subprocess.run([*OMCONNECT, *args], capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL, check=False)


def redelivery_runs(expected: Sequence[str], got: Sequence[str]) -> int:
    """Check that ``got`` is ``expected`` in order with only contiguous re-deliveries:
    each line is the next one after the previous, or a jump back to an earlier line (a
    restart re-delivering from its last committed offset); never a jump forward (a loss).

    Returns:
        The number of jumps back (re-delivered runs).

    Raises:
        AssertionError: A line is missing, unknown, or out of order.

    """
    index = {line: i for i, line in enumerate(expected)}
    assert len(index) == len(expected), "test input lines must be unique"
    furthest = -1  # the highest input index written so far
    previous = -1
    jumps = 0
    for position, line in enumerate(got):
        i = index.get(line)
        assert i is not None, f"output line {position} is not an input line: {line!r}"
        if i != previous + 1:
            assert i <= furthest, (
                f"output line {position} ({line!r}) skips ahead: input lines "
                f"{furthest + 1}..{i - 1} are missing before it")
            jumps += 1
        previous = i
        furthest = max(furthest, i)
    assert furthest == len(expected) - 1, (
        f"input lines {furthest + 1}.. are missing from the output "
        f"({len(expected) - 1 - furthest} lines)")
    return jumps
