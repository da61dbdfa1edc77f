"""Config files: Java ``.properties``, YAML and JSON, loaded into one flat dict.

Every format yields the same shape, a flat ``dict`` of dotted keys::

    # orders.properties           # orders.yaml               // orders.json
    name=orders                   name: orders                {"name": "orders",
    key.converter=json            key:                         "key": {"converter": "json"},
    topics=a,b                      converter: json            "topics": ["a", "b"]}
                                  topics: [a, b]

all load as ``{"name": "orders", "key.converter": "json", "topics": ...}``: nested
mappings flatten to dotted keys, lists stay lists, and YAML/JSON scalars keep their types
(``ConfigDef.parse`` accepts the strings of a properties file and typed values alike).
The format is chosen by the file's extension. ``${env:VAR}`` and ``${file:path:key}``
references are resolved as the file is loaded (see :mod:`omconnect.config.providers`), or
kept as written by :func:`load_config_file_as_written` (what the CLI does with connector
configs: the runtime stores them so and resolves them when the connector starts).
Errors name the file and, where the parser knows it, the line.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from omconnect.config.file_parsing import (
    FORMATS,
    config_format,
    flatten,
    parse_config,
    read_config_file,
)
from omconnect.config.providers import anchor_file_references, resolve_config

__all__ = [
    "FORMATS",
    "config_format",
    "flatten",
    "load_config_file",
    "load_config_file_as_written",
    "parse_config",
]


def load_config_file(
    path: str | os.PathLike[str],
    *,
    format: str | None = None,
    resolve: bool = True,
    environ: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The settings in the config file at ``path``, flat, with references resolved.

    Args:
        path: A ``.properties``, ``.yaml``/``.yml`` or ``.json`` file.
        format: ``"properties"``, ``"yaml"`` or ``"json"``, for a file whose extension
            does not say (default: by extension, see :func:`config_format`).
        resolve: Resolve ``${env:...}`` and ``${file:...}`` references (relative
            ``${file:...}`` paths are relative to this file's directory). With ``False``
            the references are kept as written, e.g. to show a config without its secrets.
        environ: The environment for ``${env:...}`` (default: ``os.environ``).

    Returns:
        A flat dict of dotted keys (a :class:`~omconnect.config.providers.ResolvedConfig`
        when ``resolve`` is true: a dict whose ``repr`` masks secrets).

    Raises:
        ConfigError: The file cannot be read or parsed, or a reference cannot be resolved;
            the message names the file and, where known, the line.

    """
    file = Path(path)
    lines: dict[str, int] = {}
    settings = read_config_file(file, format=format, lines=lines)
    if not resolve:
        return settings
    return resolve_config(settings, source=str(file), base_dir=file.resolve().parent,
                          lines=lines, environ=environ)


def load_config_file_as_written(path: str | os.PathLike[str], *,
                                format: str | None = None) -> dict[str, Any]:
    """The settings in the config file at ``path``, flat, references kept as written.

    Unlike ``load_config_file(path, resolve=False)``, each relative ``${file:...}`` path
    is made absolute from the file's directory, so the references resolve later, from
    any working directory, as they would have when loading the file.

    Raises:
        ConfigError: The file cannot be read or parsed.

    """
    settings = load_config_file(path, format=format, resolve=False)
    return anchor_file_references(settings, Path(path).resolve().parent)
