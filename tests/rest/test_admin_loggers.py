"""``/admin/loggers`` (KIP-495, KIP-976): log levels read and changed at run time."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import httpx
import pytest


@pytest.fixture(autouse=True)
def _restore_levels() -> Iterator[None]:
    names = ["omconnect_test_admin", "omconnect_test_admin.child", "omconnect_test_admin.c2"]
    for name in names:
        logging.getLogger(name).setLevel(logging.NOTSET)
    root = logging.getLogger().level
    yield
    for name in names:
        logging.getLogger(name).setLevel(logging.NOTSET)
    logging.getLogger().setLevel(root)


def test_a_level_set_applies_to_the_logger_and_its_descendants(client: httpx.Client,
                                                               caplog) -> None:
    logging.getLogger("omconnect_test_admin.child")
    logging.getLogger("omconnect_test_admin.c2")
    response = client.put("/admin/loggers/omconnect_test_admin", json={"level": "ERROR"})
    assert response.status_code == 200, response.text
    assert sorted(response.json()) == ["omconnect_test_admin", "omconnect_test_admin.c2",
                                       "omconnect_test_admin.child"]
    child = client.get("/admin/loggers/omconnect_test_admin.child").json()
    assert child["level"] == "ERROR" and child["last_modified"] > 0
    assert not logging.getLogger("omconnect_test_admin.child").isEnabledFor(logging.WARNING)
    listed = client.get("/admin/loggers").json()
    assert listed["omconnect_test_admin"]["level"] == "ERROR"
    assert "root" in listed

    assert client.put("/admin/loggers/omconnect_test_admin.child",
                      json={"level": "TRACE"}).json() == ["omconnect_test_admin.child"]
    assert logging.getLogger("omconnect_test_admin.child").isEnabledFor(logging.DEBUG)
    assert client.get("/admin/loggers/omconnect_test_admin.child").json()["level"] == "DEBUG"


def test_kafka_connect_level_names_map_onto_python_levels(client: httpx.Client) -> None:
    logging.getLogger("omconnect_test_admin")
    for given, python, shown in (("WARN", logging.WARNING, "WARN"),
                                 ("FATAL", logging.CRITICAL, "FATAL"),
                                 ("info", logging.INFO, "INFO")):
        assert client.put("/admin/loggers/omconnect_test_admin",
                          json={"level": given}).status_code == 200
        assert logging.getLogger("omconnect_test_admin").level == python
        assert client.get("/admin/loggers/omconnect_test_admin").json()["level"] == shown


def test_bad_requests_name_what_is_wrong(client: httpx.Client) -> None:
    bad = client.put("/admin/loggers/omconnect_test_admin", json={"level": "LOUD"})
    assert bad.status_code == 400 and "LOUD" in bad.json()["message"]
    scope = client.put("/admin/loggers/omconnect_test_admin?scope=galaxy",
                       json={"level": "INFO"})
    assert scope.status_code == 400 and "scope" in scope.json()["message"]
    missing = client.get("/admin/loggers/no.such.logger.anywhere")
    assert missing.status_code == 404 and "no.such.logger.anywhere" in missing.json()["message"]
