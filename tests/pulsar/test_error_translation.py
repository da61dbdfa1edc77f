"""pulsar-client's exceptions become omconnect errors (real exception objects of the
library; no broker needed, marked ``pulsar`` to run where pulsar-client is installed).
"""

from __future__ import annotations

import pytest
from omconnect_pulsar.errors import ErrorContext, translate

from omconnect.errors import RetriableTransportError, TransportError, TransportTimeoutError
from omconnect.testing import TranslationCase, check_error_translation

pytestmark = pytest.mark.pulsar

pulsar = pytest.importorskip("pulsar")
WHERE = ErrorContext("pulsar://127.0.0.1:6650", 30, 5 * 1024 * 1024)


def test_the_translation_passes_the_kits_check() -> None:
    check_error_translation(lambda exc: translate(exc, "sending to 'orders'", WHERE), [
        TranslationCase(pulsar.Timeout("timed out"), TransportTimeoutError,
                        mentions=("pulsar.operation.timeout.ms", "pulsar://127.0.0.1:6650")),
        TranslationCase(pulsar.ConnectError("refused"), RetriableTransportError,
                        mentions=("refused",)),
        TranslationCase(pulsar.AuthenticationError("bad token"), TransportError,
                        mentions=("bad token", "pulsar.auth")),
    ], action="sending to 'orders'")
