"""Which config values are secret, and keeping them out of responses, output and logs.

One rule, used by every place that shows a config or a message about one (REST
responses, ``omconnect validate``, validation errors, :class:`ResolvedConfig` in log
lines, logged records): a value is **secret** when

* it is a :class:`~omconnect.config.types.Password` (a parsed ``PASSWORD`` value), or
* its key is declared ``PASSWORD`` (by the connector, the common settings, the worker), or
* its key's name, lower-cased, contains one of :data:`SECRET_NAME_PARTS`: ``password``,
  ``passwd``, ``secret``, ``token``, ``credential``, ``sasl.jaas`` (so
  ``sasl.jaas.config``), ``apikey``, ``api.key``, ``api_key`` or ``private.key``.
  Undeclared keys (native client settings passed through, ``extra.password``) are
  covered by this.

A secret is shown as ``[hidden]``. A key that is merely named ``*.key`` is not secret
(``record.key``, ``print.key`` are ordinary settings); name such a key ``*.api.key`` or
declare it ``PASSWORD``.

Messages (validation errors, error responses) may quote what a connector was given, so
:func:`secret_values` lists the secret values of a config, resolved through its
``${env:...}``/``${file:...}`` references, and :func:`scrub` replaces them in a text.
A reference itself (``${env:DB_PASSWORD}``) is not a secret.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import Any

from omconnect.config.definition import ConfigDef
from omconnect.config.providers import ResolvedConfig, references_in, resolve_references
from omconnect.config.secret_names import MASK, SECRET_NAME_PARTS, looks_secret
from omconnect.config.types import Password

__all__ = ["MASK", "SECRET_NAME_PARTS", "looks_secret", "scrub", "secret_values"]

SHORTEST_SCRUBBED = 4
"""Shorter secret values are not scrubbed from messages (they would mangle every word)."""

def secret_values(
    config: Mapping[str, Any],
    definition: ConfigDef | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    base_dir: str | os.PathLike[str] | None = None,
) -> list[str]:
    """The secret values of ``config``, longest first, to :func:`scrub` from messages.

    For a secret key whose value holds references, the resolved value and the value of
    each of its references are listed (never a reference's text); a value with a reference
    that cannot be resolved is listed as far as it resolves, unless nothing else is left.
    Values shorter than :data:`SHORTEST_SCRUBBED` characters and the mask itself are left
    out.

    Args:
        config: A config, as written (with references) or resolved.
        definition: The declared keys (``PASSWORD`` keys are secret whatever their name).
        environ: The environment for ``${env:...}`` (default: ``os.environ``).
        base_dir: Where relative ``${file:...}`` paths start (default: the working
            directory).

    """
    shown = ConfigDef.masked(config, definition)
    references_of = config.references if isinstance(config, ResolvedConfig) else None
    found: set[str] = set()
    for key, value in config.items():
        if value is None or shown.get(key) != MASK:
            continue
        written = value if references_of is None else references_of.get(key, value)
        references = references_in(written)
        if references_of is not None or not references:
            found.update(_texts(value))
        for text in ([written] if references else []) + references:
            resolved, errors = resolve_references({key: text}, environ=environ,
                                                  base_dir=base_dir)
            # partly resolved, a value is still secret for its literal text
            found.update(t for t in _texts(resolved[key]) if not errors or _literal(t))
    return sorted((s for s in found if len(s) >= SHORTEST_SCRUBBED and s != MASK), key=len,
                  reverse=True)


def _literal(text: str) -> bool:
    """Whether ``text`` holds more than references (which are no secret)."""
    for reference in references_in(text):
        text = text.replace(reference, "")
    return bool(text.strip())


def _texts(value: Any) -> list[str]:
    if isinstance(value, Password):
        return [value.value()]
    if isinstance(value, list | tuple):
        return [t for v in value for t in _texts(v)]
    return [] if value is None else [str(value)]


def scrub(text: str, secrets: Iterable[str]) -> str:
    """``text`` with each of ``secrets`` (longest first, as :func:`secret_values` gives
    them) replaced by the mask.
    """
    for secret in secrets:
        text = text.replace(secret, MASK)
    return text
