"""Without the optional client libraries (the extras): every registered plugin loads, every
module imports or fails with a MissingExtraError naming the extra (never a NameError or a raw
ImportError), and using a plugin whose extra is missing fails with an error naming the extra.

The client libraries are blocked in a fresh interpreter (``sys.modules[name] = None`` makes
``import name`` fail exactly as if the package were not installed), so the test means the
same thing in every environment, with or without the extras installed.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

# Import name of each optional client library -> the extra that installs it.
BLOCKED = {
    "kafka": "kafka",
    "confluent_kafka": "confluent",
    "pika": "rabbitmq",
    "pulsar": "pulsar",
    "redis": "redis",
    "hiredis": "redis",
    "nats": "nats",
    "pyspark": "spark",
    "pyarrow": "parquet",
    "numpy": "columnar",
    "fsspec": "objectstore",
    "zstandard": "objectstore",
    "fastapi": "rest",
    "uvicorn": "rest",
}

PACKAGES = [
    "omconnect",
    "omconnect_kafka",
    "omconnect_rabbitmq",
    "omconnect_pulsar",
    "omconnect_redis",
    "omconnect_nats",
    "omconnect_file",
    "omconnect_datagen",
    "omconnect_console",
    "omconnect_spark",
    "omconnect_objectstore",
]


def _run(code: str) -> dict:
    prelude = textwrap.dedent(f"""
        import sys
        for name in {sorted(BLOCKED)!r}:
            sys.modules[name] = None
    """)
    result = subprocess.run([sys.executable, "-c", prelude + textwrap.dedent(code)],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_every_module_imports_without_any_extra():
    report = _run(f"""
        import importlib, json, pkgutil, traceback
        from omconnect.errors import MissingExtraError
        failures, imported, needs_extra = {{}}, [], {{}}
        for top in {PACKAGES!r}:
            try:
                package = importlib.import_module(top)
            except ModuleNotFoundError as exc:
                if exc.name == top:
                    continue  # that plugin package does not exist in this checkout
                raise
            names = [top] + [m.name for m in pkgutil.walk_packages(package.__path__, top + ".")
                             if not m.name.endswith(".__main__")]  # __main__ runs on import
            for name in names:
                try:
                    importlib.import_module(name)
                    imported.append(name)
                except MissingExtraError as exc:
                    needs_extra[name] = exc.extra
                except BaseException:
                    failures[name] = traceback.format_exc(limit=3)
        print(json.dumps({{"failures": failures, "imported": imported,
                          "needs_extra": needs_extra}}))
    """)
    assert report["failures"] == {}, "\n".join(
        f"{name}:\n{trace}" for name, trace in report["failures"].items())
    # The test means something only if it reached the plugin packages.
    for package in ("omconnect.cli", "omconnect_kafka", "omconnect_rabbitmq", "omconnect_pulsar",
                    "omconnect_redis", "omconnect_nats"):
        assert package in report["imported"]
    # Modules that exist only to serve an extra say which one to install.
    assert set(report["needs_extra"].values()) <= set(BLOCKED.values()), report["needs_extra"]


def test_every_registered_plugin_loads_without_any_extra():
    """`omconnect plugins` must list every plugin even where its client library is absent."""
    report = _run("""
        import json, traceback
        from omconnect import plugins
        failures, loaded = {}, []
        for group in plugins.GROUPS:
            for name, entry_point in plugins.available(group).items():
                try:
                    entry_point.load()
                    loaded.append(f"{group}:{name}")
                except BaseException:
                    failures[f"{group}:{name}"] = traceback.format_exc(limit=3)
        print(json.dumps({"failures": failures, "loaded": loaded}))
    """)
    assert report["failures"] == {}, "\n".join(
        f"{name}:\n{trace}" for name, trace in report["failures"].items())
    for expected in ("omconnect.transports:kafka", "omconnect.transports:rabbitmq",
                     "omconnect.transports:pulsar", "omconnect.transports:redis",
                     "omconnect.transports:nats",
                     "omconnect.connectors:file-source"):
        assert expected in report["loaded"]


@pytest.mark.parametrize(
    ("transport", "config", "extra"),
    [
        ("kafka", {"kafka.bootstrap.servers": "127.0.0.1:1"}, "kafka"),
        ("rabbitmq", {"rabbitmq.url": "amqp://guest:guest@127.0.0.1:1/"}, "rabbitmq"),
        ("pulsar", {"pulsar.service.url": "pulsar://127.0.0.1:1"}, "pulsar"),
        ("redis", {"redis.url": "redis://127.0.0.1:1/0"}, "redis"),
        ("nats", {"nats.servers": "nats://127.0.0.1:1"}, "nats"),
    ],
)
def test_a_transport_without_its_extra_names_the_extra(transport, config, extra):
    report = _run(f"""
        import json
        from omconnect import plugins
        from omconnect.errors import MissingExtraError
        outcome = {{"error": None}}
        try:
            cls = plugins.load(plugins.TRANSPORTS, {transport!r})
            options = {{k.split(".", 1)[1]: v for k, v in {config!r}.items()}}
            transport = cls(options)
            transport.producer().close()
        except MissingExtraError as exc:
            outcome = {{"error": "MissingExtraError", "message": str(exc), "extra": exc.extra}}
        except BaseException as exc:
            outcome = {{"error": type(exc).__name__, "message": str(exc)}}
        print(json.dumps(outcome))
    """)
    assert report["error"] == "MissingExtraError", report
    assert report["extra"] == extra
    assert f"pip install 'omconnect[{extra}]'" in report["message"]


def test_conformance_without_pytest_names_the_extra_and_exits_two() -> None:
    script = textwrap.dedent("""
        import sys
        sys.modules["pytest"] = None  # as if pytest were not installed
        from omconnect.cli import main
        raise SystemExit(main(["conformance", "--transport", "memory"]))
    """)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 2, result.stderr
    assert "pip install 'omconnect[test]'" in result.stderr
    assert "Traceback" not in result.stderr


def test_the_core_pipeline_runs_without_the_columnar_extra(tmp_path) -> None:
    """The quick start's file source and file sink (and the data generator's payload task
    with the null sink) run on a core install: tasks that also take Arrow batches fall back
    to put/poll when pyarrow is not there.
    """
    source, sink = tmp_path / "in.txt", tmp_path / "out.txt"
    source.write_text("".join(f"line {i}\n" for i in range(200)))
    report = _run(f"""
        import json, time
        from omconnect.runtime import StandaloneHerder
        from omconnect_console.null import COUNTS
        config = {{"transport": "embedded", "embedded.path": {str(tmp_path / "log.db")!r},
                   "offset.flush.interval.ms": 100}}
        with StandaloneHerder(config) as herder:
            herder.create_connector({{"name": "in", "connector.class": "file-source",
                                      "file": {str(source)!r}, "topic": "lines"}})
            herder.create_connector({{"name": "out", "connector.class": "file-sink",
                                      "file": {str(sink)!r}, "topics": "lines"}})
            herder.create_connector({{"name": "gen", "connector.class": "datagen",
                                      "topic": "p", "quickstart": "payload",
                                      "max.messages": 500}})
            herder.create_connector({{"name": "drop", "connector.class": "null",
                                      "topics": "p"}})
            deadline = time.monotonic() + 60
            def done():
                import pathlib
                out = pathlib.Path({str(sink)!r})
                return (out.exists() and out.read_text().count("\\n") == 200
                        and COUNTS["drop"] >= 500)
            while not done() and time.monotonic() < deadline:
                time.sleep(0.05)
            states = {{name: herder.connector_status(name).tasks[0].state.value
                       for name in ("in", "out", "gen", "drop")}}
            columnar = sum(m.columnar for m in herder.metrics())
        print(json.dumps({{"states": states, "dropped": COUNTS["drop"],
                          "columnar": columnar}}))
    """)
    assert report["states"] == dict.fromkeys(("in", "out", "gen", "drop"), "RUNNING"), report
    assert sink.read_text() == source.read_text()
    assert report["dropped"] == 500
    assert report["columnar"] == 0
