"""Which config keys and record fields are secret by their name, and how a secret is
shown: the lowest layer of the secrecy rule of :mod:`omconnect.config.secrets`, which
:class:`~omconnect.config.definition.ConfigDef` uses to mask values.
"""

from __future__ import annotations

from omconnect.config.types import Password

__all__ = ["MASK", "SECRET_NAME_PARTS", "looks_secret"]

MASK = Password.MASK
"""What a secret is shown as."""

SECRET_NAME_PARTS = ("password", "passwd", "secret", "token", "credential", "sasl.jaas",
                     "apikey", "api.key", "api_key", "private.key")
"""A key (or record field) whose lower-cased name contains one of these is secret."""


def looks_secret(name: str) -> bool:
    """Whether a config key or record field named ``name`` holds a secret, by its name."""
    lowered = name.lower()
    return any(part in lowered for part in SECRET_NAME_PARTS)
