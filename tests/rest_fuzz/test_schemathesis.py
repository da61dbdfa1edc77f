"""Property-based fuzzing of the REST API against ``specs/rest-api.yaml`` (schemathesis).

A real worker (``omconnect standalone ... --rest-port 0``, embedded transport) runs in
its own process, in a temporary directory (connectors the fuzzer manages to create
write only there), with token authentication on. Every operation of the committed spec
gets generated requests, valid and invalid; each response must not be a 5xx and must
conform to the spec (status code, content type, headers, body schema), and invalid
requests must be rejected with a 4xx.

Random names, configs and offsets alone would almost only meet 404s and 400s, so hooks
steer part of the generation at real state: about half the requests on a connector name
one of the seeded connectors (a running file source and file sink, a stopped source and
sink: before each case re-created, given back their configs and put back in their
states); about half the config bodies are a valid file connector config with the
generated keys merged in; about half the positive offset changes are valid ones for a
stopped seed (its own partition, generated non-negative offsets or nulls, the generated
plain values merged in where the connector ignores other keys). Thus pauses, stops,
restarts, config changes, offset changes and deletes hit live connectors and succeed.

Each generated sequence of calls starts from the same worker state (only the seeded
connectors, created afresh, no offsets: ``_reset``), so hypothesis meets the same
responses whenever it plays the same choices, and the run is deterministic.

Bounded: ``FUZZ_EXAMPLES`` examples per operation and ``FUZZ_SEQUENCES`` sequences
(default 30 each), so the run takes a couple of minutes. Run with ``tox -e rest`` (or
``pytest -m fuzz tests/rest_fuzz``).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest

schemathesis = pytest.importorskip("schemathesis", reason="the fuzz run needs schemathesis")

from hypothesis import HealthCheck, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from schemathesis import GenerationMode  # noqa: E402
from schemathesis.checks import not_a_server_error  # noqa: E402
from schemathesis.generation.meta import TestPhase  # noqa: E402
from schemathesis.specs.openapi.checks import (  # noqa: E402
    content_type_conformance,
    negative_data_rejection,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

pytestmark = pytest.mark.fuzz

SPEC = Path(__file__).resolve().parents[2] / "specs" / "rest-api.yaml"
TOKEN = "fuzz-token"
EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "30"))
STATEFUL_EXAMPLES = int(os.environ.get("FUZZ_SEQUENCES", "30"))
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance,
          response_headers_conformance, response_schema_conformance,
          negative_data_rejection]
"""What every response is held to. Not positive_data_acceptance: a config that fits the
schema (any string map) is still refused with a 400 when the connector finds it invalid,
which is the API's contract, not a defect."""

AUTH = {"Authorization": f"Bearer {TOKEN}"}
FILE_SOURCE = {"connector.class": "FileStreamSource", "file": "in.txt", "topic": "lines"}
FILE_SINK = {"connector.class": "FileStreamSink", "file": "out.txt", "topics": "lines"}
SEEDS = {
    "reader": {"name": "reader", "config": FILE_SOURCE},
    "writer": {"name": "writer", "config": FILE_SINK},
    "parked": {"name": "parked", "config": FILE_SOURCE, "initial_state": "STOPPED"},
    "parked-sink": {"name": "parked-sink", "initial_state": "STOPPED",
                    "config": {**FILE_SINK, "file": "parked-out.txt"}},
}
"""Connectors the fuzzer acts on, put back as they are here before each case."""
PARTITIONS = {
    "parked": {"filename": FILE_SOURCE["file"]},
    "parked-sink": {"kafka_topic": FILE_SINK["topics"], "kafka_partition": 0},
}
"""The partition each stopped seed reads: the file source's (the ``file`` it is
configured with), the sink's first partition of its topic."""
POSITIONS = {"parked": "position", "parked-sink": "kafka_offset"}
"""The key of an offset of each stopped seed."""
PLUGINS = ("FileStreamSource", "file-sink", "datagen", "console")

schema = schemathesis.openapi.from_path(SPEC)


@schema.hook
def flatmap_path_parameters(context: schemathesis.HookContext,
                            path_parameters: dict[str, object] | None
                            ) -> st.SearchStrategy:
    """Half the time, name a seeded connector or an installed plugin."""
    if not path_parameters:
        return st.just(path_parameters)
    if isinstance(path_parameters.get("name"), str):
        seeded = st.sampled_from(sorted(SEEDS)).map(
            lambda name: {**path_parameters, "name": name})
        if "task" in path_parameters:  # and its first task
            seeded = seeded.map(lambda parameters: {**parameters, "task": 0})
        return st.one_of(st.just(path_parameters), seeded)
    if isinstance(path_parameters.get("plugin"), str):
        return st.one_of(st.just(path_parameters), st.sampled_from(PLUGINS).map(
            lambda plugin: {**path_parameters, "plugin": plugin}))
    return st.just(path_parameters)


