"""``omconnect distributed``: run one worker of a cluster until told to stop.

Kafka Connect's ``connect-distributed``: every worker started with the same ``group.id``
on one transport joins the cluster; connectors are created, changed and watched through
the REST API of any worker (there is no leader to find), and the cluster spreads their
instances and tasks over its live workers, moving those of a worker that left or died.

Order of events:

1. The worker config is loaded and validated as a distributed worker's (``group.id``
   required, ``rest.*`` read); a problem is printed (file, key, fix) and the command
   exits with status 2 before anything starts.
2. The REST API binds ``rest.host.name:rest.port`` (0: any free port) and answers at once
   (``GET /health`` says ``starting`` until the worker has joined).
3. The worker reads the cluster's config and status logs to their end, joins the
   cluster's group and takes its share of the work.
4. While running, each local task logs a ``progress`` line every ``--status-interval``
   seconds.
5. SIGINT or SIGTERM stops it cleanly: its tasks stop within
   ``task.shutdown.graceful.timeout.ms`` and commit what is safe, then it leaves the
   group; the others take its work after ``scheduled.rebalance.max.delay.ms`` (or give
   it back if it returns in time). A second signal exits at once.

Exit status: 0 after a clean stop; 1 when the worker could not run (its transport could
not be reached or cannot host a cluster, the REST port is taken); 2 for an invalid
config or option.
"""

from __future__ import annotations

import argparse
import gc
import logging
import sys
import time
from pathlib import Path
from typing import Any

from omconnect.cli.log_output import (
    FORMATS,
    configure_logging,
    quiet_client_loggers,
    remove_cli_logging,
)
from omconnect.cli.progress import ProgressTracker
from omconnect.cli.standalone import (
    EXIT_FAILED,
    EXIT_OK,
    EXIT_USAGE,
    _log_progress,
    _rest_starter,
    _StopSignals,
)
from omconnect.config.files import load_config_file
from omconnect.errors import ConfigError, ConnectError
from omconnect.runtime import tune_gc
from omconnect.runtime.distributed import DistributedHerder
from omconnect.runtime.worker_config import WorkerConfig, advertised_host

__all__ = ["add_parser", "run"]

_log = logging.getLogger("omconnect.cli")


def add_parser(subparsers: Any) -> None:
    """Add the ``distributed`` subcommand to ``subparsers``."""
    parser = subparsers.add_parser(
        "distributed", help="run one worker of a cluster until stopped",
        description="Join the cluster named by group.id in WORKER_CONFIG and run a share "
        "of its connectors until SIGINT/SIGTERM; manage connectors through any worker's "
        "REST API (rest.host.name, rest.port).")
    parser.add_argument("worker_config", metavar="WORKER_CONFIG",
                        help="the worker's settings (group.id, transport, rest.port, ...)")
    parser.add_argument("--status-interval", metavar="SECONDS", type=float, default=10.0,
                        help="seconds between progress log lines of the tasks running here "
                        "(0: none; default 10)")
    parser.add_argument("--log-format", choices=FORMATS,
                        help="text (default on a terminal), logfmt (default otherwise) or "
                        "json")
    parser.add_argument("--log-level", default="INFO",
                        choices=["DEBUG", "INFO", "WARNING", "ERROR"],
                        help="lowest level logged (default INFO)")
    parser.add_argument("--python-gc", action="store_true",
                        help="keep CPython's garbage-collector thresholds instead of the "
                        "worker's higher ones (see docs/performance.md)")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Run the ``distributed`` subcommand; returns the exit status."""
    configure_logging(level=args.log_level, log_format=args.log_format)
    gc_thresholds = None if args.python_gc else tune_gc()
    signals = _StopSignals()
    try:
        try:
            start_rest = _rest_starter()
            if not Path(args.worker_config).is_file():
                raise ConfigError(f"{args.worker_config}: worker config file not found")
            worker = load_config_file(args.worker_config)
            try:
                config = WorkerConfig.parse(worker, origin=args.worker_config,
                                            distributed=True)
            except ConfigError as exc:
                raise ConfigError(f"{args.worker_config}: {exc}", errors=exc.errors) \
                    from None
        except ConfigError as exc:
            print(f"omconnect distributed: {exc}", file=sys.stderr)
            print("Nothing was started.", file=sys.stderr)
            return EXIT_USAGE
        quiet_client_loggers(config.transport_class.client_loggers, args.log_level)
        return _serve(config, start_rest, args, signals)
    finally:
        signals.restore()
        remove_cli_logging()
        if gc_thresholds is not None:
            gc.set_threshold(*gc_thresholds)


def _serve(config: WorkerConfig, start_rest: Any, args: argparse.Namespace,
           signals: _StopSignals) -> int:
    herder = DistributedHerder(config)
    rest = None
    try:
        rest = start_rest(herder, host=config["rest.host.name"], port=config["rest.port"])
        port = config["rest.advertised.port"] or rest.port
        herder.advertise(f"http://{advertised_host(config.values)}:{port}")
        _log.info("REST API listening on http://%s:%s", config["rest.host.name"], rest.port)
        if signals.requested.is_set():
            return EXIT_OK
        herder.start()
        _log.info("worker %s running in cluster %r (REST API %s)", herder.worker_id,
                  herder.group_id, herder.url)
        _wait(herder, args, signals)
        _log.info("stopping (signal received)")
        return EXIT_OK
    except ConnectError as exc:
        _log.error("the worker cannot run: %s", exc)
        return EXIT_FAILED
    finally:
        if rest is not None:
            try:
                rest.stop()
            except Exception:
                _log.exception("stopping the REST API failed")
        herder.stop()
        gc.collect()


def _wait(herder: DistributedHerder, args: argparse.Namespace, signals: _StopSignals) -> None:
    """Until a signal: log the local tasks' progress every ``--status-interval``."""
    tracker = ProgressTracker()
    interval = args.status_interval
    next_status = time.monotonic() + interval if interval > 0 else float("inf")
    while not signals.requested.wait(min(1.0, interval) if interval > 0 else 1.0):
        if time.monotonic() < next_status:
            continue
        metrics = herder.metrics()
        states = {(m.connector, m.task): "RUNNING" for m in metrics}
        _log_progress(tracker.update(metrics, states), "progress")
        next_status = time.monotonic() + interval
