"""Helpers shared by the tests in tests/kafka/ (a uniquely named module, so that test modules
import them by name without clashing with other directories' conftest modules)."""

from __future__ import annotations

from typing import Any

from omconnect_testbrokers.kafka import TEST_CLIENT_OPTIONS, free_port

DRIVERS = ("kafka-python", "confluent")


UNREACHABLE_TIMEOUT_MS = 2000


def kafka_options(url: str, driver: str, **overrides: Any) -> dict[str, Any]:
    """Transport options for the test broker at ``url`` with ``driver``."""
    return {"bootstrap.servers": url, "client.driver": driver, **TEST_CLIENT_OPTIONS,
            **overrides}


def unreachable_options(driver: str) -> dict[str, Any]:
    """Options pointing at a port nothing listens on, with 2-second timeouts."""
    return kafka_options(f"127.0.0.1:{free_port()}", driver, **{
        "connect.timeout.ms": UNREACHABLE_TIMEOUT_MS,
        "request.timeout.ms": UNREACHABLE_TIMEOUT_MS})
