r"""A parser for Java ``.properties`` files, as ``java.util.Properties.load`` reads them.

The whole syntax is supported, so files written for Kafka Connect load unchanged:

* A key is separated from its value by ``=``, ``:`` or whitespace; whitespace around
  the separator is ignored, and so is leading whitespace on every line.
* Lines whose first non-blank character is ``#`` or ``!`` are comments; blank lines are
  ignored. A comment cannot be continued onto the next line.
* A line ending in an odd number of backslashes continues on the next line (whose
  leading whitespace is dropped).
* Escapes: ``\t``, ``\n``, ``\r``, ``\f``, ``\uXXXX``; a backslash before any other
  character stands for that character (``\=``, ``\:``, ``\ ``, ``\#``, ``\\``).
* Lines end with ``\n``, ``\r`` or ``\r\n``. A key given twice keeps its last value.

Two deliberate differences from Java, both stricter: the text must be UTF-8 (Java's
``load(InputStream)`` reads ISO-8859-1; write other characters as ``\uXXXX`` to be
portable), and an empty key is an error rather than a setting named ``""``.
"""

from __future__ import annotations

import logging
import re

from omconnect.errors import ConfigError

__all__ = ["parse_properties"]

_log = logging.getLogger(__name__)

_WHITESPACE = " \t\f"
_SEPARATORS = "=:"
_LINE_BREAK = re.compile(r"\r\n|\r|\n")  # not str.splitlines: a form feed is whitespace here
_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}


def _logical_lines(text: str) -> list[tuple[int, str]]:
    """(first line number, logical line) for every line that is not blank or a comment."""
    natural = _LINE_BREAK.split(text)
    result: list[tuple[int, str]] = []
    i = 0
    while i < len(natural):
        start = i
        line = natural[i].lstrip(_WHITESPACE)
        i += 1
        if not line or line[0] in "#!":
            continue
        parts: list[str] = []
        while _ends_with_continuation(line):
            parts.append(line[:-1])
            if i >= len(natural):
                line = ""
                break
            line = natural[i].lstrip(_WHITESPACE)
            i += 1
        parts.append(line)
        result.append((start + 1, "".join(parts)))
    return result


def _ends_with_continuation(line: str) -> bool:
    backslashes = len(line) - len(line.rstrip("\\"))
    return backslashes % 2 == 1


def _split_key(line: str) -> tuple[str, str]:
    """The raw (still escaped) key and value of a logical line."""
    i = 0
    while i < len(line):
        char = line[i]
        if char == "\\":
            i += 2
            continue
        if char in _SEPARATORS or char in _WHITESPACE:
            break
        i += 1
    key, rest = line[:i], line[i:]
    rest = rest.lstrip(_WHITESPACE)
    if rest and rest[0] in _SEPARATORS:
        rest = rest[1:].lstrip(_WHITESPACE)
    return key, rest


def _unescape(raw: str, *, source: str, line: int) -> str:
    if "\\" not in raw:
        return raw
    out: list[str] = []
    i = 0
    while i < len(raw):
        char = raw[i]
        if char != "\\":
            out.append(char)
            i += 1
            continue
        if i + 1 >= len(raw):  # a lone trailing backslash (end of file) is dropped
            break
        escaped = raw[i + 1]
        if escaped == "u":
            digits = raw[i + 2 : i + 6]
            if len(digits) != 4 or any(c not in "0123456789abcdefABCDEF" for c in digits):
                raise ConfigError(
                    f"{source}, line {line}: malformed \\uXXXX escape {raw[i : i + 6]!r}; "
                    "write exactly four hex digits after \\u (or \\\\u for a literal "
                    "backslash-u)"
                )
            out.append(chr(int(digits, 16)))
            i += 6
            continue
        out.append(_ESCAPES.get(escaped, escaped))
        i += 2
    return _join_surrogates("".join(out))


def _join_surrogates(text: str) -> str:
    # Java writes characters outside the BMP as two \uXXXX escapes (a surrogate pair).
    if not any("\ud800" <= c <= "\udfff" for c in text):
        return text
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "surrogatepass")


def parse_properties(
    text: str, *, source: str = "<string>", lines: dict[str, int] | None = None
) -> dict[str, str]:
    r"""The settings of a ``.properties`` document, in file order.

    Args:
        text: The document.
        source: Where it came from (a file name), for error messages.
        lines: If given, filled with the line number where each key is (last) set.

    Returns:
        Every key and its value, both unescaped; values are strings.

    Raises:
        ConfigError: A malformed ``\uXXXX`` escape or an empty key, naming the source and
            the line.

    """
    settings: dict[str, str] = {}
    where: dict[str, int] = {}
    for number, logical in _logical_lines(text):
        raw_key, raw_value = _split_key(logical)
        key = _unescape(raw_key, source=source, line=number)
        if not key:
            raise ConfigError(
                f"{source}, line {number}: a setting has no key ({logical!r}); write "
                "key=value"
            )
        value = _unescape(raw_value, source=source, line=number)
        if key in where:
            _log.warning("%s: key %r on line %d overrides line %d", source, key, number,
                         where[key])
        settings[key] = value
        where[key] = number
    if lines is not None:
        lines.update(where)
    return settings
