"""``omconnect validate``: check a connector config completely without running it.

Prints each problem as ``key: message`` (the message says the fix) and exits 1, or says
the config is valid and exits 0. ``${env:...}``/``${file:...}`` references are resolved
as starting the connector would; one that cannot be resolved is an error of its key.
Secret values are masked in the output. With ``--worker``, the worker's defaults and its
transport's capabilities are taken into account (e.g. whether exactly-once delivery is
possible there); without, the worker defaults apply and no transport is opened.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from omconnect.config.files import load_config_file, load_config_file_as_written
from omconnect.errors import ConfigError
from omconnect.runtime.connector_config import ConfigValidation, validate_connector_config
from omconnect.runtime.worker_config import WorkerConfig

__all__ = ["add_parser", "run"]


def add_parser(subparsers: Any) -> None:
    """Add the ``validate`` subcommand to ``subparsers``."""
    parser = subparsers.add_parser(
        "validate", help="check a connector config without running it",
        description="Validate a connector config: its connector class, the connector's "
        "own settings, converters, transforms, error handling and delivery guarantee.")
    parser.add_argument("connector_config", metavar="CONNECTOR_CONFIG")
    parser.add_argument("--worker", metavar="WORKER_CONFIG",
                        help="validate against this worker (its defaults and transport)")
    parser.add_argument("--json", action="store_true",
                        help="print Kafka Connect's validation response as JSON")
    parser.set_defaults(run=run)


def validate_file(connector_path: str, worker_path: str | None = None) -> ConfigValidation:
    """Validate the connector config in ``connector_path``.

    Raises:
        ConfigError: A file cannot be read or parsed, or the worker config is invalid.

    """
    config = load_config_file_as_written(connector_path)
    if worker_path is None:
        return validate_connector_config(config)
    try:
        worker = WorkerConfig.parse(load_config_file(worker_path))
    except ConfigError as exc:
        raise ConfigError(f"{worker_path}: {exc}", errors=exc.errors) from None
    transport = worker.open_transport()
    try:
        return validate_connector_config(
            config, worker_values=worker.values, capabilities=transport.capabilities,
            transport_name=worker.transport_name)
    finally:
        transport.close()


def run(args: argparse.Namespace) -> int:
    """Run the ``validate`` subcommand; returns the exit status."""
    try:
        result = validate_file(args.connector_config, args.worker)
    except ConfigError as exc:
        print(f"omconnect validate: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(result.to_dict(), indent=2))
        return 0 if result.ok else 1
    name = result.values.get("name") or "(no name)"
    if result.ok:
        print(f"{args.connector_config}: valid {result.kind} connector {name!r} "
              f"({result.connector_class})")
        return 0
    count = result.error_count
    print(f"{args.connector_config}: {count} error{'' if count == 1 else 's'} in "
          f"connector {name!r}:")
    for key, messages in sorted(result.errors.items()):
        for message in messages:
            print(f"  {key}: {message}")
    return 1
