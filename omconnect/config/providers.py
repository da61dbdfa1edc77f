"""Config indirection: ``${env:VAR}`` and ``${file:path:key}`` references in values.

A value may contain references that are replaced by the value they name, so secrets
stay out of config files, the worker's config store and the REST API (the same syntax
as Kafka Connect's config providers)::

    connection.password=${env:DB_PASSWORD}
    connection.user=${env:DB_USER:-reader}
    sasl.jaas.config=${file:/run/secrets/kafka.properties:jaas}
    connection.url=jdbc:postgresql://${env:DB_HOST}:5432/orders

``${env:VAR}``
    The environment variable ``VAR``. ``${env:VAR:-default}`` gives ``default`` when
    ``VAR`` is unset or empty (as in a POSIX shell).
``${file:path:key}``
    The value of ``key`` in the config file at ``path`` (a ``.properties`` file, or any
    file of another extension read as properties; ``.yaml``/``.yml``/``.json`` files are
    read as such, nested keys dotted). The key is what follows the *last* colon, so
    Windows paths work. A relative path is relative to the directory of the config file
    holding the reference (the working directory for configs not loaded from a file).

A reference is replaced inside a longer string too; a resolved value is not resolved
again. Write ``$${`` for a literal ``${`` (``$${env:HOME}`` stays ``${env:HOME}``). A
reference that cannot be resolved (unknown provider, unset variable, missing file or key)
is a :class:`~omconnect.errors.ConfigError` naming the config key and the reference; all of
them are reported at once.

The result is a :class:`ResolvedConfig`: a plain ``dict`` of the resolved values (what
connectors and native clients need) that also remembers each resolved key's reference.
Its ``repr`` and :meth:`ResolvedConfig.masked` show secret-looking keys masked and every
resolved key as its reference, never the resolved value.

The runtime keeps connector configs as written and resolves them each time it starts a
connector (so a rotated secret is picked up by a restart) and before validating one:
:func:`resolve_references` reports the problems per key instead of raising.
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from omconnect.config.definition import ConfigDef
from omconnect.config.file_parsing import FORMATS, read_config_file
from omconnect.config.types import Password
from omconnect.errors import ConfigError

__all__ = [
    "PROVIDERS",
    "ResolvedConfig",
    "anchor_file_references",
    "has_references",
    "references_in",
    "resolve_config",
    "resolve_references",
]

_REFERENCE = re.compile(r"(\$?)\$\{([A-Za-z][A-Za-z0-9_.-]*):([^}]*)\}")

PROVIDERS = ("env", "file")
"""The names of the built-in config providers."""


class ResolvedConfig(dict[str, Any]):
    """A config whose references were resolved; a ``dict`` of the resolved values.

    Attributes:
        references: The value as written (with its ``${...}`` references) of every key
            that had references.

    A copy made with ``dict(config)`` is a plain dict and no longer masks its ``repr``.
    """

    references: dict[str, Any]

    def __init__(
        self,
        values: Mapping[str, Any] | None = None,
        references: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(values or {})
        self.references = dict(references or {})

    def masked(self, definition: ConfigDef | None = None) -> dict[str, Any]:
        """A copy safe to print or return from an API.

        Secret-looking keys and ``PASSWORD`` keys of ``definition`` are masked (as by
        :meth:`ConfigDef.masked`); every other key resolved from a reference shows the
        reference instead of the value.
        """
        out = ConfigDef.masked(self, definition)
        for key, raw in self.references.items():
            if key in out and out[key] != Password.MASK:
                out[key] = raw
        return out

    def as_written(self) -> dict[str, Any]:
        """The config as written: each resolved key's references instead of its value.

        A value that came from an escaped ``$${...}`` gets its escape back, so resolving
        the result again gives this config.
        """
        out: dict[str, Any] = {}
        for key, value in self.items():
            if key in self.references:
                out[key] = self.references[key]
            else:
                out[key] = _escape(value)
        return out

    def __repr__(self) -> str:
        return repr(self.masked())

    def __reduce__(self) -> tuple[Any, ...]:
        return (ResolvedConfig, (dict(self), self.references))


def has_references(value: Any) -> bool:
    """Whether ``value`` (a string, or a list holding strings) contains a ``${...}``."""
    if isinstance(value, str):
        return any(not m.group(1) for m in _REFERENCE.finditer(value))
    if isinstance(value, list):
        return any(has_references(v) for v in value)
    return False


def references_in(value: Any) -> list[str]:
    """The ``${...}`` references in ``value`` (a string, or a list holding strings), as
    written, in order; escaped ones (``$${...}``) are not references.
    """
    if isinstance(value, str):
        return [m.group(0) for m in _REFERENCE.finditer(value) if not m.group(1)]
    if isinstance(value, list):
        return [r for v in value for r in references_in(v)]
    return []


def _escape(value: Any) -> Any:
    """``value`` with every reference escaped (``${`` as ``$${``)."""
    if isinstance(value, list):
        return [_escape(v) for v in value]
    if not isinstance(value, str) or "${" not in value:
        return value
    return _REFERENCE.sub(lambda m: m.group(0) if m.group(1) else "$" + m.group(0), value)


def anchor_file_references(config: Mapping[str, Any],
                           base_dir: str | os.PathLike[str]) -> dict[str, Any]:
    """``config`` with each relative ``${file:path:key}`` path made absolute from
    ``base_dir``, so the references resolve the same wherever they are resolved later
    (the CLI anchors a config file's references at the file's directory).
    """
    base = Path(base_dir)

    def anchor(value: Any) -> Any:
        if isinstance(value, list):
            return [anchor(v) for v in value]
        if not isinstance(value, str) or "${file:" not in value:
            return value

        def replace(match: re.Match[str]) -> str:
            if match.group(1) or match.group(2) != "file":
                return match.group(0)
            path_text, sep, key = match.group(3).rpartition(":")
            if not sep or not path_text:
                return match.group(0)
            path = Path(path_text).expanduser()
            if path.is_absolute():
                return match.group(0)
            return f"${{file:{base / path}:{key}}}"

        return _REFERENCE.sub(replace, value)

    return {key: anchor(value) for key, value in config.items()}


def _mentions(value: Any) -> bool:
    """Whether ``value`` holds a reference or an escaped one (``$${...}``)."""
    if isinstance(value, str):
        return "${" in value and _REFERENCE.search(value) is not None
    if isinstance(value, list):
        return any(_mentions(v) for v in value)
    return False


def resolve_config(
    config: Mapping[str, Any],
    *,
    source: str | None = None,
    base_dir: str | os.PathLike[str] | None = None,
    lines: Mapping[str, int] | None = None,
    environ: Mapping[str, str] | None = None,
) -> ResolvedConfig:
    """``config`` with every ``${env:...}`` / ``${file:...}`` reference replaced.

    Args:
        config: Flat settings; string values (and strings inside lists) are resolved.
        source: Where the config came from (a file name), for error messages.
        base_dir: The directory relative ``${file:...}`` paths start from (default: the
            working directory).
        lines: The line of each key in ``source``, for error messages.
        environ: The environment for ``${env:...}`` (default: ``os.environ``).

    Returns:
        The resolved config, remembering the references it replaced.

    Raises:
        ConfigError: Listing every reference that cannot be resolved, each with its key.

    """
    resolved, errors = resolve_references(config, base_dir=base_dir, lines=lines,
                                          environ=environ)
    if errors:
        raise ConfigError.from_errors(errors, what=f"references in {source or 'the config'}")
    return resolved


def resolve_references(
    config: Mapping[str, Any],
    *,
    base_dir: str | os.PathLike[str] | None = None,
    lines: Mapping[str, int] | None = None,
    environ: Mapping[str, str] | None = None,
) -> tuple[ResolvedConfig, dict[str, list[str]]]:
    """Resolve what can be resolved in ``config``; report the rest per key.

    Arguments as for :func:`resolve_config`.

    Returns:
        The resolved config (a key with an unresolvable reference keeps that reference
        as written) and, per such key, what cannot be resolved and why (each message
        names the reference).

    """
    resolver = _Resolver(
        environ=os.environ if environ is None else environ,
        base_dir=Path(base_dir) if base_dir is not None else Path.cwd(),
    )
    values: dict[str, Any] = {}
    references: dict[str, Any] = {}
    errors: dict[str, list[str]] = {}
    for key, value in config.items():
        if not _mentions(value):
            values[key] = value
            continue
        problems: list[str] = []
        values[key] = _substitute(value, resolver.resolve, problems)
        if has_references(value):
            references[key] = value
        if problems:
            line = (lines or {}).get(key)
            at = f" (line {line})" if line else ""
            errors[key] = [f"{problem}{at}" for problem in problems]
    return ResolvedConfig(values, references), errors


def _substitute(value: Any, resolve: Callable[[str, str], str], problems: list[str]) -> Any:
    if isinstance(value, list):
        return [_substitute(v, resolve, problems) for v in value]
    if not isinstance(value, str):
        return value

    def replace(match: re.Match[str]) -> str:
        reference = match.group(0)
        if match.group(1):  # $${...}: a literal ${...}
            return reference[1:]
        try:
            return resolve(match.group(2), match.group(3))
        except _Unresolvable as exc:
            problems.append(f"cannot resolve {reference}: {exc}")
            return reference

    return _REFERENCE.sub(replace, value)


class _Unresolvable(Exception):
    """A reference could not be resolved; the message says why and what to do."""


class _Resolver:
    def __init__(self, *, environ: Mapping[str, str], base_dir: Path) -> None:
        self._environ = environ
        self._base_dir = base_dir
        self._files: dict[Path, Mapping[str, Any]] = {}

    def resolve(self, provider: str, body: str) -> str:
        if provider == "env":
            return self._env(body)
        if provider == "file":
            return self._file(body)
        close = difflib.get_close_matches(provider, PROVIDERS, n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        raise _Unresolvable(
            f"unknown config provider {provider!r}; {hint}known providers: "
            f"{', '.join(PROVIDERS)} (write $${{ for a literal ${{)"
        )

    def _env(self, body: str) -> str:
        name, sep, default = body.partition(":-")
        if not name:
            raise _Unresolvable("no variable name; write ${env:VAR}")
        value = self._environ.get(name)
        if sep and not value:
            return default
        if value is None:
            raise _Unresolvable(
                f"environment variable {name} is not set; set it, or give a default with "
                f"${{env:{name}:-default}}"
            )
        return value

    def _file(self, body: str) -> str:
        path_text, sep, key = body.rpartition(":")
        if not sep or not path_text or not key:
            raise _Unresolvable("write ${file:path:key} (a file path, a colon, a key)")
        path = Path(path_text).expanduser()
        if not path.is_absolute():
            path = self._base_dir / path
        settings = self._load(path)
        if key not in settings:
            close = difflib.get_close_matches(key, list(settings), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise _Unresolvable(f"key {key!r} is not in {path}{hint}")
        value = settings[key]
        if isinstance(value, Password):
            return value.value()
        return value if isinstance(value, str) else _text(value)

    def _load(self, path: Path) -> Mapping[str, Any]:
        if path not in self._files:
            format_ = FORMATS.get(path.suffix.lower(), "properties")
            try:
                self._files[path] = read_config_file(path, format=format_)
            except ConfigError as exc:
                raise _Unresolvable(exc.message) from None
        return self._files[path]


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return ""
    if isinstance(value, list):
        return ",".join(_text(v) for v in value)
    return str(value)
