"""``omconnect conformance``: run the conformance suite from the command line.

::

    omconnect conformance --transport NAME [--config FILE] [--json [FILE]]
    omconnect conformance --connector CLASS_OR_NAME --config FILE [--json [FILE]]

Runs pytest on the suite with the matching ``--omconnect-*`` options, prints the
case x outcome table, and returns pytest's exit code (non-zero on any failure). The run
is isolated from the current directory's pytest configuration.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.metadata
import json
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

__all__ = ["build_parser", "run_conformance"]


def build_parser(prog: str = "omconnect conformance") -> argparse.ArgumentParser:
    """The argument parser of ``omconnect conformance``."""
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Run the omconnect conformance suite against a transport or a connector.")
    target = parser.add_mutually_exclusive_group(required=True)
    target.add_argument("--transport", metavar="NAME",
                        help="transport to test: an entry-point name or package.module:Class")
    target.add_argument("--connector", metavar="CLASS_OR_NAME",
                        help="connector to test: a name, Kafka Connect alias or Python path")
    parser.add_argument("--config", metavar="FILE",
                        help="options of the transport, or the connector's config "
                             "(YAML, JSON or .properties); required with --connector")
    parser.add_argument("--json", nargs="?", const="-", metavar="FILE",
                        help="write the summary as JSON to FILE, or to standard output "
                             "(pytest's own output then goes to standard error)")
    parser.add_argument("--scale", type=float, help="multiply the volume cases' counts")
    parser.add_argument("--timeout", type=float,
                        help="seconds a case waits for messages that must arrive")
    parser.add_argument("-k", dest="keyword", metavar="EXPRESSION",
                        help="only run cases matching the pytest -k expression")
    parser.add_argument("-v", "--verbose", action="store_true", help="pytest's verbose output")
    return parser


def _plugin_installed() -> bool:
    return any(ep.value == "omconnect.testing.plugin"
               for ep in importlib.metadata.entry_points(group="pytest11"))


def run_conformance(argv: Sequence[str] | None = None) -> int:
    """Run the conformance suite as ``omconnect conformance`` would; the exit code.

    Args:
        argv: The arguments after ``conformance`` (default: ``sys.argv[1:]``).

    Returns:
        0 when every case passed or was skipped; pytest's non-zero exit code otherwise
        (1 when a case failed, 2 when interrupted, 4 on a usage error).

    """
    args = build_parser().parse_args(argv)
    if args.connector and not args.config:
        build_parser().error("--connector needs --config FILE (the connector's configuration)")
    import pytest

    with tempfile.TemporaryDirectory(prefix="omconnect-conformance-") as scratch:
        ini = Path(scratch) / "pytest.ini"
        ini.write_text("[pytest]\n", encoding="utf-8")
        to_stdout = args.json == "-"
        # --json FILE: the plugin writes FILE itself, so the path it prints is the user's.
        report = Path(scratch) / "conformance.json" if to_stdout or not args.json \
            else Path(args.json).resolve()
        # The suite is imported already (this process runs omconnect), so pytest cannot
        # rewrite its asserts; its messages do not need it.
        options = ["-c", str(ini), "--rootdir", scratch, "-p", "no:cacheprovider",
                   "-W", "ignore::pytest.PytestAssertRewriteWarning",
                   "-q" if not args.verbose else "-v", "--omconnect-json", str(report)]
        if report.parent == Path(scratch):
            options.append("--omconnect-json-quiet")  # a scratch file is no news
        if not _plugin_installed():
            options += ["-p", "omconnect.testing.plugin"]
        if args.transport:
            options += ["--omconnect-transport", args.transport]
            if args.config:
                options += ["--omconnect-transport-config", str(Path(args.config).resolve())]
        else:
            options += ["--omconnect-connector", args.connector,
                        "--omconnect-connector-config", str(Path(args.config).resolve())]
        if args.scale is not None:
            options += ["--omconnect-scale", str(args.scale)]
        if args.timeout is not None:
            options += ["--omconnect-timeout", str(args.timeout)]
        if args.keyword:
            options += ["-k", args.keyword]
        redirect = contextlib.redirect_stdout(sys.stderr) if to_stdout \
            else contextlib.nullcontext()
        with redirect:
            code = int(pytest.main(options))
        if args.json and report.exists():
            data = json.loads(report.read_text(encoding="utf-8"))
            data["exit_code"] = code
            text = json.dumps(data, indent=2) + "\n"
            if to_stdout:
                sys.stdout.write(text)
            else:
                report.write_text(text, encoding="utf-8")
    return code


if __name__ == "__main__":
    raise SystemExit(run_conformance())
