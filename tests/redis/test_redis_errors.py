"""redis-py's exceptions become omconnect errors (real exception objects of the library;
no server needed, marked ``redis`` to run where redis-py is installed).
"""

from __future__ import annotations

import pytest
from omconnect_redis.errors import ErrorContext, translate

from omconnect.errors import RetriableTransportError, TransportError, TransportTimeoutError
from omconnect.testing import TranslationCase, check_error_translation

pytestmark = pytest.mark.redis

exceptions = pytest.importorskip("redis.exceptions")
WHERE = ErrorContext("redis://127.0.0.1:6379/0", 10)


def test_the_translation_passes_the_kits_check() -> None:
    check_error_translation(lambda exc: translate(exc, "sending to 'orders'", WHERE), [
        TranslationCase(exceptions.TimeoutError("Timeout reading from socket"),
                        TransportTimeoutError,
                        mentions=("redis.operation.timeout.ms", "redis://127.0.0.1:6379/0")),
        TranslationCase(exceptions.ConnectionError("Error 111 connecting. Connection "
                                                   "refused."), RetriableTransportError,
                        mentions=("Connection refused",)),
        TranslationCase(exceptions.BusyLoadingError("Redis is loading the dataset in "
                                                    "memory"), RetriableTransportError),
        TranslationCase(exceptions.ReadOnlyError("You can't write against a read only "
                                                 "replica."), RetriableTransportError),
        TranslationCase(exceptions.OutOfMemoryError("command not allowed when used memory "
                                                    "> 'maxmemory'."),
                        RetriableTransportError, mentions=("maxmemory",)),
        TranslationCase(exceptions.AuthenticationError("invalid username-password pair"),
                        TransportError, mentions=("invalid username-password pair",
                                                  "redis.password")),
        TranslationCase(exceptions.NoPermissionError("this user has no permissions to run "
                                                     "the 'xadd' command"),
                        TransportError, mentions=("no permissions", "ACL")),
        TranslationCase(exceptions.ResponseError("WRONGTYPE Operation against a key holding "
                                                 "the wrong kind of value"),
                        TransportError, mentions=("WRONGTYPE", "redis.key.prefix")),
    ], action="sending to 'orders'")


def test_a_url_with_a_password_is_named_without_it() -> None:
    from omconnect_redis.client import public_url

    assert public_url("redis://app:s3cret@cache:6379/2") == "redis://app:***@cache:6379/2"
    assert public_url("redis://:s3cret@cache:6379") == "redis://:***@cache:6379"
    assert public_url("redis://cache:6379/0") == "redis://cache:6379/0"
