"""Transport cases: the durable key/value store offsets live in (TRANSPORT-40 to
TRANSPORT-47).
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import uuid

from omconnect.testing.transport import workers
from omconnect.testing.transport.base import TransportCase, TransportHarness

__all__ = ["KeyValueCases"]


class KeyValueCases(TransportCase):
    """get/put/put_many/scan, last write wins, durability, concurrent writers."""

    def _namespace(self) -> str:
        return f"omc-kv-{uuid.uuid4().hex[:8]}"

    def test_put_get(self, harness: TransportHarness) -> None:
        """TRANSPORT-40: ``get`` returns the bytes ``put`` stored (empty bytes stay
        empty), ``None`` for a key never written.
        """
        store = harness.kv_store(self._namespace())
        assert store.get("missing") is None
        store.put("a", b"1")
        store.put("empty", b"")
        store.put("binary", bytes(range(256)))
        store.put("unicode-κλειδί/with spaces", b"u")
        assert store.get("a") == b"1"
        assert store.get("empty") == b""
        assert store.get("binary") == bytes(range(256))
        assert store.get("unicode-κλειδί/with spaces") == b"u"

    def test_last_write_wins(self, harness: TransportHarness) -> None:
        """TRANSPORT-41: the last write to a key wins, also with writers on several
        threads.
        """
        store = harness.kv_store(self._namespace())
        for i in range(20):
            store.put("k", f"v{i}".encode())
        assert store.get("k") == b"v19"
        errors: list[BaseException] = []

        def write(name: str) -> None:
            try:
                for i in range(50):
                    store.put_many({f"{name}-{i}": b"x", "shared": f"{name}".encode()})
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=write, args=(f"t{n}",)) for n in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(harness.settings.timeout)
        assert not any(t.is_alive() for t in threads), "a writer thread hangs"
        assert not errors, f"concurrent writes failed: {errors[:3]}"
        assert store.get("shared") in {b"t0", b"t1", b"t2", b"t3"}
        assert len(list(store.scan("t"))) == 200

    def test_put_many_and_delete(self, harness: TransportHarness) -> None:
        """TRANSPORT-42: ``put_many`` stores several values at once; a ``None`` value
        deletes its key.
        """
        store = harness.kv_store(self._namespace())
        store.put_many({"a": b"1", "b": b"2", "c": b"3"})
        store.put_many({"b": None, "c": b"33", "d": b"4"})
        store.put("a", None)
        assert [store.get(k) for k in "abcd"] == [None, None, b"33", b"4"]
        assert dict(store.scan()) == {"c": b"33", "d": b"4"}

    def test_scan_by_prefix_in_key_order(self, harness: TransportHarness) -> None:
        """TRANSPORT-43: ``scan(prefix)`` yields exactly the keys starting with
        ``prefix``, in key order.
        """
        store = harness.kv_store(self._namespace())
        keys = ["offsets/b", "offsets/a", "offsets/c/2", "other/a", "offsets", "offsetsX"]
        store.put_many({k: k.encode() for k in keys})
        assert [k for k, _ in store.scan("offsets/")] == ["offsets/a", "offsets/b",
                                                         "offsets/c/2"]
        assert [k for k, _ in store.scan()] == sorted(keys)
        assert all(v == k.encode() for k, v in store.scan())
        assert list(store.scan("nothing-here/")) == []

    def test_namespaces_are_isolated(self, harness: TransportHarness) -> None:
        """TRANSPORT-44: two namespaces never see each other's keys."""
        first, second = harness.kv_store(self._namespace()), harness.kv_store(self._namespace())
        first.put("k", b"first")
        second.put("k", b"second")
        assert first.get("k") == b"first" and second.get("k") == b"second"
        assert list(first.scan()) == [("k", b"first")]

    def test_survives_close_and_reopen(self, harness: TransportHarness) -> None:
        """TRANSPORT-45: what a store holds survives closing it and opening the same
        namespace again.
        """
        namespace = self._namespace()
        store = harness.transport.kv_store(namespace)
        store.put_many({f"key-{i}": f"value-{i}".encode() for i in range(20)})
        store.put("key-0", None)
        store.close()
        store.close()
        reopened = harness.kv_store(namespace)
        assert reopened.get("key-0") is None
        assert dict(reopened.scan()) == {f"key-{i}": f"value-{i}".encode()
                                         for i in range(1, 20)}

    def test_survives_process_restart(self, harness: TransportHarness) -> None:
        """TRANSPORT-46: a write that returned survives the writing process being
        killed (SIGKILL) and the transport being opened again in another process.
        """
        harness.require(persistent=True, cross_process=True)
        namespace = self._namespace()
        items = {f"offset/{i}": f"{i}".encode() for i in range(50)}
        reports = workers.queue()
        child = workers.spawn(workers.kv_write_then_wait, harness.portable_factory(), namespace,
                              items, reports)
        try:
            assert reports.get(timeout=harness.settings.timeout * 2) == "written"
        finally:
            if child.pid is not None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(child.pid, signal.SIGKILL)
            child.join(10)
        harness.reopen()
        assert dict(harness.kv_store(namespace).scan()) == items

    def test_concurrent_writers_from_two_processes(self, harness: TransportHarness) -> None:
        """TRANSPORT-47: two processes writing one namespace at once lose no write, and
        a key both write holds the last value one of them wrote.
        """
        harness.require(cross_process=True)
        namespace, count = self._namespace(), harness.count(200)
        factory = harness.portable_factory()
        harness.kv_store(namespace).put("seed", b"0")  # the namespace exists before both start
        start, reports = workers.event(), workers.queue()
        children = [workers.spawn(workers.kv_writer, factory, namespace, name, count, start,
                                  reports) for name in ("p1", "p2")]
        try:
            start.set()
            results = dict(reports.get(timeout=harness.settings.timeout * 4) for _ in children)
        finally:
            for child in children:
                child.join(10)
                if child.is_alive() and child.pid is not None:
                    os.kill(child.pid, signal.SIGKILL)
        errors = [r for r in results.values() if isinstance(r, BaseException)]
        assert not errors, f"a writer process failed: {errors[0]!r}"
        store = harness.kv_store(namespace)
        for name in ("p1", "p2"):
            keys = [k for k, _ in store.scan(f"{name}/")]
            assert len(keys) == count, f"{count - len(keys)} writes of {name} were lost"
        assert store.get("shared") in set(results.values()), \
            "the shared key holds neither writer's last value"
