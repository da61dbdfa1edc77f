"""The ``omconnect`` command.

Subcommands: ``standalone`` (run connectors), ``validate`` (check a connector config),
``plugins`` (list installed plugins), ``offsets`` (show or reset a stopped connector's
offsets) and ``conformance`` (run the conformance kit against a transport or connector).
See ``docs/cli.md``.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from omconnect import __version__
from omconnect.cli import offsets, plugin_list, standalone, validate

__all__ = ["build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``omconnect`` command."""
    parser = argparse.ArgumentParser(
        prog="omconnect",
        description="Move data between systems and message queues with connectors.")
    parser.add_argument("--version", action="version", version=f"omconnect {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    standalone.add_parser(subparsers)
    validate.add_parser(subparsers)
    plugin_list.add_parser(subparsers)
    offsets.add_parser(subparsers)
    subparsers.add_parser(
        "conformance", add_help=False,
        help="run the conformance kit (omconnect conformance --help for its options)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``omconnect`` command with ``argv`` (default: ``sys.argv[1:]``).

    Returns:
        The exit status: 0 success, 1 failure, 2 invalid usage or configuration.

    """
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list[:1] == ["conformance"]:
        return _conformance(args_list[1:])
    parser = build_parser()
    args = parser.parse_args(args_list)
    status: int = args.run(args)
    return status


def _conformance(argv: list[str]) -> int:
    try:
        cli = importlib.import_module("omconnect.testing.cli")
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.startswith("omconnect.testing"):
            print("omconnect conformance: the conformance kit (omconnect.testing.cli) is "
                  "not part of this installation", file=sys.stderr)
            return 2
        raise
    status: int = cli.run_conformance(argv)
    return status


if __name__ == "__main__":
    sys.exit(main())
