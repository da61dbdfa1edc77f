"""ConfigDef: declare a component's settings once; parse, validate and document them."""

from __future__ import annotations

import difflib
import logging
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import attrs

from omconnect.config.secret_names import looks_secret
from omconnect.config.types import ConfigType, Importance, Password
from omconnect.config.validators import Validator
from omconnect.errors import ConfigError, DataError

__all__ = ["NO_DEFAULT", "ConfigDef", "ConfigKey"]

_log = logging.getLogger("omconnect.config")


class _NoDefault:
    def __repr__(self) -> str:
        return "NO_DEFAULT"


NO_DEFAULT: Any = _NoDefault()
"""Marks a setting that has no default: it must be given."""


@attrs.frozen(kw_only=True)
class ConfigKey:
    """One declared setting.

    Attributes:
        name: The key, e.g. ``"file"`` or ``"offset.flush.interval.ms"``.
        type: Its :class:`ConfigType`.
        default: The default, or :data:`NO_DEFAULT` when the key is required.
        importance: How much users should care.
        documentation: What it does, in a sentence or two.
        validators: Checks on the parsed value; each returns a message or ``None``.
        group: A heading for documentation.
        display_name: A human name.

    """

    name: str
    type: ConfigType
    default: Any = NO_DEFAULT
    importance: Importance = Importance.MEDIUM
    documentation: str = ""
    validators: tuple[Validator, ...] = ()
    group: str | None = None
    display_name: str | None = None

    @property
    def required(self) -> bool:
        """Whether the key has no default and so must be given."""
        return self.default is NO_DEFAULT


