"""The ``omconnect`` command.

Subcommands: ``standalone`` (run connectors), ``distributed`` (run one worker of a
cluster), ``validate`` (check a connector config),
``plugins`` (list installed plugins), ``offsets`` (show or reset a stopped connector's
offsets), ``status`` (connectors' states and counts) and ``conformance`` (run the
conformance suite against a transport or connector).
See ``docs/cli.md``.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import importlib
import logging
import os
import sys
from collections.abc import Sequence
from typing import NoReturn

from omconnect import __version__
from omconnect.cli import distributed, offsets, plugin_list, standalone, status, validate

__all__ = ["build_parser", "console", "main"]


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``omconnect`` command."""
    parser = argparse.ArgumentParser(
        prog="omconnect",
        description="Move data between systems and message queues with connectors.")
    parser.add_argument("--version", action="version", version=f"omconnect {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    standalone.add_parser(subparsers)
    distributed.add_parser(subparsers)
    validate.add_parser(subparsers)
    plugin_list.add_parser(subparsers)
    offsets.add_parser(subparsers)
    status.add_parser(subparsers)
    subparsers.add_parser(
        "conformance", add_help=False,
        help="run the conformance suite (omconnect conformance --help for its options)")
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


def console() -> NoReturn:
    """The ``omconnect`` executable (and ``python -m omconnect.cli``): :func:`main`, then
    exit without tearing the interpreter down.

    The exit functions run and the streams are flushed as usual, then the process ends
    with :func:`os._exit`. Interpreter shutdown is skipped because client libraries with
    threads of their own can crash it: a pulsar-client thread ending while the
    interpreter finalized called back into Python logging and aborted the process
    (``terminate called without an active exception``, exit 134) after a clean stop.
    """
    try:
        status = main()
    except SystemExit as exc:  # argparse's --help, --version and usage errors
        status = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
        if exc.code is not None and not isinstance(exc.code, int):
            print(exc.code, file=sys.stderr)
    _exit_now(status)


def _exit_now(status: int) -> NoReturn:
    run_exit_functions = getattr(atexit, "_run_exitfuncs", None)
    if run_exit_functions is not None:
        run_exit_functions()
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed or broken pipe
            stream.flush()
    os._exit(status)


def _conformance(argv: list[str]) -> int:
    try:
        importlib.import_module("pytest")
    except ImportError:
        print("omconnect conformance: the conformance suite runs on pytest, which is not "
              "installed; install it with: pip install 'omconnect[test]'", file=sys.stderr)
        return 2
    try:
        cli = importlib.import_module("omconnect.testing.cli")
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.startswith("omconnect.testing"):
            print("omconnect conformance: the conformance suite (omconnect.testing.cli) is "
                  "not part of this installation", file=sys.stderr)
            return 2
        raise
    status: int = cli.run_conformance(argv)
    return status


if __name__ == "__main__":
    console()
