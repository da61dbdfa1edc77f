"""Where a standalone worker keeps its state: key/value namespaces of its own.

A worker keeps connector configs, last known statuses and source offsets in three
key/value namespaces of its transport. Two standalone workers on one broker must never
see each other's connectors or offsets (Kafka Connect's standalone worker keeps its own
offsets file and runs only the connectors it was given), so by default each worker's
namespaces carry its **standalone id**::

    connect-configs-<id>    connect-offsets-<id>    connect-status-<id>

The id is ``standalone.id`` when set; otherwise it is derived from what identifies a
worker across restarts: the host name and the absolute path of the worker config file
(``omconnect standalone``, ``omconnect offsets``), or the working directory for a worker
built in Python without a file. So the same worker file on the same host resumes where
it left off, and any other worker has namespaces of its own.

Sharing is possible only on purpose: give two workers the same ``standalone.id``, or set
``config.storage.namespace`` / ``offset.storage.namespace`` /
``status.storage.namespace`` explicitly (an explicit namespace is used exactly as
written, which is also how a setup of an earlier version keeps its data).
"""

from __future__ import annotations

import hashlib
import os
import re
import socket
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["STORAGE_NAMESPACE_KEYS", "derive_standalone_id", "storage_namespaces"]

STORAGE_NAMESPACE_KEYS: dict[str, str] = {
    "config.storage.namespace": "connect-configs",
    "offset.storage.namespace": "connect-offsets",
    "status.storage.namespace": "connect-status",
}
"""Each storage key and the stem of its derived namespace."""

_UNSAFE = re.compile(r"[^a-z0-9]+")


def _slug(text: str, limit: int) -> str:
    return _UNSAFE.sub("-", text.lower()).strip("-")[:limit].strip("-") or "worker"


def derive_standalone_id(origin: str | Path | None = None, *, host: str | None = None
                         ) -> str:
    """The standalone id of a worker whose config came from ``origin`` (a file), or of
    one built without a file (``None``: the working directory stands for it).

    The id reads ``<host>-<file stem>-<8 hex digits>``: the digits hash the host name and
    the absolute path, so two files of the same name in two directories differ.
    """
    host = host or socket.gethostname()
    if origin is not None:
        where = Path(origin).expanduser().resolve()
        stem = where.stem
    else:
        where = Path(os.getcwd()).resolve()
        stem = "api"
    digest = hashlib.sha256(f"{host}\0{where}".encode()).hexdigest()[:8]
    return f"{_slug(host, 24)}-{_slug(stem, 24)}-{digest}"


def storage_namespaces(raw: Mapping[str, Any], standalone_id: str) -> dict[str, str]:
    """The three storage namespaces: each key as given in ``raw`` when set, else
    ``<stem>-<standalone id>``.
    """
    result = {}
    for key, stem in STORAGE_NAMESPACE_KEYS.items():
        given = raw.get(key)
        text = str(given).strip() if given is not None else ""
        result[key] = text or f"{stem}-{standalone_id}"
    return result
