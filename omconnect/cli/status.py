"""``omconnect status``: the dashboard's table (``GET /ui``) as text, for scripts and
terminals.

``--url URL`` asks a running worker's REST API (``GET /summary`` twice, ``--interval``
apart, for the records/s column); for a worker of a cluster, any worker answers for the
whole cluster, and a second table lists every worker (state, leader, what it runs, its
rebalances); ``--worker WORKER_CONFIG`` reads the statuses the
workers of that config recorded in the transport (a standalone worker's status
namespace, or a cluster's status log when the file has ``group.id``), without a REST API
(states only: counts live in the running workers). ``--json`` prints the summary as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from typing import Any

from omconnect.config.files import load_config_file
from omconnect.errors import ConfigError, ConnectError
from omconnect.runtime import StandaloneHerder
from omconnect.runtime.distributed import DistributedHerder
from omconnect.runtime.herder_api import Herder
from omconnect.runtime.worker_config import WorkerConfig

__all__ = ["add_parser", "format_table", "run"]

TOKEN_ENV = "OMCONNECT_REST_TOKEN"
"""The environment variable holding the REST API's bearer token, when auth is on."""

_COLUMNS = ("CONNECTOR/TASK", "TYPE", "STATE", "WORKER", "RECORDS/S", "RECORDS", "LAG",
            "ERRORS", "DEAD-LETTERED")
_WORKER_COLUMNS = ("WORKER", "URL", "STATE", "LEADER", "CONNECTORS", "TASKS", "REBALANCES",
                   "REBALANCING-S", "ANSWERS")


def add_parser(subparsers: Any) -> None:
    """Add the ``status`` subcommand to ``subparsers``."""
    parser = subparsers.add_parser(
        "status", help="print connectors' and tasks' states and counts",
        description="Print the table the dashboard shows: each connector and task with "
        "state, worker, records/s, records, lag, errors and dead-lettered records.")
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--url", help="a running worker's REST API, e.g. "
                       "http://127.0.0.1:8083")
    where.add_argument("--worker", metavar="WORKER_CONFIG",
                       help="read the recorded states of this worker config's connectors "
                       "(no REST API needed; no counts)")
    parser.add_argument("--interval", type=float, default=1.0, metavar="SECONDS",
                        help="--url: seconds between the two reads that give records/s "
                        "(default 1; 0 leaves the column empty)")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Run the ``status`` subcommand; returns the exit status."""
    try:
        if args.url:
            first = _fetch(args.url)
            rates: dict[str, float] = {}
            if args.interval > 0 and not args.json:
                time.sleep(args.interval)
                second = _fetch(args.url)
                rates = _rates(first, second)
                first = second
            data = first
        else:
            data, rates = _recorded(args.worker), {}
    except (ConfigError, ValueError) as exc:
        print(f"omconnect status: {exc}", file=sys.stderr)
        return 2
    except (ConnectError, OSError) as exc:
        print(f"omconnect status: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(data, indent=2))
    else:
        print("\n".join(format_table(data, rates)))
    return 0


def _fetch(url: str) -> dict[str, Any]:
    request = urllib.request.Request(url.rstrip("/") + "/summary",
                                     headers={"Accept": "application/json"})
    token = os.environ.get(TOKEN_ENV)
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            data: dict[str, Any] = json.load(response)
            return data
    except urllib.error.HTTPError as exc:
        hint = f"; set {TOKEN_ENV} to the REST API's token" if exc.code == 401 else ""
        raise ConnectError(f"{url}: HTTP {exc.code} {exc.reason}{hint}") from exc
    except urllib.error.URLError as exc:
        raise ConnectError(f"cannot reach {url}: {exc.reason}") from exc


def _rates(first: dict[str, Any], second: dict[str, Any]) -> dict[str, float]:
    elapsed = second["taken_at"] - first["taken_at"]
    before = {c["name"]: c["records"] for c in first["connectors"]}
    return {c["name"]: max(0, c["records"] - before[c["name"]]) / elapsed
            for c in second["connectors"] if c["name"] in before and elapsed > 0}


def _recorded(worker_file: str) -> dict[str, Any]:
    values = load_config_file(worker_file)
    distributed = values.get("group.id") is not None
    config = WorkerConfig.parse(values, origin=worker_file, distributed=distributed)
    herder: Herder = DistributedHerder(config) if distributed else StandaloneHerder(config)
    try:
        herder.open()
        connectors = []
        for name in sorted(herder.connectors()):
            status = herder.connector_status(name)
            connectors.append({
                "name": name, "type": status.type, "state": status.connector.state.value,
                "worker_id": status.connector.worker_id, "records": None, "errors": None,
                "dead_lettered": None, "lag": None,
                "tasks": [{"id": t.id, "state": t.state.value, "worker_id": t.worker_id,
                           "records": None, "errors": None, "dead_lettered": None,
                           "lag": None} for t in status.tasks]})
    finally:
        herder.stop()
    return {"worker_id": None, "transport": config.transport_name, "taken_at": time.time(),
            "connectors": connectors}


def _text(value: Any) -> str:
    if value is None:
        return "-"
    return f"{value:.1f}" if isinstance(value, float) else str(value)


def format_table(data: dict[str, Any], rates: dict[str, float] | None = None) -> list[str]:
    """The lines of the table: one per connector, one per task under it; for a cluster,
    then a blank line and one line per worker.
    """
    rates = rates or {}
    lines = _connector_table(data, rates)
    if data.get("mode") == "distributed" and data.get("workers"):
        lines.append("")
        lines += _aligned([_WORKER_COLUMNS, *(
            [w["id"], _text(w.get("url")), w["state"], "yes" if w["leader"] else "",
             str(w["connectors"]), str(w["tasks"]), str(w["rebalances"]),
             f"{w['rebalance_seconds']:.1f}",
             "yes" if w.get("reachable", True) else "no"] for w in data["workers"])],
            numeric=set(range(4, 8)))
    return lines


def _connector_table(data: dict[str, Any], rates: dict[str, float]) -> list[str]:
    rows: list[Sequence[str]] = [_COLUMNS]
    for c in data["connectors"]:
        rows.append([c["name"], c["type"], c["state"], _text(c["worker_id"]),
                     _text(rates.get(c["name"])), _text(c["records"]), _text(c["lag"]),
                     _text(c["errors"]), _text(c["dead_lettered"])])
        for t in c["tasks"]:
            rows.append([f"  task {t['id']}", "", t["state"], _text(t["worker_id"]), "",
                         _text(t["records"]), _text(t["lag"]), _text(t["errors"]),
                         _text(t["dead_lettered"])])
    return _aligned(rows, numeric=set(range(4, len(_COLUMNS))))


def _aligned(rows: Sequence[Sequence[str]], *, numeric: set[int]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return ["  ".join(cell.rjust(w) if i in numeric else cell.ljust(w)
                      for i, (cell, w) in enumerate(zip(row, widths, strict=True))).rstrip()
            for row in rows]
