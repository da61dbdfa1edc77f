"""A PNG of benchmark figures: reads the JSON lines the benchmarks end with, plots the
ratios (or the fields ``--metric`` names) as labelled bars.

Each benchmark's last line is one JSON object; collect them in a file (or pipe them in)
and plot:

    python benchmarks/runtime_loop.py --transport embedded | tail -1 >> figures.jsonl
    python benchmarks/runtime_loop.py --transport memory | tail -1 >> figures.jsonl
    python benchmarks/plot.py figures.jsonl --out docs/images/runtime_loop.png

Nested objects are flattened (``transports.kafka.ratio``); a bar is drawn for every
numeric field whose dotted name matches ``--metric`` (a regular expression, default: names
ending in ``ratio``), labelled by the benchmark, the line's transport (when it has one) and
the field. The title gives the load average the lines recorded. Needs matplotlib
(``pip install matplotlib``), which nothing else needs.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any


def flatten(data: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    """Every leaf of ``data`` with its dotted name."""
    if isinstance(data, dict):
        for key, value in data.items():
            yield from flatten(value, f"{prefix}{key}.")
    else:
        yield prefix[:-1], data


def bars(lines: Iterable[dict[str, Any]], metric: str) -> list[tuple[str, float]]:
    """(label, value) of each numeric field matching ``metric``, in reading order."""
    pattern = re.compile(metric)
    found = []
    for line in lines:
        name = str(line.get("benchmark", "benchmark"))
        transport = line.get("transport")
        head = f"{name} ({transport})" if isinstance(transport, str) else name
        for key, value in flatten(line):
            if isinstance(value, bool) or not isinstance(value, int | float):
                continue
            if pattern.search(key):
                found.append((f"{head}: {key}", float(value)))
    return found


def read_lines(paths: list[str]) -> list[dict[str, Any]]:
    """The JSON objects of ``paths`` (``-`` or none: standard input), one per line."""
    texts = [sys.stdin.read()] if not paths or paths == ["-"] else [
        Path(p).read_text(encoding="utf-8") for p in paths]
    lines = []
    for text in texts:
        for raw in text.splitlines():
            raw = raw.strip()
            if raw.startswith("{"):
                lines.append(json.loads(raw))
    return lines


def main() -> int:
    """Plot the figures; the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("files", nargs="*", help="files of JSON lines (default: stdin)")
    parser.add_argument("--out", required=True, help="the PNG to write")
    parser.add_argument("--metric", default=r"ratio$",
                        help="regular expression over dotted field names (default: ratio$)")
    parser.add_argument("--title", default=None, help="the chart's title")
    args = parser.parse_args()
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot.py needs matplotlib: pip install matplotlib", file=sys.stderr)
        return 2
    lines = read_lines(args.files)
    found = bars(lines, args.metric)
    if not found:
        print(f"no numeric field matches {args.metric!r} in {len(lines)} JSON line(s)",
              file=sys.stderr)
        return 1
    loads = sorted({line["load_average"] for line in lines if "load_average" in line})
    title = args.title or "benchmark figures"
    if loads:
        title += f" (load average {', '.join(f'{x:g}' for x in loads)})"
    figure, axes = plt.subplots(figsize=(9, 0.45 * len(found) + 1.2))
    labels = [label for label, _ in found]
    values = [value for _, value in found]
    axes.barh(range(len(found)), values, color="#0969da")
    axes.set_yticks(range(len(found)), labels)
    axes.invert_yaxis()
    for index, value in enumerate(values):
        axes.text(value, index, f" {value:g}", va="center")
    axes.set_title(title)
    axes.margins(x=0.15)
    figure.tight_layout()
    figure.savefig(args.out, dpi=110)
    print(f"wrote {args.out}: {len(found)} bar(s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
