"""The error tree: one root, builtin bases where they fit, context kept in str() and pickles."""

from __future__ import annotations

import pickle

import pytest

from omconnect import errors
from omconnect.errors import (
    ConfigError,
    ConnectError,
    DataError,
    IllegalStateError,
    MessageTooLargeError,
    MissingExtraError,
    PluginError,
    RetriableError,
    RetriableTransportError,
    SchemaProjectionError,
    SendError,
    TransportError,
    TransportTimeoutError,
    UnsupportedOperationError,
)

# (class, the builtin or omconnect bases a caller may catch it as)
TREE = [
    (ConfigError, (ConnectError, ValueError)),
    (PluginError, (ConnectError, LookupError)),
    (MissingExtraError, (PluginError, ImportError)),
    (DataError, (ConnectError, ValueError)),
    (SchemaProjectionError, (DataError, ValueError)),
    (IllegalStateError, (ConnectError, RuntimeError)),
    (RetriableError, (ConnectError,)),
    (TransportError, (ConnectError,)),
    (RetriableTransportError, (TransportError, RetriableError)),
    (TransportTimeoutError, (RetriableTransportError, TimeoutError)),
    (MessageTooLargeError, (TransportError, ValueError)),
    (UnsupportedOperationError, (TransportError, NotImplementedError)),
    (SendError, (TransportError,)),
]


@pytest.mark.parametrize(("cls", "bases"), TREE, ids=lambda v: getattr(v, "__name__", ""))
def test_each_error_is_catchable_as_its_bases(cls: type, bases: tuple[type, ...]) -> None:
    for base in bases:
        assert issubclass(cls, base), f"{cls.__name__} should be a {base.__name__}"
    assert issubclass(cls, ConnectError)


def test_every_exported_error_is_in_the_tree_and_the_module_docstring() -> None:
    exported = {getattr(errors, name) for name in errors.__all__}
    assert exported == {cls for cls, _ in TREE} | {ConnectError}
    for cls in exported:
        assert cls.__name__ in (errors.__doc__ or ""), f"{cls.__name__} missing from the tree"


def test_the_spark_adapters_errors_are_in_the_tree_and_drawn() -> None:
    from omconnect_spark.offsets import DataLossError
    from omconnect_spark.topic_selection import MissingTopicsError

    assert issubclass(MissingTopicsError, ConfigError)
    assert issubclass(MissingTopicsError, ValueError)
    assert issubclass(DataLossError, ConnectError)
    for cls in (MissingTopicsError, DataLossError):
        assert f"{cls.__name__} *" in (errors.__doc__ or ""), f"{cls.__name__} is not drawn"


def test_fatal_transport_errors_are_not_retriable() -> None:
    for cls in (TransportError, MessageTooLargeError, UnsupportedOperationError, SendError):
        assert not issubclass(cls, RetriableError), cls.__name__


def test_context_appears_in_str_in_a_fixed_order() -> None:
    error = TransportError(
        "broker closed the connection",
        offset=42, topic="orders", connector="pg-sink", partition=3, task=1, broker="b1",
    )
    assert str(error) == (
        "broker closed the connection [connector='pg-sink', task=1, topic='orders', "
        "partition=3, offset=42, broker='b1']"
    )
    assert error.context["partition"] == 3
    assert error.message == "broker closed the connection"


def test_context_that_is_none_is_left_out() -> None:
    error = DataError("bad value", topic=None, key="file")
    assert error.context == {"key": "file"}
    assert str(error) == "bad value [key='file']"


def test_an_error_without_context_is_just_its_message() -> None:
    assert str(ConnectError("plain")) == "plain"


def _roundtrip(error: BaseException) -> BaseException:
    return pickle.loads(pickle.dumps(error))  # type: ignore[no-any-return]


@pytest.mark.parametrize("cls", [cls for cls, _ in TREE if cls not in (
    MissingExtraError, MessageTooLargeError, SendError, ConfigError)] + [ConnectError])
def test_pickling_keeps_class_message_and_context(cls: type[ConnectError]) -> None:
    error = cls("it broke", topic="t", partition=2, offset=7, connector="c")
    copy = _roundtrip(error)
    assert type(copy) is cls
    assert str(copy) == str(error)
    assert copy.context == error.context  # type: ignore[attr-defined]


def test_pickling_a_config_error_keeps_its_per_key_errors() -> None:
    error = ConfigError.from_errors({"file": ["missing"], "batch.size": ["too small"]})
    copy = _roundtrip(error)
    assert isinstance(copy, ConfigError)
    assert copy.errors == {"file": ["missing"], "batch.size": ["too small"]}
    assert str(copy) == str(error)


def test_pickling_a_send_error_keeps_its_outcomes() -> None:
    error = SendError("1 of 2 not acknowledged", [5, TransportError("nack")], topic="t")
    copy = _roundtrip(error)
    assert isinstance(copy, SendError)
    assert copy.outcomes[0] == 5
    assert isinstance(copy.outcomes[1], TransportError)
    assert str(copy.outcomes[1]) == "nack"
    assert copy.context == {"topic": "t"}


def test_pickling_a_missing_extra_error_keeps_what_to_install() -> None:
    copy = _roundtrip(MissingExtraError("kafka transport", "kafka", "kafka"))
    assert isinstance(copy, MissingExtraError)
    assert (copy.plugin, copy.extra, copy.module) == ("kafka transport", "kafka", "kafka")
    assert "pip install 'omconnect[kafka]'" in str(copy)


def test_pickling_a_message_too_large_error_keeps_size_and_limit() -> None:
    copy = _roundtrip(MessageTooLargeError(2_000_000, 1_048_576, topic="big"))
    assert isinstance(copy, MessageTooLargeError)
    assert (copy.size, copy.limit) == (2_000_000, 1_048_576)
    assert "2000000 bytes exceeds the transport's limit of 1048576 bytes" in str(copy)
    assert copy.context == {"topic": "big"}


def test_config_error_from_errors_lists_every_key_and_ignores_valid_ones() -> None:
    error = ConfigError.from_errors(
        {"topic": ["missing required setting; set topic"], "file": [],
         "tasks.max": ["must be at least 1, got 0"]},
        what="connector 'local-file-source'",
    )
    text = str(error)
    assert text.startswith("invalid connector 'local-file-source' (2 errors):")
    assert "  topic: missing required setting; set topic" in text
    assert "  tasks.max: must be at least 1, got 0" in text
    assert "file" not in error.errors
    assert "key" not in error.context  # several keys: no single one to name


def test_config_error_from_errors_names_the_key_when_there_is_one() -> None:
    error = ConfigError.from_errors({"file": ["missing required setting; set file"]})
    assert error.context["key"] == "file"
    assert str(error).startswith("invalid configuration (1 error):")
    assert "[key='file']" in str(error)


def test_missing_extra_error_names_the_extra_and_the_module() -> None:
    error = MissingExtraError("pulsar transport", "pulsar", "pulsar")
    assert str(error) == (
        "pulsar transport needs the 'pulsar' package, which is not installed; "
        "install it with: pip install 'omconnect[pulsar]'"
    )
    assert isinstance(error, ImportError)


def test_errors_chain_the_driver_error() -> None:
    try:
        try:
            raise OSError("connection refused")
        except OSError as exc:
            raise RetriableTransportError("cannot reach broker", topic="t") from exc
    except RetriableError as caught:
        assert isinstance(caught.__cause__, OSError)
        assert "connection refused" in str(caught.__cause__)
