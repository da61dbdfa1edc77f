"""``/admin/loggers``: read and change log levels at run time (Kafka Connect's KIP-495,
with KIP-976's ``last_modified``).

Levels use Kafka Connect's (log4j) names, mapped onto Python's logging: ``TRACE`` and
``DEBUG`` are ``DEBUG``, ``WARN`` is ``WARNING``, ``FATAL`` is ``CRITICAL``, ``OFF`` is
above ``CRITICAL``. Logger names are Python's (``omconnect.runtime``,
``omconnect_kafka``, ...); ``root`` is the root logger. Setting a level sets it on the
logger and every descendant logger that exists, as Kafka Connect does, and answers the
names it set. Changes last until the worker stops; only this worker is changed
(``scope=worker``, the only scope of a standalone worker).
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Query

from omconnect.rest.dependencies import error_responses, require_json
from omconnect.rest.errors import ApiError
from omconnect.rest.models import LoggerLevel, LoggerLevelIn

__all__ = ["router"]

router = APIRouter(tags=["admin"])

_OFF = logging.CRITICAL + 10
_TO_PYTHON = {"OFF": _OFF, "FATAL": logging.CRITICAL, "ERROR": logging.ERROR,
              "WARN": logging.WARNING, "INFO": logging.INFO, "DEBUG": logging.DEBUG,
              "TRACE": logging.DEBUG}
_FROM_PYTHON = {_OFF: "OFF", logging.CRITICAL: "FATAL", logging.ERROR: "ERROR",
                logging.WARNING: "WARN", logging.INFO: "INFO", logging.DEBUG: "DEBUG"}
_modified: dict[str, int] = {}
_lock = threading.Lock()

LoggerName = Annotated[str, Path(description="A logger's name (`root` for the root logger).")]


def _logger(name: str) -> logging.Logger:
    return logging.getLogger() if name == "root" else logging.getLogger(name)


def _level_name(level: int) -> str:
    if level in _FROM_PYTHON:
        return _FROM_PYTHON[level]
    below = [known for known in _FROM_PYTHON if known <= level]
    return _FROM_PYTHON[max(below)] if below else "TRACE"


def _describe(name: str) -> dict[str, Any]:
    described: dict[str, Any] = {
        "level": _level_name(_logger(name).getEffectiveLevel())}
    if name in _modified:
        described["last_modified"] = _modified[name]
    return described


def _existing() -> list[str]:
    manager = logging.Logger.manager
    return sorted(name for name, logger in manager.loggerDict.items()
                  if isinstance(logger, logging.Logger))


@router.get("/admin/loggers", operation_id="listLoggers",
            response_model=dict[str, LoggerLevel], response_model_exclude_unset=True)
def list_loggers() -> Any:
    """List the loggers with a level of their own.

    The root logger and every logger whose level was set (in code, by the logging
    configuration or through this API), with its level and, when set through this API,
    ``last_modified`` (epoch milliseconds).
    """
    shown = {"root": _describe("root")}
    for name in _existing():
        if logging.getLogger(name).level != logging.NOTSET or name in _modified:
            shown[name] = _describe(name)
    return shown


@router.get("/admin/loggers/{logger}", operation_id="getLogger", response_model=LoggerLevel,
            response_model_exclude_unset=True, responses=error_responses(404))
def get_logger(logger: LoggerName) -> Any:
    """Get a logger's effective level."""
    if logger != "root" and logger not in logging.Logger.manager.loggerDict:
        raise ApiError(404, f"no logger named {logger!r}; GET /admin/loggers lists them")
    return _describe(logger)


@router.put("/admin/loggers/{logger}", operation_id="setLoggerLevel",
            response_model=list[str], dependencies=[Depends(require_json)],
            responses=error_responses(400, 415))
def set_logger_level(
    logger: LoggerName,
    body: LoggerLevelIn,
    scope: Annotated[str, Query(description="`worker` (the default): this worker. "
                                "`cluster` is Kafka Connect's for every worker of a "
                                "cluster; a standalone worker is its own cluster.")] = "worker",
) -> Any:
    """Set a logger's level, and its descendants'.

    Answers the names of the loggers set. The level is one of OFF, FATAL, ERROR, WARN,
    INFO, DEBUG, TRACE.
    """
    if scope.lower() not in ("worker", "cluster"):
        raise ApiError(400, f"scope must be worker or cluster, not {scope!r}")
    level = _TO_PYTHON.get(body.level.upper())
    if level is None:
        raise ApiError(400, f"invalid level {body.level!r}; use one of "
                       f"{', '.join(_TO_PYTHON)}", errors={"level": ["invalid level"]})
    prefix = "" if logger == "root" else logger + "."
    names = [logger] + [name for name in _existing()
                        if name != logger and name.startswith(prefix)]
    now = int(time.time() * 1000)
    with _lock:
        for name in names:
            _logger(name).setLevel(level)
            _modified[name] = now
    return names
