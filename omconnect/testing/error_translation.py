"""Checking a transport's error translation: :func:`check_error_translation`.

No exception of a native client may escape a transport (``specs/transport.md``,
TRANSPORT-51 and the Errors section): each becomes an :class:`~omconnect.errors.
ConnectError` of the right kind, chained to the client's exception, with a message that
says what the transport was doing. A transport author lists the client's exceptions they
know (real instances of the library's classes, no broker needed) with the error each must
become, and the helper checks every case, plus the rules every translation follows::

    from omconnect.testing import TranslationCase, check_error_translation

    check_error_translation(lambda exc: translate(exc, "sending to 'orders'"), [
        TranslationCase(client.TimeoutError("no answer"), TransportTimeoutError),
        TranslationCase(client.AuthError("bad password"), TransportError,
                        mentions=("bad password",)),
    ], action="sending to 'orders'")
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import attrs

from omconnect.errors import ConnectError, MessageTooLargeError, RetriableError, TransportError

__all__ = ["TranslationCase", "check_error_translation"]


@attrs.frozen
class TranslationCase:
    """A client exception and what the transport must turn it into.

    Attributes:
        error: An instance of the client library's exception.
        expected: The omconnect error class it must become (exactly, unless
            ``subclasses``), e.g. ``RetriableTransportError`` for a lost connection.
        mentions: Texts the message must contain (the broker's own words, a setting).
        subclasses: Accept a subclass of ``expected`` too.

    """

    error: BaseException
    expected: type[ConnectError]
    mentions: tuple[str, ...] = ()
    subclasses: bool = False


def check_error_translation(
    translate: Callable[[BaseException], BaseException],
    cases: Iterable[TranslationCase],
    *,
    action: str | None = None,
) -> None:
    """Check ``translate`` (the transport's translation, bound to one action) on every
    case, and on the rules every translation follows: an exception it does not know
    becomes a fatal :class:`~omconnect.errors.TransportError` chained to it, and an
    omconnect error passes unchanged.

    Args:
        translate: Turns a client exception into the error the transport raises.
        cases: The exceptions to check.
        action: Text every message must contain (what the transport was doing), if any;
            a :class:`~omconnect.errors.MessageTooLargeError` names size and limit instead.

    Raises:
        AssertionError: Listing every case that failed, and why.

    """
    problems: list[str] = []

    def check(case: TranslationCase) -> None:
        name = f"{type(case.error).__module__}.{type(case.error).__qualname__}"
        try:
            result = translate(case.error)
        except Exception as exc:  # translation itself must not fail
            problems.append(f"{name}: translate raised {type(exc).__name__}: {exc}")
            return
        wanted = case.expected
        if not (isinstance(result, wanted) if case.subclasses else type(result) is wanted):
            problems.append(f"{name}: became {type(result).__name__}, expected "
                            f"{wanted.__name__}{' or a subclass' if case.subclasses else ''}")
            return
        if result is not case.error and result.__cause__ is not case.error:
            problems.append(f"{name}: the {type(result).__name__} is not chained to it "
                            "(__cause__ should be the client's exception)")
        message = str(result)
        # A MessageTooLargeError's message is its own (size and limit), whatever the action.
        says_action = action and not isinstance(result, MessageTooLargeError)
        for text in (*case.mentions, *((action,) if says_action else ())):
            if text not in message:
                problems.append(f"{name}: the message {message!r} does not mention {text!r}")

    for case in cases:
        check(case)
    surprise = RuntimeError("an exception the translation does not know")
    check(TranslationCase(surprise, TransportError, subclasses=True))
    if not problems:
        unknown = translate(surprise)
        if isinstance(unknown, RetriableError):
            problems.append("an unknown exception became retriable; only errors known to "
                            "pass (lost connections, timeouts, busy stores) may be retried")
    already = TransportError("already translated")
    if translate(already) is not already:
        problems.append("an omconnect error was translated again; pass it unchanged")
    if problems:
        raise AssertionError("error translation problems:\n  " + "\n  ".join(problems))