@schema.hook
def flatmap_body(context: schemathesis.HookContext, body: object) -> st.SearchStrategy:
    """Half the time, make a config body a valid file connector config plus the
    generated keys.
    """
    base = st.sampled_from([FILE_SOURCE, FILE_SINK])
    operation = context.operation
    if not isinstance(body, dict) or operation is None:
        return st.just(body)
    if operation.path == "/connectors" and isinstance(body.get("config"), dict):
        return st.one_of(st.just(body), base.map(
            lambda config: {**body, "config": {**config, **body["config"]}}))
    if operation.path.endswith("/validate"):  # the plugin is in the path
        return st.one_of(st.just(body), base.map(lambda config: {
            **{k: v for k, v in config.items() if k != "connector.class"}, **body}))
    if operation.path.endswith(("/config", "/{name}")):
        return st.one_of(st.just(body), base.map(lambda config: {**config, **body}))
    return st.just(body)


@schema.hook
def flatmap_case(context: schemathesis.HookContext,
                 case: schemathesis.Case) -> st.SearchStrategy:
    """Make about half the positive ``PATCH .../offsets`` cases a valid offset change of a
    stopped seed: its own partition (the file source's file; the sink's topic partition),
    one entry per generated entry, each with a generated non-negative offset, or null (a
    reset) where the generated entry has a null offset; the generated offsets' plain
    values are merged in, and the generated partition's into the sink's (connectors
    ignore keys they do not read; another key in a source partition would name another
    partition).

    The seed is the stopped one of the named seed's kind (a source for reader and parked,
    a sink for writer and parked-sink), else by the generated name's length. Negative
    cases stay as generated (they must stay invalid), and so does a stateful case whose
    name is not a seed: a link supplied it (the connector that sequence created).
    """
    body = case.body
    name = case.path_parameters.get("name")
    if (case.method.upper() != "PATCH" or not case.path.endswith("/offsets")
            or case.meta is None or case.meta.generation.mode is not GenerationMode.POSITIVE
            or (case.meta.phase.name is TestPhase.STATEFUL and name not in SEEDS)
            or not isinstance(body, dict) or not isinstance(body.get("offsets"), list)):
        return st.just(case)
    entries = [entry for entry in body["offsets"] if isinstance(entry, dict)] or [{}]
    if name in SEEDS:
        sink = SEEDS[name]["config"]["connector.class"] == FILE_SINK["connector.class"]
        target = "parked-sink" if sink else "parked"
    else:
        target = sorted(PARTITIONS)[len(str(name)) % 2]

    def changed(values: list[int]) -> schemathesis.Case:
        offsets = []
        for entry, value in zip(entries, values, strict=True):
            partition, offset = entry.get("partition"), entry.get("offset")
            change: dict[str, object] = {"partition": PARTITIONS[target]}
            if target == "parked-sink":  # the sink reads only kafka_topic, kafka_partition
                change["partition"] = {**_storable(partition), **PARTITIONS[target]}
            if "offset" in entry and offset is None:
                change["offset"] = None
            else:
                change["offset"] = {**_storable(offset), POSITIONS[target]: value}
            offsets.append(change)
        result = case.derive()
        result.path_parameters = {**case.path_parameters, "name": target}
        result.body = {"offsets": offsets}
        return result

    values = st.lists(st.integers(0, 2**63 - 1), min_size=len(entries),
                      max_size=len(entries))
    # The change first: hypothesis favours a one_of's first branch.
    return st.one_of(values.map(changed), st.just(case))


def _storable(value: object) -> dict[str, object]:
    """The keys of ``value`` (if an object) with a plain value the API stores as it is:
    a string, boolean, null or 64-bit integer (it refuses bigger integers and lone
    surrogates).
    """
    def plain(item: object) -> bool:
        if isinstance(item, str):
            return not any(0xD800 <= ord(char) <= 0xDFFF for char in item)
        return item is None or isinstance(item, bool) or (
            isinstance(item, int) and -2**63 <= item < 2**63)

    if not isinstance(value, dict):
        return {}
    return {key: item for key, item in value.items() if plain(key) and plain(item)}


def _reseed(base_url: str) -> None:
    """Put the seeded connectors back as :data:`SEEDS` has them: re-create those the
    fuzzer deleted, restore a config it changed (a config change may even have turned a
    source into a sink), and put each back in its state (reader and writer running, the
    parked ones stopped), so every operation meets live ones of the kinds it expects.
    """
    with httpx.Client(base_url=base_url, headers=AUTH, timeout=60) as client:
        present = client.get("/connectors", params=[("expand", "status"),
                                                     ("expand", "info")]).json()
        for name, body in SEEDS.items():
            wanted = body.get("initial_state", "RUNNING")
            if name not in present:
                response = client.post("/connectors", json=body)
                assert response.status_code in (201, 409), response.text
                continue
            state = present[name]["status"]["connector"]["state"]
            config = {**body["config"], "name": name}
            if present[name]["info"]["config"] != config:
                response = client.put(f"/connectors/{name}/config", json=config)
                assert response.status_code == 200, response.text
            if wanted == "STOPPED" and state != "STOPPED":
                client.put(f"/connectors/{name}/stop")
            elif wanted == "RUNNING" and state in ("STOPPED", "PAUSED"):
                client.put(f"/connectors/{name}/resume")


