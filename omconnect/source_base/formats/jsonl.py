"""JSON lines: one JSON value per line, as a schemaless value.

Each non-blank line is one record whose value is the parsed JSON (usually a dict) with no
schema; blank lines are not records. ``number`` is the line number. A line that is not
valid JSON (or not valid in the configured encoding) is an error item; reading goes on
with the next line. With ``record.key=field`` the key is the value's field (schemaless);
a line without it is an error item.
"""

from __future__ import annotations

import codecs
import io
import json
from collections.abc import Iterable, Iterator
from typing import IO, Any

from omconnect.data.struct import SchemaAndValue
from omconnect.errors import ConfigError
from omconnect.source_base.formats.base import (
    KeySource,
    ParsedRecord,
    RecordFormat,
    failed,
    record,
)
from omconnect.source_base.formats.undecodable import TEXT_ERRORS, undecodable

__all__ = ["JsonLinesFormat"]

_UTF8 = ("utf-8", "utf-8-sig")


class JsonLinesFormat(RecordFormat):
    """Reads JSON lines (``input.format=jsonl``).

    Args:
        encoding: The text encoding (``input.encoding``); a UTF-8 BOM is skipped.
        **options: ``key_source`` and ``key_field``, as for :class:`RecordFormat`.

    Raises:
        ConfigError: An unknown encoding.

    """

    name = "jsonl"

    def __init__(self, *, encoding: str = "utf-8", **options: Any) -> None:
        super().__init__(**options)
        try:
            codec = codecs.lookup(encoding).name
        except LookupError:
            raise ConfigError(f"unknown encoding {encoding!r}; set input.encoding to e.g. "
                              "utf-8 or latin-1", key="input.encoding") from None
        self.encoding = encoding
        self._utf8 = codec in _UTF8

    def _read(self, stream: IO[bytes], object_name: str, skip: int) -> Iterator[ParsedRecord]:
        if self._utf8:
            yield from self._lines(stream, object_name, skip, binary=True)
            return
        # Other encodings (UTF-16...) cannot be split into lines as bytes.
        text = io.TextIOWrapper(stream, encoding=self.encoding, newline=None,
                                errors=TEXT_ERRORS)
        try:
            yield from self._lines(text, object_name, skip, binary=False)
        finally:
            text.detach()  # the caller owns (and closes) the stream

    def _lines(self, lines: Iterable[Any], object_name: str, skip: int,
               binary: bool) -> Iterator[ParsedRecord]:
        decode = json.JSONDecoder().decode
        key = self.object_key(object_name)
        key_field = self.key_field if self.key_source is KeySource.FIELD else None
        for number, line in enumerate(lines, 1):
            if number == 1:
                line = _without_bom(line)
            if skip:
                if line.strip():
                    skip -= 1
                continue
            bad = None if binary else undecodable((line,))
            if bad is not None:
                yield failed(number, self.error(
                    f"line is not valid {self.encoding}: byte {bad} does not decode",
                    object_name, number, line=True))
                continue
            try:
                value = decode(line.decode() if binary else line)
            except json.JSONDecodeError as exc:
                if not line.strip():
                    continue
                yield failed(number, self.error(
                    f"invalid JSON at column {exc.colno}: {exc.msg}", object_name, number,
                    line=True))
                continue
            except UnicodeDecodeError as exc:
                yield failed(number, self.error(
                    f"line is not valid {self.encoding}: {exc}", object_name, number,
                    line=True))
                continue
            if key_field is not None:
                if not isinstance(value, dict) or key_field not in value:
                    yield failed(number, self.error(
                        f"no field {key_field!r} for the record key (record.key.field)",
                        object_name, number, line=True))
                    continue
                key = SchemaAndValue(None, value[key_field])
            yield record(number, key, SchemaAndValue(None, value))


def _without_bom(line: Any) -> Any:
    if isinstance(line, bytes):
        return line[3:] if line.startswith(codecs.BOM_UTF8) else line
    return line[1:] if line.startswith("\ufeff") else line
