"""``omconnect offsets show|alter|reset``: a connector's committed offsets, read, set or
forgotten.

Works offline, through the worker's transport: run it while no worker runs the connector.
A connector whose last recorded status says it runs in a live process on this machine is
refused (stop that worker first); one left RUNNING by a worker that was killed is not.
Given a cluster's worker file (with ``group.id``), it reads the cluster's logs, and
``alter``/``reset`` need the connector stopped (through any worker's REST API) and given
up by every worker.

``show`` prints Kafka Connect's ``GET /connectors/{name}/offsets`` JSON: for a source, the
committed offset per source partition; for a sink, the group's position per partition.
``alter --file F`` sets the offsets listed in F, a JSON document of the same shape (Kafka
Connect's ``PATCH`` body; ``-`` reads standard input), so ``show``'s output, edited, can be
given back; an entry whose offset is ``null`` resets that partition. ``reset`` forgets
them all: a source starts from scratch, a sink from the earliest message kept. For both,
the entries are checked as the REST API checks them and the connector's ``alter_offsets``
hook is asked first; either may refuse (exit status 1, naming the entry), and then
nothing changes.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys
from pathlib import Path
from typing import Any

from omconnect.config.files import load_config_file
from omconnect.errors import ConfigError, ConnectError
from omconnect.runtime import StandaloneHerder
from omconnect.runtime.distributed import DistributedHerder
from omconnect.runtime.herder_api import Herder
from omconnect.runtime.worker_config import WorkerConfig

__all__ = ["add_parser", "run"]


def add_parser(subparsers: Any) -> None:
    """Add the ``offsets`` subcommand to ``subparsers``."""
    parser = subparsers.add_parser(
        "offsets", help="show, alter or reset a stopped connector's offsets",
        description="Read, set or reset the committed offsets of a connector that no "
        "worker is running.")
    parser.add_argument("action", choices=("show", "alter", "reset"))
    parser.add_argument("connector", metavar="CONNECTOR", help="the connector's name")
    parser.add_argument("--worker", metavar="WORKER_CONFIG", required=True,
                        help="the worker config the connector ran with")
    parser.add_argument("--file", metavar="OFFSETS_JSON",
                        help="alter: the offsets to set, as 'show' prints them "
                        '({"offsets": [{"partition": {...}, "offset": {...}}]}); - for '
                        "standard input")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Run the ``offsets`` subcommand; returns the exit status."""
    entries: list[Any] = []
    if args.action == "alter":
        try:
            entries = _read_entries(args.file)
        except ValueError as exc:
            print(f"omconnect offsets: {exc}", file=sys.stderr)
            return 2
    elif args.file is not None:
        print(f"omconnect offsets: --file is for 'alter', not {args.action!r}",
              file=sys.stderr)
        return 2
    herder: Herder
    try:
        values = load_config_file(args.worker)
        distributed = values.get("group.id") is not None  # a cluster's worker file
        config = WorkerConfig.parse(values, origin=args.worker, distributed=distributed)
        herder = DistributedHerder(config) if distributed else StandaloneHerder(config)
    except ConfigError as exc:
        print(f"omconnect offsets: {args.worker}: {exc}", file=sys.stderr)
        return 2
    try:
        herder.open()
        if args.connector not in herder.connectors():
            known = ", ".join(herder.connectors()) or "none"
            print(f"omconnect offsets: no connector named {args.connector!r} in this "
                  f"worker's config store (known: {known})", file=sys.stderr)
            return 1
        if args.action == "show":
            print(json.dumps(herder.offsets(args.connector).to_dict(), indent=2))
            return 0
        running = None if distributed else _live_worker(herder, args.connector)
        if running is not None:
            print(f"omconnect offsets: connector {args.connector!r} is running in worker "
                  f"{running}; stop that worker first", file=sys.stderr)
            return 1
        # force: no live worker runs it (above; a cluster's herder checks that the
        # connector is stopped and given up by every worker). The entries' check or the
        # connector's alter_offsets hook may refuse them (a ConfigError, exit 1).
        if args.action == "alter":
            handled = herder.alter_offsets(args.connector, entries, force=True)
            print(f"{len(entries)} offset(s) of connector {args.connector!r} altered")
        else:
            handled = herder.reset_offsets(args.connector, force=True)
            print(f"offsets of connector {args.connector!r} reset")
        if not handled:
            print("the connector did not confirm it keeps no offsets elsewhere: if it "
                  "does, change them in the system it uses too")
        return 0
    except ConnectError as exc:
        print(f"omconnect offsets: {exc}", file=sys.stderr)
        return 1
    finally:
        herder.stop()


def _read_entries(path: str | None) -> list[Any]:
    """The entries of an offsets document (``{"offsets": [...]}``) at ``path``.

    Raises:
        ValueError: No path, an unreadable file, not JSON, or not of that shape (the
            message names the file and says what is expected).

    """
    if path is None:
        raise ValueError("alter needs --file OFFSETS_JSON (the offsets to set, as 'show' "
                         "prints them; - for standard input)")
    where = "standard input" if path == "-" else path
    try:
        text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
        document = json.loads(text)
    except OSError as exc:
        raise ValueError(f"{where}: cannot read it: {exc.strerror or exc}") from exc
    except json.JSONDecodeError as exc:
        raise ValueError(f"{where}: not JSON: {exc}") from exc
    entries = document.get("offsets") if isinstance(document, dict) else None
    if not isinstance(entries, list) or not entries:
        raise ValueError(f'{where}: expected {{"offsets": [{{"partition": {{...}}, '
                         f'"offset": {{...}}}}, ...]}} with at least one entry, as '
                         f"'omconnect offsets show' prints it")
    return entries


def _live_worker(herder: Herder, name: str) -> str | None:
    """The id of a live worker on this machine that runs ``name``, if its last recorded
    status says so.
    """
    status = herder.connector_status(name)
    workers = {status.connector.worker_id} if status.connector.state.value in (
        "RUNNING", "PAUSED") else set()
    workers |= {t.worker_id for t in status.tasks if t.state.value in ("RUNNING", "PAUSED")}
    for worker in workers:
        host, _, pid = worker.rpartition(":")
        if host == socket.gethostname() and pid.isdigit() and int(pid) != os.getpid() \
                and _alive(int(pid)):
            return worker
    return None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
