"""Optional authentication of REST API requests: a bearer token, HTTP basic auth, or both.

Configured in the worker config (``rest.auth.token``, ``rest.auth.basic.user``,
``rest.auth.basic.password``) or given to :func:`~omconnect.rest.start_server`. When
either is set, every request (including ``/metrics`` and the OpenAPI document) must
carry ``Authorization: Bearer <token>`` or ``Authorization: Basic <base64 user:password>``;
otherwise the answer is 401 with a ``WWW-Authenticate`` challenge. Credentials are
compared in constant time.
"""

from __future__ import annotations

import base64
import binascii
import hmac
from collections.abc import Mapping
from typing import Any

import attrs
from starlette.types import ASGIApp, Receive, Scope, Send

from omconnect.config.types import Password
from omconnect.errors import ConfigError
from omconnect.rest.errors import error_response
from omconnect.runtime.worker_config import WORKER_CONFIG_DEF

__all__ = ["OPEN_PATHS", "AuthMiddleware", "RestAuth"]

_KEYS = ("rest.auth.token", "rest.auth.basic.user", "rest.auth.basic.password")


def _password(value: Any) -> Password | None:
    """``value`` as a :class:`Password`; ``None`` for nothing or an empty string."""
    if value is None:
        return None
    text = value.value() if isinstance(value, Password) else str(value)
    return Password(text) if text else None


def _user(value: Any) -> str | None:
    return str(value) if value else None


@attrs.frozen(kw_only=True)
class RestAuth:
    """Who may call the API. With nothing set, anyone who can reach the port may.

    Attributes:
        token: The bearer token, or ``None``.
        basic_user: The basic-auth user, or ``None``.
        basic_password: The basic-auth password, or ``None``.

    Raises:
        ConfigError: Only one of the basic-auth user and password is set.

    """

    token: Password | None = attrs.field(default=None, converter=_password)
    basic_user: str | None = attrs.field(default=None, converter=_user)
    basic_password: Password | None = attrs.field(default=None, converter=_password)

    def __attrs_post_init__(self) -> None:
        if (self.basic_user is None) != (self.basic_password is None):
            missing = "rest.auth.basic.password" if self.basic_password is None \
                else "rest.auth.basic.user"
            raise ConfigError(f"basic auth needs both rest.auth.basic.user and "
                              f"rest.auth.basic.password; set {missing}", key=missing)

    @classmethod
    def from_worker_config(cls, values: Mapping[str, Any]) -> RestAuth:
        """The ``rest.auth.*`` settings of a worker config.

        Raises:
            ConfigError: A ``rest.auth.*`` key is misspelt (a typo must not leave the API
                open), or basic auth is half configured.

        """
        for key in values:
            if str(key).startswith("rest.auth.") and key not in _KEYS:
                close = WORKER_CONFIG_DEF.suggest(str(key))
                hint = f"did you mean {close}?" if close else f"known: {', '.join(_KEYS)}"
                raise ConfigError(f"{key} is not a REST API setting; {hint}", key=str(key))
        return cls(token=values.get("rest.auth.token"),
                   basic_user=values.get("rest.auth.basic.user"),
                   basic_password=values.get("rest.auth.basic.password"))

    @property
    def enabled(self) -> bool:
        """Whether requests must authenticate."""
        return self.token is not None or self.basic_user is not None

    @property
    def schemes(self) -> list[str]:
        """The accepted schemes, ``"Bearer"`` and/or ``"Basic"``."""
        return [name for name, on in (("Bearer", self.token is not None),
                                      ("Basic", self.basic_user is not None)) if on]

    def authorization(self) -> str | None:
        """An ``Authorization`` header value with these credentials (the token first),
        for calling another worker that shares them; ``None`` when none are set.
        """
        if self.token is not None:
            return f"Bearer {self.token.value()}"
        if self.basic_user is not None and self.basic_password is not None:
            pair = f"{self.basic_user}:{self.basic_password.value()}".encode()
            return f"Basic {base64.b64encode(pair).decode()}"
        return None

    def allows(self, authorization: str | None) -> bool:
        """Whether an ``Authorization`` header value carries valid credentials."""
        if not self.enabled:
            return True
        if not authorization:
            return False
        scheme, _, credentials = authorization.strip().partition(" ")
        credentials = credentials.strip()
        if scheme.lower() == "bearer" and self.token is not None:
            return _same(credentials, self.token.value())
        if scheme.lower() == "basic" and self.basic_user is not None:
            assert self.basic_password is not None
            try:
                decoded = base64.b64decode(credentials, validate=True).decode("utf-8")
            except (binascii.Error, UnicodeDecodeError):
                return False
            user, separator, password = decoded.partition(":")
            return bool(separator) & _same(user, self.basic_user) & _same(
                password, self.basic_password.value())
        return False


def _same(given: str, expected: str) -> bool:
    return hmac.compare_digest(given.encode("utf-8", "surrogateescape"),
                               expected.encode("utf-8", "surrogateescape"))


OPEN_PATHS = frozenset({"/ui"})
"""Served without credentials: the dashboard page holds no data; what it reads and does
goes through the API, which asks for them."""


class AuthMiddleware:
    """ASGI middleware answering 401 to HTTP requests without valid credentials.

    Args:
        app: The application behind it.
        auth: Who may call it.

    """

    def __init__(self, app: ASGIApp, auth: RestAuth) -> None:
        self.app = app
        self.auth = auth
        self.challenge = ", ".join(
            f'{scheme} realm="omconnect"' for scheme in auth.schemes)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass an authenticated request on; answer 401 to any other."""
        if scope["type"] != "http" or not self.auth.enabled or (
                scope.get("path") in OPEN_PATHS and scope.get("method") == "GET"):
            await self.app(scope, receive, send)
            return
        header = next((value.decode("latin-1") for name, value in scope.get("headers", ())
                       if name == b"authorization"), None)
        if self.auth.allows(header):
            await self.app(scope, receive, send)
            return
        what = "invalid credentials" if header else "authentication required"
        response = error_response(
            401, f"{what}: send Authorization: "
            + " or ".join(f"{s} <{'token' if s == 'Bearer' else 'user:password in base64'}>"
                          for s in self.auth.schemes),
            headers={"WWW-Authenticate": self.challenge})
        await response(scope, receive, send)