class ConfigDef:
    """The declared settings of a connector, transport, converter or transform.

    Example::

        CONFIG = (ConfigDef()
            .define("file", ConfigType.STRING, documentation="The file to read.")
            .define("batch.size", ConfigType.INT, 2000, validators=[Range(min=1)],
                    documentation="Most lines per poll."))
        values = CONFIG.parse({"file": "/tmp/in.txt"})

    Keys not declared are passed through unparsed (connectors often take a prefix of
    native settings); :meth:`parse` can warn about likely typos with ``strict=True``.
    """

    def __init__(self, keys: Sequence[ConfigKey] = ()) -> None:
        self._keys: dict[str, ConfigKey] = {}
        for key in keys:
            self._add(key)

    def _add(self, key: ConfigKey) -> None:
        if key.name in self._keys:
            raise ValueError(f"config key {key.name!r} is defined twice")
        self._keys[key.name] = key

    def define(
        self,
        name: str,
        type: ConfigType,
        default: Any = NO_DEFAULT,
        *,
        importance: Importance = Importance.MEDIUM,
        documentation: str = "",
        validators: Sequence[Validator] = (),
        group: str | None = None,
        display_name: str | None = None,
    ) -> ConfigDef:
        """Declare a setting; returns self for chaining.

        Raises:
            ValueError: ``name`` is already defined, or the default does not parse or
                fails one of ``validators``.

        """
        if default is not NO_DEFAULT and default is not None:
            try:
                default = type.parse(default)
            except DataError as exc:
                raise ValueError(f"default of config key {name!r}: {exc}") from None
            for validator in validators:
                problem = validator(default)
                if problem:
                    raise ValueError(f"default of config key {name!r}: {problem}")
        self._add(ConfigKey(name=name, type=type, default=default, importance=importance,
                            documentation=documentation, validators=tuple(validators),
                            group=group, display_name=display_name))
        return self

    def merge(self, other: ConfigDef) -> ConfigDef:
        """A new ConfigDef with the keys of both (a key defined in both is an error)."""
        return ConfigDef([*self._keys.values(), *other._keys.values()])

    def __iter__(self) -> Iterator[ConfigKey]:
        return iter(self._keys.values())

    def __len__(self) -> int:
        return len(self._keys)

    def __contains__(self, name: object) -> bool:
        return name in self._keys

    def key(self, name: str) -> ConfigKey:
        """The declared key ``name``."""
        return self._keys[name]

    def names(self) -> list[str]:
        """Every declared key name, in declaration order."""
        return list(self._keys)

    def validate(self, config: Mapping[str, Any], *, prefix: str = "") -> dict[str, list[str]]:
        """Per-key error messages for ``config``; a key with no messages is valid.

        Every declared key appears in the result (with ``[]`` when fine).
        """
        errors: dict[str, list[str]] = {}
        for key in self._keys.values():
            shown = prefix + key.name
            problems: list[str] = []
            raw = config.get(key.name)
            if raw is None or (isinstance(raw, str) and not raw.strip() and key.required):
                if key.required:
                    doc = f" ({key.documentation.rstrip('.')})" if key.documentation else ""
                    problems.append(f"missing required setting; set {shown}{doc}")
                errors[shown] = problems
                continue
            try:
                value = key.type.parse(raw)
            except DataError as exc:
                problems.append(f"{exc}; fix the value of {shown}")
                errors[shown] = problems
                continue
            for validator in key.validators:
                problem = validator(value)
                if problem:
                    problems.append(f"{problem}; fix the value of {shown}")
            errors[shown] = problems
        return errors

    def parse(
        self,
        config: Mapping[str, Any],
        *,
        what: str = "configuration",
        prefix: str = "",
        strict: bool = False,
    ) -> dict[str, Any]:
        """``config`` with every declared key parsed to its type and defaults filled in.

        Undeclared keys are kept as given.

        Args:
            config: Raw settings, e.g. strings from a properties file.
            what: What is configured, for the error message.
            prefix: How the keys are written in the user's file (for messages), e.g.
                ``"embedded."`` for transport settings.
            strict: Log a warning (logger ``omconnect.config``) for each undeclared key
                that is close to a declared one, with a "did you mean".

        Raises:
            ConfigError: Listing every key that is missing or invalid, each with its fix.

        """
        errors = self.validate(config, prefix=prefix)
        if any(errors.values()):
            raise ConfigError.from_errors(errors, what=what)
        if strict:
            for name in config:
                close = None if name in self._keys else self.suggest(name)
                if close is not None:
                    _log.warning("%s: %s%s is not a known setting; did you mean %r?",
                                 what, prefix, name, prefix + close)
        result = dict(config)
        for key in self._keys.values():
            raw = config.get(key.name)
            if raw is None:
                result[key.name] = None if key.default is NO_DEFAULT else key.default
            else:
                result[key.name] = key.type.parse(raw)
        return result

    def suggest(self, name: str) -> str | None:
        """The declared key closest to ``name`` (for "did you mean"), if any is close."""
        close = difflib.get_close_matches(name, list(self._keys), n=1, cutoff=0.75)
        return close[0] if close else None

    @staticmethod
    def masked(config: Mapping[str, Any], definition: ConfigDef | None = None) -> dict[str, Any]:
        """A copy of ``config`` safe to print: secrets replaced by a mask.

        A value is secret when it is a :class:`Password`, its key is declared
        ``PASSWORD`` in ``definition``, or its key's name looks secret
        (:func:`~omconnect.config.secrets.looks_secret`: password, secret, token,
        credential, sasl.jaas, api key, private key), declared or not.
        """
        out: dict[str, Any] = {}
        for name, value in config.items():
            declared = definition._keys.get(name) if definition is not None else None
            secret = isinstance(value, Password) or (
                declared is not None and declared.type is ConfigType.PASSWORD
            ) or looks_secret(str(name))
            out[name] = Password.MASK if secret and value is not None else value
        return out

    def documentation_table(self) -> str:
        """A Markdown table of the keys (for docs)."""
        rows = ["| key | type | default | importance | description |",
                "|---|---|---|---|---|"]
        for key in self._keys.values():
            default = "(required)" if key.required else repr(key.default)
            rows.append(f"| `{key.name}` | {key.type.value} | {default} | "
                        f"{key.importance.value} | {key.documentation} |")
        return "\n".join(rows)