def _reset(base_url: str) -> None:
    """Put the worker back in the state every sequence starts from: the seeded connectors
    alone, freshly created from their configs in their states, with no offsets.

    Which rules a sequence may take next depends on the status codes of its earlier
    responses (a link is followed only from a 201 create, a 200 get, ...), and hypothesis
    requires the same choices to meet the same rules in every example it plays. A sequence
    that met connectors an earlier one left behind (a 409 instead of a 201 for a reused
    name, a seed whose config it changed) would branch differently: that is hypothesis'
    FlakyStrategyDefinition. Every connector is deleted (the seeds' offsets reset first,
    since a delete keeps them) and the seeds created again; a connector that cannot be
    deleted fails the test.
    """
    with httpx.Client(base_url=base_url, headers=AUTH, timeout=60) as client:
        for name in client.get("/connectors").json():
            path = "/connectors/" + quote(name, safe="").replace(".", "%2E")
            if name in SEEDS:
                assert client.put(f"{path}/stop").status_code == 204
                assert client.delete(f"{path}/offsets").status_code == 200
            response = client.delete(path)
            assert response.status_code == 204, (name, response.text)
        assert client.get("/connectors").json() == []
        for body in SEEDS.values():
            response = client.post("/connectors", json=body)
            assert response.status_code == 201, response.text


@pytest.fixture(scope="module")
def base_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    workdir = tmp_path_factory.mktemp("fuzz")
    (workdir / "worker.properties").write_text(
        f"transport=embedded\nembedded.path={workdir / 'data'}\n"
        f"rest.auth.token={TOKEN}\ntask.shutdown.graceful.timeout.ms=1000\n")
    process = subprocess.Popen(
        [sys.executable, "-m", "omconnect.cli", "standalone",
         str(workdir / "worker.properties"), "--rest-port", "0", "--status-interval", "0"],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        text=True, cwd=workdir)
    (workdir / "in.txt").write_text("".join(f"line {n}\n" for n in range(100)))
    log: list[str] = []
    assert process.stderr is not None
    reader = threading.Thread(target=lambda: log.extend(process.stderr or ()), daemon=True)
    reader.start()
    try:
        yield _wait_for_address(process, log)
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        reader.join(10)
        text = "".join(log)
        _summarise(text)
        assert "Traceback" not in text, text[-20000:]


def _summarise(log: str) -> None:
    """Print how many requests of each documented operation got 2xx and 4xx, so a run
    shows what it reached (e.g. 2xx on pauses, offset changes and deletes).
    """
    counts: Counter[tuple[str, str, str]] = Counter()
    for method, path, status in re.findall(
            r'\\"([A-Z]+) (/[^ ?]*)\S* HTTP/1\.1\\" (\d{3})', log):
        parts = path.split("/")
        if len(parts) > 2:
            parts[2] = "{plugin}" if parts[1] == "connector-plugins" else "{name}"
        if len(parts) > 4 and parts[3] == "tasks":
            parts[4] = "{task}"
        counts[(" ".join((method, "/".join(parts))), status[0] + "xx", "")] += 1
    print(f"\nREST fuzz: {sum(counts.values())} requests")
    for operation in sorted({op for op, _, _ in counts}):
        by_class = {c: counts[(operation, c, "")] for c in ("2xx", "4xx", "5xx")}
        if by_class["2xx"] or by_class["5xx"] or by_class["4xx"] >= 10:
            print(f"  {operation:50} " + " ".join(f"{c} {n:4}" for c, n in by_class.items()))


def _wait_for_address(process: subprocess.Popen[str], log: list[str]) -> str:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and process.poll() is None:
        for line in list(log):
            match = re.search(r"REST API listening on (http://127\.0\.0\.1:\d+)", line)
            if match:
                return match.group(1)
        time.sleep(0.05)
    pytest.fail("the worker did not report its REST API address:\n" + "".join(log))


@schema.parametrize()
@settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
def test_the_api_honours_its_spec(case: schemathesis.Case, base_url: str) -> None:
    _reseed(base_url)
    case.call_and_validate(base_url=base_url, headers=AUTH, checks=CHECKS, timeout=60)


def test_sequences_of_calls_keep_to_the_spec(base_url: str) -> None:
    """Sequences that create a connector, then act on it (links schemathesis infers from
    the responses: the name a create returns feeds the operations on that connector).
    """
    class Workflow(schema.as_state_machine()):
        def setup(self) -> None:
            _reset(base_url)

        def get_call_kwargs(self, case: schemathesis.Case) -> dict[str, object]:
            return {"base_url": base_url, "headers": AUTH, "timeout": 60}

        def validate_response(self, response: schemathesis.Response,
                              case: schemathesis.Case, additional_checks: object = None,
                              **kwargs: object) -> None:
            case.validate_response(response, checks=CHECKS, headers=AUTH,
                                   transport_kwargs=kwargs)

    Workflow.run(settings=settings(max_examples=STATEFUL_EXAMPLES, stateful_step_count=8,
                                   deadline=None, derandomize=True, database=None,
                                   suppress_health_check=list(HealthCheck)))
