"""A key/value store every worker of a cluster sees alike: :class:`SharedStore`.

Statuses are written by the worker running a connector or task and read by every
worker (any of them answers ``GET .../status``). A transport's own
:class:`~omconnect.transport.spi.KeyValueStore` promises durability and last-write-wins,
but not that one process sees another's writes while it runs (the Kafka transport's
store reads other processes' writes only when it is opened again). So the cluster keeps
these maps in a :class:`~omconnect.runtime.distributed.shared_log.SharedLog` instead, as
Kafka Connect keeps its status topic: every write is a record of the items it sets (a
``None`` deletes), and every worker applies the records in log order, so all of them end
with the same map.

Writes are asynchronous, as Kafka Connect's status writes are: ``put_many`` hands the
items to a writer thread and returns (a status change never waits for the transport;
writes to one key queued meanwhile are merged, the last kept). This worker reads its own
writes at once: reads see queued and unapplied writes over the map. :meth:`flush` waits
until everything written before it is in the log.

It implements the :class:`~omconnect.transport.spi.KeyValueStore` SPI, so the status
store and the active-topic records run on it unchanged.
"""

from __future__ import annotations

import base64
import logging
import threading
import time
import uuid
from collections.abc import Iterator, Mapping
from typing import Any

from omconnect.runtime.distributed.shared_log import SharedLog
from omconnect.transport.kit.log_kv_store import checked_items
from omconnect.transport.spi import KeyValueStore, Transport

__all__ = ["SharedStore"]

_log = logging.getLogger(__name__)

_RETRY_S = 0.5


class SharedStore(KeyValueStore):
    """A map kept in a shared log (see the module docstring). Thread-safe.

    Args:
        transport: The open transport.
        topic: The log's topic.
        timeout: Seconds a write waits for the transport's acknowledgement.

    """

    def __init__(self, transport: Transport, topic: str, *, timeout: float) -> None:
        self._values: dict[str, bytes] = {}
        self._pending: dict[str, bytes | None] = {}
        self._unapplied: dict[str, dict[str, bytes | None]] = {}
        self._condition = threading.Condition()
        self._writing = False
        self._timeout = timeout
        self._log = SharedLog(transport, topic, self._apply, name="status")
        self._writer = threading.Thread(target=self._write, daemon=True,
                                        name="omconnect-status-writer")

    def open(self) -> None:
        """Start reading the log (what it holds is applied as it is read) and writing."""
        self._log.open()
        self._writer.start()

    def catch_up(self, timeout: float) -> None:
        """Wait until every write made (by any worker) before this call is applied here.

        Raises:
            LogTimeoutError: Not within ``timeout`` seconds.

        """
        self._log.append_and_wait({"kind": "marker"}, timeout)

    def _apply(self, record: dict[str, Any]) -> None:
        items = record.get("items")
        if not isinstance(items, dict):
            return
        with self._condition:
            for key, value in items.items():
                if value is None:
                    self._values.pop(str(key), None)
                else:
                    self._values[str(key)] = base64.b64decode(value)
            self._unapplied.pop(str(record.get("id")), None)

    def _view(self) -> dict[str, bytes | None]:
        """The map as this worker wrote it (call with the condition held)."""
        view: dict[str, bytes | None] = dict(self._values)
        for items in self._unapplied.values():
            view.update(items)
        view.update(self._pending)
        return view

    def get(self, key: str) -> bytes | None:
        """The value of ``key``: this worker's latest write, else the log's."""
        self._check_open()
        with self._condition:
            return self._view().get(key)

    def put_many(self, items: Mapping[str, bytes | None]) -> None:
        """Queue ``items`` for writing (see the module docstring); returns at once.

        Raises:
            TypeError: A key is not a ``str`` or a value not bytes or ``None``.

        """
        self._check_open()
        checked = checked_items(items)
        if not checked:
            return
        with self._condition:
            self._pending.update(checked)
            self._condition.notify_all()

    def scan(self, prefix: str = "") -> Iterator[tuple[str, bytes]]:
        """Every (key, value) starting with ``prefix``, in key order."""
        self._check_open()
        with self._condition:
            found = sorted((k, v) for k, v in self._view().items()
                           if v is not None and k.startswith(prefix))
        return iter(found)

    def flush(self, timeout: float) -> bool:
        """Wait until every queued write is in the log; whether it was in time."""
        deadline = time.monotonic() + timeout
        with self._condition:
            while self._pending or self._writing:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._condition.wait(left)
        return True

    def _write(self) -> None:
        while True:
            with self._condition:
                while not self._pending and not self._closed:
                    self._condition.wait()
                if not self._pending:
                    return
                items, self._pending = self._pending, {}
                record_id = uuid.uuid4().hex
                self._unapplied[record_id] = items  # until this worker reads it back
                self._writing = True
            encoded = {k: None if v is None else base64.b64encode(v).decode()
                       for k, v in items.items()}
            try:
                self._log.append({"kind": "items", "items": encoded, "id": record_id},
                                 self._timeout)
            except Exception as exc:
                with self._condition:
                    self._unapplied.pop(record_id, None)
                    self._pending = {**items, **self._pending}
                    self._writing = False
                    self._condition.notify_all()
                    if self._closed:
                        return
                _log.warning("writing statuses to the cluster's status log failed "
                             "(retrying): %s", exc)
                time.sleep(_RETRY_S)
                continue
            with self._condition:
                self._writing = False
                self._condition.notify_all()

    def close(self) -> None:
        """Write what is queued (a few seconds at most), stop. Idempotent."""
        if self._closed:
            return
        self.flush(min(self._timeout, 5.0))
        with self._condition:
            self._closed = True
            self._condition.notify_all()
        if self._writer.is_alive():
            self._writer.join(timeout=5.0)
        self._log.close()
