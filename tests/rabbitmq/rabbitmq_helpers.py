"""Settings shared by the RabbitMQ tests."""

FAST_GROUPS = {"heartbeat.interval.ms": 200, "session.timeout.ms": 2000}
"""Short group timeouts so take-over cases finish in seconds."""
