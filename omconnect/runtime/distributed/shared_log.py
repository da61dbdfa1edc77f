"""A one-partition topic that every worker reads in order: :class:`SharedLog`.

Kafka Connect keeps its config and status topics this way (``KafkaBasedLog``): writers
append records; each worker reads the partition from its first record with a lone
consumer (``assign``, no group) on a thread of its own and hands every record, in log
order, to a handler. Built on the transport SPI alone (a producer, a consumer that can
``assign``, an admin to create the topic), so it runs on any transport that is
``replayable``; a one-partition topic keeps every record in the order the transport
stored them, the same for every reader.

A writer that must know what its record did (:meth:`SharedLog.append_and_wait`) waits
until its own reader applied it and takes the handler's return value: the *outcome* of
that record at its place in the order. Records carry a random ``id`` for that.
"""

from __future__ import annotations

import json
import logging
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, TypeVar

from omconnect.errors import ConnectError, TransportError
from omconnect.records import TopicPartition
from omconnect.transport.messages import Message, TopicSpec
from omconnect.transport.spi import Consumer, Producer, Transport

__all__ = ["LogTimeoutError", "SharedLog", "with_retries"]

_log = logging.getLogger(__name__)

_POLL_S = 0.2
_BATCH = 1000
_RETRY_S = 0.5


class LogTimeoutError(ConnectError, TimeoutError):
    """A record was not read back in time (it may still apply later)."""


_T = TypeVar("_T")


def with_retries(action: Callable[[], _T], what: str, seconds: float = 15.0) -> _T:
    """``action()``, tried again on a :class:`~omconnect.errors.TransportError` for up to
    ``seconds`` (backing off from 0.1 to 2 s): workers starting together race to create
    the same topics and stores, which some brokers refuse to the loser for a moment.

    Raises:
        TransportError: The last failure, once ``seconds`` passed.

    """
    deadline = time.monotonic() + seconds
    wait = 0.1
    while True:
        try:
            return action()
        except TransportError as exc:
            if time.monotonic() + wait > deadline:
                raise
            _log.info("%s failed (retrying in %.1f s): %s", what, wait, exc)
            time.sleep(wait)
            wait = min(2.0, wait * 2)


