"""``omconnect plugins``: the installed connectors, transports, converters, transforms and
predicates, with their classes and versions.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from omconnect.runtime.plugin_listing import KINDS, list_plugins

__all__ = ["add_parser", "run"]


def add_parser(subparsers: Any) -> None:
    """Add the ``plugins`` subcommand to ``subparsers``."""
    parser = subparsers.add_parser(
        "plugins", help="list installed plugins with their versions",
        description="List the installed plugins (registered through entry points).")
    parser.add_argument("--kind", choices=list(KINDS), action="append",
                        help="only this kind (repeatable)")
    parser.add_argument("--json", action="store_true", help="print a JSON array")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Run the ``plugins`` subcommand; returns the exit status."""
    plugins = list_plugins(args.kind)
    if args.json:
        print(json.dumps([p.to_dict() for p in plugins], indent=2))
        return 0
    rows = [(p.kind, p.name, p.type, p.version or "-",
             p.class_name + (f"  ({p.problem})" if p.problem else "")) for p in plugins]
    header = ("KIND", "NAME", "TYPE", "VERSION", "CLASS")
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(4)]
    for row in [header, *rows]:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=False))
              + "  " + row[4])
    return 0
