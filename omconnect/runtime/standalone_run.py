"""A standalone worker run from config files, as ``omconnect standalone`` runs it; the
command adds the terminal around it (logging, progress, signals, the REST API).

:func:`load_standalone_files` reads the worker config and the connector configs and
:func:`open_standalone` opens the worker on them, validates every connector config and
stores them (nothing runs yet): every problem of every file is reported at once, before
anything starts. :func:`task_states` is what the running worker's connectors and tasks
are doing; with :class:`~omconnect.runtime.idle_watch.IdleWatch` it tells when a run
that reads a finite input is done.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs

from omconnect.config.files import load_config_file, load_config_file_as_written
from omconnect.connector.lifecycle import State
from omconnect.errors import ConfigError, ConnectError
from omconnect.runtime.config_store import COMMAND_LINE
from omconnect.runtime.herder import StandaloneHerder
from omconnect.runtime.worker_config import WorkerConfig

__all__ = ["StandaloneFiles", "load_standalone_files", "open_standalone", "task_states"]

_log = logging.getLogger(__name__)


@attrs.frozen(kw_only=True)
class StandaloneFiles:
    """A standalone worker's configs, read from their files.

    Attributes:
        worker_path: The worker config's file.
        worker: The worker config, parsed.
        connectors: Each connector config's file and its settings as written (references
            unresolved: they are resolved when the connector starts).
        problems: What is wrong across the files (two connectors of one name), reported
            with the connector configs' own problems by :func:`open_standalone`.

    """

    worker_path: str
    worker: WorkerConfig
    connectors: tuple[tuple[str, dict[str, Any]], ...]
    problems: tuple[str, ...] = ()

    @property
    def names(self) -> list[str]:
        """The connector names given, in the order of their files (unnamed ones left out)."""
        named = (str(config.get("name") or "").strip() for _, config in self.connectors)
        return list(dict.fromkeys(name for name in named if name))


def load_standalone_files(worker_path: str, connector_paths: Sequence[str]
                          ) -> StandaloneFiles:
    """Read and parse the worker config and read the connector configs.

    Raises:
        ConfigError: A file is missing or cannot be parsed, or the worker config is
            invalid (naming the file, the key and the fix).

    """
    worker = _load(worker_path, "worker config")
    configs = tuple((path, _load(path, "connector config", resolve=False))
                    for path in connector_paths)
    problems: list[str] = []
    names: dict[str, str] = {}
    for path, config in configs:
        name = str(config.get("name") or "").strip()
        if name and name in names:
            problems.append(f"{path}: name {name!r} is also the name in {names[name]}; "
                            "connector names must be unique")
        names.setdefault(name, path)
    try:
        worker_config = WorkerConfig.parse(worker, origin=worker_path)
    except ConfigError as exc:
        raise ConfigError(f"{worker_path}: {exc}", errors=exc.errors) from None
    return StandaloneFiles(worker_path=worker_path, worker=worker_config,
                           connectors=configs, problems=tuple(problems))


def open_standalone(files: StandaloneFiles) -> StandaloneHerder:
    """Open a worker on ``files``, validate every connector config and store them
    (created, or replacing a stored config of the same name). Nothing runs yet: call
    ``start()`` on the herder returned.

    Raises:
        ConfigError: Listing every problem of every file (the worker is stopped again).

    """
    herder = StandaloneHerder(files.worker, command_line=files.names)
    herder.open()
    try:
        problems = list(files.problems)
        for path, config in files.connectors:
            validation = herder.validate_connector_config(config)
            if not validation.ok:
                lines = [f"  {key}: {message}" for key, messages in
                         sorted(validation.errors.items()) for message in messages]
                problems.append(f"{path}: invalid connector config "
                                f"({validation.error_count} error"
                                f"{'' if validation.error_count == 1 else 's'}):\n"
                                + "\n".join(lines))
        if problems:
            raise ConfigError("\n".join(problems))
        for path, config in files.connectors:
            name = str(config["name"]).strip()
            _, created = herder.put_connector_config(name, config, origin=COMMAND_LINE)
            _log.info("%s connector %r from %s", "created" if created else "updated", name,
                      path)
    except BaseException:
        herder.stop()
        raise
    return herder


def _load(path: str, what: str, *, resolve: bool = True) -> dict[str, Any]:
    """The config in ``path``; with ``resolve=False`` its references as written (relative
    ``${file:...}`` paths made absolute), to be resolved when the connector starts.
    """
    if not Path(path).is_file():
        raise ConfigError(f"{path}: {what} file not found")
    if resolve:
        return load_config_file(path)
    return load_config_file_as_written(path)


def task_states(herder: StandaloneHerder) -> tuple[dict[tuple[str, int], str], bool]:
    """Every task's state by (connector, task) (a connector without tasks under task
    ``-1``), and whether any connector or task is FAILED.
    """
    states: dict[tuple[str, int], str] = {}
    failed = False
    for name in herder.connectors():
        try:
            status = herder.connector_status(name)
        except ConnectError:
            continue  # deleted meanwhile
        if status.connector.state is State.FAILED:
            failed = True
        for task in status.tasks:
            states[(name, task.id)] = task.state.value
            failed = failed or task.state is State.FAILED
        if not status.tasks:
            states[(name, -1)] = status.connector.state.value
    return states, failed
