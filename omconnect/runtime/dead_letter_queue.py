"""The dead-letter topic: where records that failed under ``errors.tolerance=all`` go.

What is written:

* **Sink connectors**: the original message exactly as consumed (raw key, value and
  headers bytes), as Kafka Connect does.
* **Source connectors** (an omconnect addition): the record as the connector's converters
  serialise it when they can (for a record that failed at the ``PRODUCE`` stage, the very
  message that was refused); when conversion itself failed, the key and value as JSON
  text (structs as objects, bytes inside them as base64, anything else as ``str()``;
  a top-level bytes value as it is). The record's own headers are kept when the header
  converter accepts them.
* A record refused because it is over the transport's size limit is written with its key
  and the context headers only (its value would be refused again).

With ``errors.deadletterqueue.context.headers.enable=true`` these headers are added, with
Kafka Connect's names, values as UTF-8 text: ``__connect.errors.topic``,
``__connect.errors.partition``, ``__connect.errors.offset`` (the consumed position; sink
only), ``__connect.errors.connector.name``, ``__connect.errors.task.id``,
``__connect.errors.stage``, ``__connect.errors.class.name``,
``__connect.errors.exception.class.name``, ``__connect.errors.exception.message``,
``__connect.errors.exception.stacktrace``; for source records also
``__connect.errors.source.partition`` and ``__connect.errors.source.offset`` (JSON).
"""

from __future__ import annotations

import base64
import json
import traceback
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from omconnect.data.struct import Struct
from omconnect.errors import MessageTooLargeError
from omconnect.records import RecordMetadata, SourceRecord
from omconnect.runtime.retry_with_tolerance import Failure, class_name
from omconnect.runtime.topic_creator import TopicCreator
from omconnect.transport.messages import Message, WireHeaders
from omconnect.transport.spi import Producer

__all__ = ["HEADER_PREFIX", "DeadLetterQueue", "json_fallback"]

HEADER_PREFIX = "__connect.errors."


class DeadLetterQueue:
    """Writes failed records to the dead-letter topic. Safe to call from any thread.

    Args:
        topic: The dead-letter topic.
        producer: Returns the producer to send with (called on first use).
        topics: Creates the topic when missing.
        partitions: Its partitions when created.
        context_headers: Add the ``__connect.errors.*`` headers.
        serialize: For source records, the task's serialisation (record → message), tried
            before the JSON fallback.

    """

    def __init__(
        self,
        topic: str,
        *,
        producer: Callable[[], Producer],
        topics: TopicCreator,
        partitions: int = 1,
        context_headers: bool = False,
        serialize: Callable[[SourceRecord], Message] | None = None,
    ) -> None:
        self.topic = topic
        self._producer = producer
        self._topics = topics
        self._partitions = partitions
        self._context_headers = context_headers
        self._serialize = serialize

    def report(self, failure: Failure) -> Future[None]:
        """Send ``failure``'s record to the dead-letter topic.

        Returns:
            Completes when the transport acknowledged it; fails with the transport's
            error otherwise.

        """
        message = self._message(failure)
        done: Future[None] = Future()
        try:
            self._topics.ensure([self.topic], self._partitions)
            sent = self._producer().send([message])
        except Exception as exc:
            done.set_exception(exc)
            return done

        def _complete(result: Future[list[RecordMetadata]]) -> None:
            error = result.exception()
            if error is None:
                done.set_result(None)
            else:
                done.set_exception(error)

        sent.add_done_callback(_complete)
        return done

    def _message(self, failure: Failure) -> Message:
        original = failure.message
        if original is None and failure.source_record is not None:
            original = self._serialized(failure.source_record)
        if original is None:
            original = Message(self.topic)
        headers: WireHeaders = original.headers
        value = original.value
        if isinstance(failure.error, MessageTooLargeError):
            # It would be too large for the dead-letter topic as well: keep the key and
            # the context, drop the value and the record's headers.
            value, headers = None, ()
        if self._context_headers:
            headers = headers + context_headers(failure)
        return Message(self.topic, original.key, value, headers, original.timestamp)

    def _serialized(self, record: SourceRecord) -> Message:
        if self._serialize is not None:
            try:
                return self._serialize(record)
            except Exception:
                pass
        return Message(record.topic, json_fallback(record.key), json_fallback(record.value),
                       (), record.timestamp)


def context_headers(failure: Failure) -> WireHeaders:
    """The ``__connect.errors.*`` headers describing ``failure``."""
    error = failure.error
    headers: list[tuple[str, bytes | None]] = []

    def add(name: str, value: Any) -> None:
        headers.append((HEADER_PREFIX + name, str(value).encode("utf-8")))

    message = failure.message
    record = failure.source_record
    if message is not None and message.offset is not None:
        add("topic", message.topic)
        add("partition", message.partition)
        add("offset", message.offset)
    elif record is not None:
        add("topic", record.topic)
    elif message is not None:
        add("topic", message.topic)
    add("connector.name", failure.connector)
    add("task.id", failure.task)
    add("stage", failure.stage.value)
    add("class.name", failure.executing_class)
    add("exception.class.name", class_name(error))
    if str(error):
        add("exception.message", str(error))
    add("exception.stacktrace", "".join(traceback.format_exception(error)))
    if record is not None:
        add("source.partition", json.dumps(dict(record.source_partition), sort_keys=True,
                                           default=str))
        add("source.offset", json.dumps(dict(record.source_offset), sort_keys=True,
                                        default=str))
    return tuple(headers)


def json_fallback(value: Any) -> bytes | None:
    """``value`` as JSON text (the last resort for dead-lettered source records)."""
    if value is None:
        return None
    if isinstance(value, bytes | bytearray):
        return bytes(value)
    return json.dumps(_plain(value), default=str, sort_keys=True).encode("utf-8")


def _plain(value: Any) -> Any:
    if isinstance(value, Struct):
        return {f.name: _plain(value.get(f.name)) for f in value.schema.fields}
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, bytes | bytearray):
        return base64.b64encode(bytes(value)).decode("ascii")
    return value