class SharedLog:
    """One topic of one partition, appended to and read in order (see the module
    docstring).

    Args:
        transport: The open transport.
        topic: The topic (created with one partition when missing).
        handler: Applies one record; its return value is the record's outcome. Called on
            the reader thread, one record at a time, in log order.
        name: For thread names and log lines.

    """

    def __init__(self, transport: Transport, topic: str,
                 handler: Callable[[dict[str, Any]], Any], *, name: str) -> None:
        self.topic = topic
        self._transport = transport
        self._handler = handler
        self._name = name
        self._partition = TopicPartition(topic, 0)
        self._producer: Producer | None = None
        self._consumer: Consumer | None = None
        self._waiting: dict[str, Future[Any]] = {}
        self._guard = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.records_read = 0

    def open(self) -> None:
        """Create the topic if needed, open the clients and start reading."""
        with_retries(self._create_topic, f"creating the {self._name} log {self.topic!r}")
        self._producer = self._transport.producer()
        self._consumer = with_retries(self._reader, f"reading the {self._name} log")
        self._thread = threading.Thread(target=self._read, daemon=True,
                                        name=f"omconnect-{self._name}-log")
        self._thread.start()

    def _create_topic(self) -> None:
        admin = self._transport.admin()
        try:
            if self.topic not in admin.list_topics():
                admin.create_topics([TopicSpec(self.topic, 1)])
        finally:
            admin.close()

    def _reader(self) -> Consumer:
        consumer = self._transport.consumer(None, start="earliest")
        try:
            consumer.assign([self._partition])
        except BaseException:
            consumer.close()
            raise
        return consumer

    def append(self, record: Mapping[str, Any], timeout: float) -> str:
        """Append ``record`` (with a new ``id`` unless it has one) and return its id once
        the transport acknowledged it.

        Raises:
            TransportError: The write failed or was not acknowledged in time.

        """
        return self._send(dict(record), timeout)[0]

    def append_and_wait(self, record: Mapping[str, Any], timeout: float) -> Any:
        """Append ``record`` and wait until this log's reader applied it.

        Returns:
            The handler's outcome for the record.

        Raises:
            LogTimeoutError: Not read back within ``timeout`` seconds.
            TransportError: The write failed.

        """
        deadline = time.monotonic() + timeout
        record_id, future = self._send(dict(record), timeout, wait=True)
        try:
            return future.result(timeout=max(0.0, deadline - time.monotonic()))
        except FutureTimeout:
            raise LogTimeoutError(
                f"{self._name} log: record {record.get('kind')!r} was written but not read "
                f"back from topic {self.topic!r} within {timeout:g} s; it may still apply")\
                from None
        finally:
            with self._guard:
                self._waiting.pop(record_id, None)

    def _send(self, record: dict[str, Any], timeout: float, *, wait: bool = False
              ) -> tuple[str, Future[Any]]:
        if self._producer is None:
            raise TransportError(f"{self._name} log is not open", topic=self.topic)
        record_id = record.setdefault("id", uuid.uuid4().hex)
        future: Future[Any] = Future()
        if wait:
            with self._guard:
                self._waiting[record_id] = future
        data = json.dumps(record, sort_keys=True, default=str).encode()
        key = str(record.get("kind", "record")).encode()
        try:
            self._producer.send([Message(self.topic, key=key, value=data,
                                         partition=0)]).result(timeout=timeout)
        except FutureTimeout:
            raise TransportError(f"{self._name} log: a write to topic {self.topic!r} was "
                                 f"not acknowledged within {timeout:g} s",
                                 topic=self.topic) from None
        except BaseException:
            with self._guard:
                self._waiting.pop(record_id, None)
            raise
        return record_id, future

    def _read(self) -> None:
        consumer = self._consumer
        assert consumer is not None
        while not self._stop.is_set():
            try:
                messages = consumer.poll(_BATCH, _POLL_S)
            except Exception as exc:
                if self._stop.is_set():
                    return
                _log.warning("%s log: reading topic %r failed (retrying): %s", self._name,
                             self.topic, exc)
                self._stop.wait(_RETRY_S)
                continue
            for message in messages:
                if message.value is None:
                    continue
                try:
                    record = json.loads(message.value)
                except ValueError:
                    _log.warning("%s log: a record of topic %r is not JSON; skipped",
                                 self._name, self.topic)
                    continue
                if not isinstance(record, dict):
                    continue
                self.records_read += 1
                try:
                    outcome = self._handler(record)
                except Exception as exc:
                    _log.exception("%s log: applying a %r record failed", self._name,
                                   record.get("kind"))
                    outcome = exc
                with self._guard:
                    future = self._waiting.pop(str(record.get("id")), None)
                if future is not None and not future.done():
                    if isinstance(outcome, BaseException):
                        future.set_exception(outcome)
                    else:
                        future.set_result(outcome)

    def close(self) -> None:
        """Stop reading and close the clients. Idempotent."""
        self._stop.set()
        consumer, self._consumer = self._consumer, None
        if consumer is not None:
            consumer.wakeup()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=5.0)
        if consumer is not None:
            try:
                consumer.close()
            except Exception:
                _log.debug("%s log: closing the reader failed", self._name, exc_info=True)
        producer, self._producer = self._producer, None
        if producer is not None:
            try:
                producer.close(timeout=5.0)
            except Exception:
                _log.debug("%s log: closing the writer failed", self._name, exc_info=True)
        with self._guard:
            waiting, self._waiting = self._waiting, {}
        for future in waiting.values():
            if not future.done():
                future.set_exception(LogTimeoutError(f"{self._name} log closed"))
