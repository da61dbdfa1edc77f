"""Functions the cross-process cases run in child processes (``spawn`` start method).

Each takes a picklable transport factory and reports through a multiprocessing queue;
the parent kills the child (SIGKILL) where a case needs "the process died".
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.context
import time
from collections.abc import Callable
from typing import Any

from omconnect.transport.spi import Transport

__all__ = ["consume_without_commit", "create_topic", "event", "kv_write_then_wait",
           "kv_writer", "queue", "spawn"]


def spawn(target: Callable[..., None], *args: Any) -> multiprocessing.process.BaseProcess:
    """Start ``target(*args)`` in a fresh interpreter (spawn, never fork: a forked child
    would share the parent's open sockets and locks).
    """
    context = multiprocessing.get_context("spawn")
    process = context.Process(target=target, args=args, daemon=True)
    process.start()
    return process


def queue() -> Any:
    """A queue that works with :func:`spawn`."""
    return multiprocessing.get_context("spawn").Queue()


def event() -> Any:
    """An event that works with :func:`spawn`."""
    return multiprocessing.get_context("spawn").Event()


def consume_without_commit(factory: Callable[[], Transport], topic: str, group: str,
                           reports: Any) -> None:
    """Join ``group`` on ``topic``, report "ready" once the consumer holds a partition
    (or after a few polls, when it cannot tell), then poll forever, reporting every batch
    of values received and never committing (the parent kills this process).
    """
    transport = factory()
    consumer = transport.consumer(group, start="earliest")
    consumer.subscribe([topic])
    for _ in range(300):
        messages = consumer.poll(100, 0.1)
        try:
            joined = bool(consumer.assignment())
        except NotImplementedError:
            joined = True
        if joined or messages:
            break
    reports.put("ready")
    if messages:
        reports.put([m.value for m in messages])
    while True:
        messages = consumer.poll(100, 0.2)
        if messages:
            reports.put([m.value for m in messages])


def kv_write_then_wait(factory: Callable[[], Transport], namespace: str,
                       items: dict[str, bytes], reports: Any) -> None:
    """Write ``items`` to the store, report "written", then wait to be killed."""
    transport = factory()
    store = transport.kv_store(namespace)
    store.put_many(items)
    reports.put("written")
    while True:
        time.sleep(1)


def kv_writer(factory: Callable[[], Transport], namespace: str, name: str, count: int,
              start: Any, reports: Any) -> None:
    """Once ``start`` is set, write ``count`` own keys and the shared key ``count`` times;
    report the last value written to the shared key (or the error).
    """
    try:
        transport = factory()
        store = transport.kv_store(namespace)
        start.wait(60)
        last = b""
        for i in range(count):
            last = f"{name}:{i}".encode()
            store.put_many({f"{name}/{i:05d}": last, "shared": last})
        store.close()
        transport.close()
        reports.put((name, last))
    except BaseException as exc:
        reports.put((name, exc))


def create_topic(factory: Callable[[], Transport], name: str, partitions: int, start: Any,
                 reports: Any) -> None:
    """Once ``start`` is set, create topic ``name`` with ``partitions`` partitions;
    report ``None`` or the error.
    """
    from omconnect.transport.messages import TopicSpec

    try:
        transport = factory()
        admin = transport.admin()
        start.wait(60)
        admin.create_topics([TopicSpec(name, partitions)])
        admin.close()
        transport.close()
        reports.put(None)
    except BaseException as exc:
        reports.put(exc)
