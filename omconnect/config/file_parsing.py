"""Reading config files: Java ``.properties``, YAML and JSON, parsed into one flat dict
of dotted keys, with ``${...}`` references kept as written (resolving them is
:mod:`omconnect.config.files`' job, through :mod:`omconnect.config.providers`, which
reads referenced files with this module).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import yaml

from omconnect.config.properties import parse_properties
from omconnect.errors import ConfigError

__all__ = ["FORMATS", "config_format", "flatten", "parse_config", "read_config_file"]

FORMATS: dict[str, str] = {
    ".properties": "properties",
    ".yaml": "yaml",
    ".yml": "yaml",
    ".json": "json",
}
"""File extension -> format name, for :func:`config_format`."""


def config_format(path: str | os.PathLike[str]) -> str:
    """The format of the config file at ``path``, by its extension.

    Raises:
        ConfigError: The extension is not one of :data:`FORMATS`.

    """
    suffix = Path(path).suffix.lower()
    try:
        return FORMATS[suffix]
    except KeyError:
        known = ", ".join(sorted(FORMATS))
        raise ConfigError(
            f"{path}: cannot tell the config format from the extension {suffix or '(none)'!r};"
            f" name the file with one of: {known}"
        ) from None


def read_config_file(path: str | os.PathLike[str], *, format: str | None = None,
                     lines: dict[str, int] | None = None) -> dict[str, Any]:
    """The settings in the config file at ``path``, flat, references kept as written.

    Args:
        path: A ``.properties``, ``.yaml``/``.yml`` or ``.json`` file.
        format: The format, for a file whose extension does not say (default: by
            extension, see :func:`config_format`).
        lines: Filled with the line each key was read from, where the parser knows it.

    Raises:
        ConfigError: The file cannot be read or parsed (naming the file and the line).

    """
    file = Path(path)
    format_ = format or config_format(file)  # an unknown extension before a missing file
    return parse_config(_read_text(file), format=format_, source=str(file), lines=lines)


def _read_text(file: Path) -> str:
    try:
        data = file.read_bytes()
    except FileNotFoundError:
        raise ConfigError(f"{file}: config file not found (looked in {file.resolve()})") from None
    except OSError as exc:
        raise ConfigError(f"{file}: cannot read config file: {exc.strerror or exc}") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ConfigError(
            f"{file}, line {line}: not valid UTF-8 (byte {data[exc.start]:#04x}); save the file "
            "as UTF-8 (in a .properties file, \\uXXXX escapes also work)"
        ) from None


def parse_config(
    text: str,
    *,
    format: str,
    source: str = "<string>",
    lines: dict[str, int] | None = None,
) -> dict[str, Any]:
    """The flat settings of a config document (no references resolved).

    Args:
        text: The document.
        format: ``"properties"``, ``"yaml"`` or ``"json"``.
        source: Where it came from, for error messages.
        lines: If given, filled with the line of each key (properties and YAML).

    Raises:
        ConfigError: The document does not parse, its top level is not a mapping, or a key
            is given twice; naming ``source`` and the line.

    """
    if format == "properties":
        return parse_properties(text, source=source, lines=lines)
    if format == "yaml":
        document = _parse_yaml(text, source)
    elif format == "json":
        document = _parse_json(text, source)
    else:
        raise ConfigError(f"unknown config format {format!r}; expected properties, yaml or json")
    if document is None:
        return {}
    if not isinstance(document, Mapping):
        raise ConfigError(
            f"{source}: the top level must be a mapping of settings (key: value), "
            f"not a {_kind(document)}"
        )
    return flatten(document, source=source, lines=lines)


def flatten(
    mapping: Mapping[Any, Any],
    *,
    source: str = "<string>",
    lines: dict[str, int] | None = None,
) -> dict[str, Any]:
    """``mapping`` with nested mappings flattened into dotted keys; lists stay lists.

    ``{"key": {"converter": "json"}}`` becomes ``{"key.converter": "json"}``. An empty
    nested mapping sets nothing.

    Args:
        mapping: Settings, possibly nested.
        source: Where they came from, for error messages.
        lines: If given, filled with the line of each flat key (when the mapping came from
            YAML, which records them).

    Raises:
        ConfigError: A key is not a string or number (e.g. YAML read ``on:`` as a
            boolean), or two spellings give the same flat key (``a: {b: 1}`` and ``a.b``).

    """
    flat: dict[str, Any] = {}
    where: dict[str, int] = {}
    for key, value, line in _walk(mapping, "", source):
        if key in flat:
            at = f", line {line}" if line else ""
            raise ConfigError(
                f"{source}{at}: key {key!r} is set twice (once nested, once dotted); keep one",
                key=key,
            )
        flat[key] = value
        if line:
            where[key] = line
    if lines is not None:
        lines.update(where)
    return flat


def _walk(mapping: Mapping[Any, Any], prefix: str, source: str) -> Iterator[tuple[str, Any, int]]:
    key_lines: Mapping[Any, int] = getattr(mapping, "lines", {})
    for key, value in mapping.items():
        line = key_lines.get(key, 0)
        if isinstance(key, bool) or key is None or not isinstance(key, (str, int, float)):
            at = f", line {line}" if line else ""
            raise ConfigError(
                f"{source}{at}: key {key!r} under {prefix.rstrip('.') or 'the top level'!r} is "
                f"a {_kind(key)}, not a name; quote it (YAML reads on/off/yes/no/null as "
                "booleans and nulls)"
            )
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            yield from _walk(value, name + ".", source)
        else:
            yield name, _plain(value), line


def _plain(value: Any) -> Any:
    """``value`` with the parser's mapping subclasses replaced by plain dicts."""
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _kind(value: Any) -> str:
    if isinstance(value, list):
        return "list"
    if value is None:
        return "null"
    return type(value).__name__


