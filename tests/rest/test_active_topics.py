"""Active topics per connector (KIP-558): ``GET /connectors/{name}/topics`` and
``PUT /connectors/{name}/topics/reset``, recorded as a pipeline's tasks produce and consume.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
from rest_helpers import wait_for_state

from omconnect.rest import start_server
from omconnect.runtime import StandaloneHerder
from omconnect.testing.waiting import eventually


def _topics(client: httpx.Client, name: str) -> list[str]:
    response = client.get(f"/connectors/{name}/topics")
    assert response.status_code == 200, response.text
    return list(response.json()[name]["topics"])


def _eventually_topics(client: httpx.Client, name: str, expected: list[str]) -> None:
    eventually(lambda: _topics(client, name) == expected, timeout=30,
               what=f"{name}'s active topics to be {expected}", interval=0.1)


def _pipeline(client: httpx.Client, tmp_path: Path, topic: str = "lines") -> Path:
    source_file = tmp_path / "in.txt"
    source_file.write_text("".join(f"line {n}\n" for n in range(20)))
    for name, config in (
            ("reader", {"connector.class": "FileStreamSource", "file": str(source_file),
                        "topic": topic}),
            ("writer", {"connector.class": "FileStreamSink", "topics": topic,
                        "file": str(tmp_path / "out.txt")})):
        response = client.post("/connectors", json={"name": name, "config": config})
        assert response.status_code == 201, response.text
        wait_for_state(client, name, "RUNNING")
    return source_file


def test_a_source_and_a_sink_show_the_topic_they_produce_to_and_consume_from(
        client: httpx.Client, tmp_path: Path) -> None:
    _pipeline(client, tmp_path)
    _eventually_topics(client, "reader", ["lines"])
    _eventually_topics(client, "writer", ["lines"])


def test_a_reset_empties_the_list_until_the_tasks_use_the_topic_again(
        client: httpx.Client, tmp_path: Path) -> None:
    source_file = _pipeline(client, tmp_path)
    _eventually_topics(client, "reader", ["lines"])
    _eventually_topics(client, "writer", ["lines"])
    for name in ("reader", "writer"):
        response = client.put(f"/connectors/{name}/topics/reset")
        assert response.status_code == 200, response.text
        assert response.content == b""
        assert _topics(client, name) == []
    with source_file.open("a") as more:
        more.write("one more line\n")
    _eventually_topics(client, "reader", ["lines"])
    _eventually_topics(client, "writer", ["lines"])


def test_a_deleted_connector_takes_its_active_topics_with_it(
        client: httpx.Client, tmp_path: Path) -> None:
    source_file = _pipeline(client, tmp_path)
    _eventually_topics(client, "writer", ["lines"])
    assert client.delete("/connectors/writer").status_code == 204
    assert client.get("/connectors/writer/topics").status_code == 404
    response = client.post("/connectors", json={"name": "writer", "config": {
        "connector.class": "FileStreamSink", "topics": "lines",
        "file": str(tmp_path / "other.txt")}})
    assert response.status_code == 201, response.text
    wait_for_state(client, "writer", "RUNNING")
    assert _topics(client, "writer") == []
    # The connector made again under the old name records the topic again when it reads.
    with source_file.open("a") as more:
        more.write("one more line\n")
    _eventually_topics(client, "writer", ["lines"])


def test_active_topics_survive_a_worker_restart(worker_config: dict[str, Any],
                                                tmp_path: Path) -> None:
    with StandaloneHerder(worker_config) as herder:
        served = start_server(herder, port=0)
        try:
            with httpx.Client(base_url=served.url, timeout=30) as client:
                _pipeline(client, tmp_path)
                _eventually_topics(client, "writer", ["lines"])
        finally:
            served.stop()
    with StandaloneHerder(worker_config) as herder:
        assert herder.active_topics("writer") == ["lines"]
        assert herder.active_topics("reader") == ["lines"]


@pytest.mark.parametrize(("settings", "get_status", "reset_status"), [
    ({"topic.tracking.enable": "false"}, 403, 403),
    ({"topic.tracking.allow.reset": "false"}, 200, 403),
])
def test_the_worker_config_can_turn_tracking_or_resets_off(
        worker_config: dict[str, Any], tmp_path: Path, settings: dict[str, str],
        get_status: int, reset_status: int) -> None:
    with StandaloneHerder({**worker_config, **settings}) as herder:
        served = start_server(herder, port=0)
        try:
            with httpx.Client(base_url=served.url, timeout=30) as client:
                _pipeline(client, tmp_path)
                response = client.get("/connectors/reader/topics")
                assert response.status_code == get_status, response.text
                reset = client.put("/connectors/reader/topics/reset")
                assert reset.status_code == reset_status, reset.text
                assert next(iter(settings)) in reset.json()["message"]
                assert client.get("/connectors/nobody/topics").status_code == 404
        finally:
            served.stop()


def test_a_store_failure_never_fails_the_task_and_the_topic_is_recorded_later(
        tmp_path: Path, caplog: pytest.LogCaptureFixture,
        monkeypatch: pytest.MonkeyPatch) -> None:
    from omconnect.errors import RetriableTransportError
    from omconnect.runtime.active_topics import ActiveTopics
    from omconnect.runtime.config_store import StatusStore
    from omconnect.transport.embedded import EmbeddedTransport

    with EmbeddedTransport({"path": str(tmp_path / "data")}) as transport:
        statuses = StatusStore(transport.kv_store("statuses"))
        real_put = statuses.put_topic
        failures = [RetriableTransportError("the status store is briefly unreachable")]

        def flaky_put(*args: Any) -> None:
            if failures:
                raise failures.pop()
            real_put(*args)

        monkeypatch.setattr(statuses, "put_topic", flaky_put)
        active = ActiveTopics(statuses)
        task = active.for_task("reader", 0)
        task.saw(["lines"])  # the store fails: no exception reaches the task
        assert "could not record its active topics" in caplog.text
        assert active.of("reader") == []
        task.saw(["lines"])  # the next batch to the topic records it
        assert active.of("reader") == ["lines"]
