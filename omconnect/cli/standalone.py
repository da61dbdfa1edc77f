"""``omconnect standalone``: run connectors in this process until told to stop.

Order of events:

1. The garbage collector's thresholds are raised for a worker's allocation pattern
   (:func:`~omconnect.runtime.tune_gc`; ``--python-gc`` keeps CPython's).
2. The worker config and every connector config are loaded and validated completely; if
   anything is wrong (including a ``${env:...}``/``${file:...}`` reference that cannot be
   resolved), every problem is printed (file, key, fix) and the command exits with
   status 2 before any connector starts.
3. The connector configs are stored as written, references unresolved (created, or
   replacing a stored config of the same name; a relative ``${file:...}`` path is made
   absolute from the config file's directory), then the worker starts the connectors
   given here and those created through its REST API in earlier runs, resolving their
   references. Storage namespaces are this worker's own (derived from the host and the
   worker file's path unless set; see :mod:`omconnect.runtime.storage_namespaces`), so
   another worker's connectors are never run here; a connector given on an earlier
   command line and not this one is not run either (its config and offsets are kept).
4. While running: on a terminal, one live progress line per task; otherwise a structured
   ``progress`` log line per task every ``--status-interval`` seconds.
5. SIGINT or SIGTERM (or ``--stop-when-idle``) stops the worker: tasks stop within
   ``task.shutdown.graceful.timeout.ms`` and commit what is safe. A signal that arrives
   while configs are still being loaded stops the command as cleanly, before any
   connector starts. A second signal exits at once (what was not committed is delivered
   again next time). Once every connector is started the log says ``running connectors
   [...]``.

Exit status: 0 after a clean stop; 1 if a connector or task was FAILED when the worker
stopped, or the worker could not run; 2 for invalid configs or options.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from types import FrameType
from typing import Any

from omconnect.cli.log_output import (
    FORMATS,
    configure_logging,
    quiet_client_loggers,
    remove_cli_logging,
)
from omconnect.cli.progress import LiveDisplay, ProgressTracker, TaskProgress
from omconnect.errors import ConfigError, ConnectError, MissingExtraError
from omconnect.runtime import StandaloneHerder, tune_gc
from omconnect.runtime.idle_watch import IdleWatch
from omconnect.runtime.standalone_run import (
    load_standalone_files,
    open_standalone,
    task_states,
)

__all__ = ["add_parser", "run"]

_log = logging.getLogger("omconnect.cli")

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2


def add_parser(subparsers: Any) -> None:
    """Add the ``standalone`` subcommand to ``subparsers``."""
    parser = subparsers.add_parser(
        "standalone", help="run connectors in this process until stopped",
        description="Run a worker with the given connectors until SIGINT/SIGTERM "
        "(or --stop-when-idle). Configs may be .properties, .yaml/.yml or .json; "
        "Kafka Connect's standalone files work unchanged.")
    parser.add_argument("worker_config", metavar="WORKER_CONFIG",
                        help="the worker's settings (transport, converters, offsets)")
    parser.add_argument("connector_configs", metavar="CONNECTOR_CONFIG", nargs="*",
                        help="one file per connector")
    parser.add_argument("--stop-when-idle", metavar="SECONDS", type=_positive_float,
                        help="stop cleanly once no task has moved a record for SECONDS "
                        "(sources have nothing new, sinks have caught up)")
    parser.add_argument("--rest-port", metavar="N", type=_port,
                        help="serve the REST API on this port (0: any free port)")
    parser.add_argument("--rest-host", metavar="HOST", default="127.0.0.1",
                        help="address the REST API listens on (default 127.0.0.1)")
    parser.add_argument("--status-interval", metavar="SECONDS", type=float, default=10.0,
                        help="without a terminal: seconds between progress log lines "
                        "(0: none; default 10)")
    parser.add_argument("--no-progress", action="store_true",
                        help="on a terminal, log progress lines instead of the live display")
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


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") \
            from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be more than 0, got {text}")
    return value


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a port number, got {text!r}") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"a port is 0..65535, got {value}")
    return value


def run(args: argparse.Namespace) -> int:
    """Run the ``standalone`` subcommand; returns the exit status."""
    live = sys.stderr.isatty() and not args.no_progress
    display = LiveDisplay(sys.stderr) if live else None
    configure_logging(level=args.log_level, log_format=args.log_format,
                      write=display.write_log if display is not None else None)
    gc_thresholds = None if args.python_gc else tune_gc()
    signals = _StopSignals()
    try:
        try:
            start_rest = _rest_starter() if args.rest_port is not None else None
            herder, names = _prepare(args.worker_config, args.connector_configs,
                                     args.log_level)
        except ConfigError as exc:
            print(f"omconnect standalone: {exc}", file=sys.stderr)
            print("Nothing was started.", file=sys.stderr)
            return EXIT_USAGE
        except ConnectError as exc:
            print(f"omconnect standalone: {exc}", file=sys.stderr)
            return EXIT_FAILED
        return _Runner(herder, names, args, display, start_rest, signals).run()
    finally:
        signals.restore()
        remove_cli_logging()
        if gc_thresholds is not None:  # for callers of main() in a longer-lived process
            gc.set_threshold(*gc_thresholds)


def _prepare(worker_path: str, connector_paths: list[str], log_level: str = "INFO"
             ) -> tuple[StandaloneHerder, list[str]]:
    """Load and validate every config; store the connector configs. Nothing runs yet.
    The transport's client libraries log at WARNING from here on (DEBUG at ``DEBUG``).

    Raises:
        ConfigError: Listing every problem of every file.

    """
    files = load_standalone_files(worker_path, connector_paths)
    quiet_client_loggers(files.worker.transport_class.client_loggers, log_level)
    return open_standalone(files), files.names


class _StopSignals:
    """SIGINT/SIGTERM handling from the first moment of the command: the first signal
    asks for a clean stop (also while configs are still being loaded), a second one exits
    at once. Only the main thread can install handlers; elsewhere this does nothing.
    """

    def __init__(self) -> None:
        self.requested = threading.Event()
        self._count = 0
        self._previous: dict[int, Any] = {}
        if threading.current_thread() is threading.main_thread():
            self._previous = {sig: signal.signal(sig, self._handle)
                              for sig in (signal.SIGINT, signal.SIGTERM)}

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        self._count += 1
        if self._count > 1:
            os.write(2, b"omconnect: second signal; exiting now without waiting for "
                        b"tasks (uncommitted records will be delivered again)\n")
            os._exit(128 + signum)
        self.requested.set()

    def restore(self) -> None:
        """Put the previous handlers back."""
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)


class _Runner:
    """Runs the herder until a signal or idleness, showing progress."""

    def __init__(self, herder: StandaloneHerder, names: list[str],
                 args: argparse.Namespace, display: LiveDisplay | None,
                 start_rest: Callable[..., Any] | None, signals: _StopSignals) -> None:
        self.herder = herder
        self.start_rest = start_rest
        self.names = names
        self.args = args
        self.display = display
        self.stop_requested = signals.requested
        self.tracker = ProgressTracker()
        self.rest: Any = None

    def run(self) -> int:
        failed = False
        try:
            if self.stop_requested.is_set():
                _log.info("stopping before any connector started (signal received)")
                return EXIT_OK
            others = sorted(set(self.herder.connectors()) - set(self.names))
            for name in others:
                _log.info("also running connector %r, created through the REST API in an "
                          "earlier run of this worker", name)
            for name in sorted(self.herder.left_alone):
                _log.info("not running connector %r: an earlier run was given it on the "
                          "command line, this one is not (its config and offsets are "
                          "kept)", name)
            self.herder.start()
            if self.start_rest is not None:
                self.rest = self.start_rest(self.herder, host=self.args.rest_host,
                                            port=self.args.rest_port)
                _log.info("REST API listening on http://%s:%s", self.args.rest_host,
                          getattr(self.rest, "port", self.args.rest_port))
            _log.info("running connectors %s", self.herder.connectors())
            failed = self._loop()
        except ConnectError as exc:
            _log.error("the worker cannot run: %s", exc)
            failed = True
        finally:
            self._stop()
        return EXIT_FAILED if failed else EXIT_OK

    def _loop(self) -> bool:
        """Until stopped: show progress, watch for idleness. Whether anything FAILED."""
        idle = IdleWatch(self.args.stop_when_idle) if self.args.stop_when_idle else None
        live = self.display is not None
        tick = 0.5 if live or idle else min(1.0, self.args.status_interval or 1.0)
        interval = self.args.status_interval
        next_status = time.monotonic() + interval if interval > 0 else float("inf")
        failed = False
        while True:
            stopping = self.stop_requested.wait(tick)
            states, failed = self._states()
            progress = self.tracker.update(self.herder.metrics(), states)
            if live:
                assert self.display is not None
                self.display.update([p.line() for p in progress])
            elif time.monotonic() >= next_status:
                _log_progress(progress, "progress")
                next_status = time.monotonic() + interval
            if stopping:
                _log.info("stopping (signal received)")
                break
            if idle is not None and idle.update(time.monotonic(), self.herder.metrics(),
                                                states):
                _log.info("stopping: no task has moved a record for %.1f s "
                          "(--stop-when-idle)", idle.window)
                break
        return failed

    def _states(self) -> tuple[dict[tuple[str, int], str], bool]:
        return task_states(self.herder)

    def _stop(self) -> None:
        if self.rest is not None:
            try:
                self.rest.stop()
            except Exception:
                _log.exception("stopping the REST API failed")
        final = self.tracker.update(self.herder.metrics(), self._states()[0])
        self.herder.stop()
        # Free what the stopped worker left behind now, while the interpreter is whole:
        # a client library's objects freed during interpreter shutdown (pulsar-client's
        # threads calling back into Python logging) have aborted the process.
        gc.collect()
        if self.display is not None:
            self.display.close()
        _log_progress(final, "stopped")


def _log_progress(progress: list[TaskProgress], message: str) -> None:
    for item in progress:
        fields = item.fields()
        if message == "stopped":
            del fields["committed"]  # counted before the stop's own commit: misleading
        _log.info(message, extra={"fields": fields, "connector": item.connector,
                                  "task": item.task})


def _rest_starter() -> Callable[..., Any]:
    """``omconnect.rest.start_server(herder, host=, port=)``, which serves the REST API
    beside the worker and returns an object with ``stop()`` (and ``port``).

    Raises:
        ConfigError: The REST API is not available in this installation (nothing started).

    """
    try:
        rest = importlib.import_module("omconnect.rest")
    except MissingExtraError as exc:
        raise ConfigError(f"--rest-port: {exc}") from exc
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.startswith("omconnect.rest"):
            raise ConfigError(
                "--rest-port: the REST API (module omconnect.rest) is not part of this "
                "installation; run without --rest-port, or install a version of omconnect "
                "that ships it") from exc
        raise ConfigError(f"--rest-port: the REST API needs {exc.name!r}, which is not "
                          "installed; pip install 'omconnect[rest]'") from exc
    start_server: Callable[..., Any] | None = getattr(rest, "start_server", None)
    if start_server is None:
        raise ConfigError("--rest-port: omconnect.rest has no start_server(herder, host=, "
                          "port=); this version's REST API cannot be started from the CLI")
    return start_server