# -- YAML -----------------------------------------------------------------------------


class _LinedMapping(dict[Any, Any]):
    """A YAML mapping that remembers the line of each key."""

    lines: dict[Any, int]


class _Loader(yaml.SafeLoader):
    """PyYAML's safe loader, plus duplicate-key errors and key line numbers."""

    source = "<string>"


def _construct_mapping(loader: _Loader, node: yaml.MappingNode) -> Iterator[_LinedMapping]:
    data = _LinedMapping()
    data.lines = {}
    yield data
    seen: dict[Any, int] = {}
    for key_node, _ in node.value:
        if key_node.tag == "tag:yaml.org,2002:merge":
            continue
        key = loader.construct_object(key_node, deep=True)
        line = key_node.start_mark.line + 1
        try:
            first = seen.get(key)
        except TypeError:  # an unhashable key; PyYAML explains it below
            continue
        if first is not None:
            raise ConfigError(
                f"{loader.source}, line {line}: key {key!r} is set twice (first on line "
                f"{first}); keep one"
            )
        seen[key] = line
    data.update(loader.construct_mapping(node, deep=True))
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=True)
        data.lines.setdefault(key, key_node.start_mark.line + 1)


_Loader.add_constructor("tag:yaml.org,2002:map", _construct_mapping)


def _parse_yaml(text: str, source: str) -> Any:
    loader = _Loader(text)
    loader.source = source
    try:
        return loader.get_single_data()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        at = f", line {mark.line + 1}" if mark is not None else ""
        problem = " ".join(p for p in (exc.context, exc.problem) if p)
        raise ConfigError(f"{source}{at}: invalid YAML: {problem}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{source}: invalid YAML: {exc}") from None
    finally:
        loader.dispose()


# -- JSON -----------------------------------------------------------------------------


def _parse_json(text: str, source: str) -> Any:
    def no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        result: dict[str, Any] = {}
        for key, value in pairs:
            if key in result:
                raise ConfigError(f"{source}: key {key!r} is set twice in one object; keep one")
            result[key] = value
        return result

    try:
        return json.loads(text, object_pairs_hook=no_duplicates)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"{source}, line {exc.lineno}, column {exc.colno}: invalid JSON: {exc.msg}"
        ) from None
