"""nats-py's exceptions become omconnect errors (real exception objects of the library;
no server needed; marked ``nats`` to run where nats-py is installed).
"""

from __future__ import annotations

import pytest
from omconnect_nats.errors import ErrorContext, translate

from omconnect.errors import (
    IllegalStateError,
    MessageTooLargeError,
    RetriableTransportError,
    TransportError,
    TransportTimeoutError,
)
from omconnect.testing import TranslationCase, check_error_translation

pytestmark = pytest.mark.nats

nats_errors = pytest.importorskip("nats.errors")
js_errors = pytest.importorskip("nats.js.errors")
WHERE = ErrorContext("nats://127.0.0.1:4222", 10, 1_000_000)


def test_the_translation_passes_the_kits_check() -> None:
    check_error_translation(lambda exc: translate(exc, "sending to 'orders'", WHERE), [
        TranslationCase(nats_errors.TimeoutError(), TransportTimeoutError,
                        mentions=("nats.request.timeout.ms", "nats://127.0.0.1:4222")),
        TranslationCase(nats_errors.NoServersError(), RetriableTransportError),
        TranslationCase(nats_errors.UnexpectedEOF(), RetriableTransportError),
        TranslationCase(nats_errors.OutboundBufferLimitError(), RetriableTransportError),
        TranslationCase(nats_errors.NoRespondersError(), RetriableTransportError,
                        mentions=("JetStream",)),
        TranslationCase(ConnectionRefusedError("refused"), RetriableTransportError,
                        mentions=("refused",)),
        TranslationCase(nats_errors.AuthorizationError(), TransportError,
                        mentions=("nats.user", "nats.creds.file")),
        TranslationCase(nats_errors.ConnectionClosedError(), IllegalStateError),
        TranslationCase(nats_errors.MaxPayloadError(), MessageTooLargeError,
                        mentions=("max_payload",)),
        TranslationCase(js_errors.ServiceUnavailableError(code=503, description="down"),
                        RetriableTransportError, mentions=("down",)),
        TranslationCase(js_errors.BadRequestError(code=400, err_code=10054,
                                                  description="message size exceeds "
                                                              "maximum allowed"),
                        MessageTooLargeError, mentions=("maximum allowed",)),
        TranslationCase(js_errors.NotFoundError(code=404, err_code=10059,
                                                description="stream not found"),
                        TransportError, mentions=("stream not found",)),
    ], action="sending to 'orders'")
