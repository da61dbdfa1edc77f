r"""Java syntaxes that Kafka Connect configurations use, read the way Java reads them.

Kafka Connect's transforms take ``java.text.SimpleDateFormat`` patterns
(TimestampConverter's ``format``, TimestampRouter's ``timestamp.format``),
``java.util.regex`` patterns (RegexRouter, TopicNameMatches) and ``Matcher`` replacement
strings (``$1``, ``${name}``). Their configurations must work here unchanged, so:

* :class:`JavaDateFormat` formats and parses a SimpleDateFormat pattern, always in UTC
  (as Kafka Connect's transforms set the format's time zone to UTC). Supported letters:
  ``G y M L d D E u a H k K h m s S Z X z`` and quoted text (``'T'``, ``''``). Like Java,
  ``S`` is milliseconds (``SSS`` pads to three digits; ``SSSSSS`` pads milliseconds to six,
  it does not mean microseconds) and parsing reads a prefix of the text (trailing text is
  ignored). Two-digit years (``yy``) parse as Python's ``%y`` does: 69-99 → 19xx, 00-68 →
  20xx. Week-based letters (``w W F Y``) are not supported and are refused with the list.
* :func:`java_regex` compiles a Java regular expression with Python's ``re``, after
  rewriting Java's named groups ``(?<name>…)`` to ``(?P<name>…)`` and ``\Q…\E`` quoting.
* :func:`java_replacement` reads a Java replacement string (``$n``, ``${name}``, ``\$``)
  into a function of a match.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable

__all__ = ["JavaDateFormat", "java_regex", "java_replacement"]

_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December")
_DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_SUPPORTED = "GyMLdDEuaHkKhmsSZXz"
_NUMERIC = set("yMLdDuHkKhmsS")
# The length of the smallest unit a pattern letter shows, in milliseconds.
_MS_PER: dict[str, int] = {
    "S": 1, "s": 1_000, "m": 60_000,
    "H": 3_600_000, "k": 3_600_000, "K": 3_600_000, "h": 3_600_000, "a": 43_200_000,
}
_DAY_MS = 86_400_000

_Formatter = Callable[[dt.datetime], str]


def _tokenize(pattern: str) -> list[tuple[str, int | str]]:
    """(letter, run length) per pattern field and ("'", text) per literal text."""
    tokens: list[tuple[str, int | str]] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "'":
            if pattern.startswith("''", i):
                tokens.append(("'", "'"))
                i += 2
                continue
            j, text = i + 1, []
            while True:
                if j >= n:
                    raise ValueError(f"unterminated quote in date pattern {pattern!r}")
                if pattern[j] == "'":
                    if pattern.startswith("''", j):
                        text.append("'")
                        j += 2
                        continue
                    break
                text.append(pattern[j])
                j += 1
            tokens.append(("'", "".join(text)))
            i = j + 1
        elif c.isascii() and c.isalpha():
            j = i
            while j < n and pattern[j] == c:
                j += 1
            if c not in _SUPPORTED:
                raise ValueError(
                    f"date pattern {pattern!r} uses {c!r}, which is not supported; "
                    f"supported letters: {' '.join(_SUPPORTED)} (quote literal text: 'T')"
                )
            tokens.append((c, j - i))
            i = j
        else:
            tokens.append(("'", c))
            i += 1
    return tokens


def _number(width: int, get: Callable[[dt.datetime], int]) -> _Formatter:
    return lambda when: str(get(when)).zfill(width)


def _formatter(letter: str, count: int) -> _Formatter:
    if letter == "G":
        return lambda when: "AD"
    if letter == "y":
        if count == 2:
            return lambda when: f"{when.year % 100:02d}"
        return _number(count, lambda when: when.year)
    if letter in "ML":
        if count >= 4:
            return lambda when: _MONTHS[when.month - 1]
        if count == 3:
            return lambda when: _MONTHS[when.month - 1][:3]
        return _number(count, lambda when: when.month)
    if letter == "d":
        return _number(count, lambda when: when.day)
    if letter == "D":
        return _number(count, lambda when: when.timetuple().tm_yday)
    if letter == "E":
        if count >= 4:
            return lambda when: _DAYS[when.weekday()]
        return lambda when: _DAYS[when.weekday()][:3]
    if letter == "u":
        return _number(count, lambda when: when.isoweekday())
    if letter == "a":
        return lambda when: "AM" if when.hour < 12 else "PM"
    if letter == "H":
        return _number(count, lambda when: when.hour)
    if letter == "k":
        return _number(count, lambda when: when.hour or 24)
    if letter == "K":
        return _number(count, lambda when: when.hour % 12)
    if letter == "h":
        return _number(count, lambda when: when.hour % 12 or 12)
    if letter == "m":
        return _number(count, lambda when: when.minute)
    if letter == "s":
        return _number(count, lambda when: when.second)
    if letter == "S":
        return _number(count, lambda when: when.microsecond // 1000)
    if letter == "Z":
        return lambda when: "+0000"
    if letter == "X":
        return lambda when: "Z"
    return lambda when: "UTC"  # z


_NAMES = {name.lower(): i for i, name in enumerate(_MONTHS)}
_NAMES.update({name[:3].lower(): i for i, name in enumerate(_MONTHS)})


def _group(letter: str) -> str:
    return {"L": "M", "X": "Z", "z": "Z"}.get(letter, letter)


def _parse_regex(letter: str, count: int, abutting: bool, capture: bool) -> str:
    """The regex reading one pattern letter; ``capture`` names its group."""
    group = f"?P<{_group(letter)}>" if capture else "?:"
    if letter in "ML" and count >= 3:
        names = "|".join(_MONTHS) if count >= 4 else "|".join(m[:3] for m in _MONTHS)
        return f"({group}(?i:{names}))"
    if letter in _NUMERIC:
        fixed = abutting or (letter == "y" and count == 2)
        digits = f"\\d{{{count}}}" if fixed else "\\d+"
        return f"({group}{digits})"
    if letter == "E":
        names = "|".join(_DAYS) if count >= 4 else "|".join(d[:3] for d in _DAYS)
        return f"(?i:{names})"
    if letter == "G":
        return "(?i:AD|BC)"
    if letter == "a":
        return f"({group}(?i:AM|PM))"
    if letter == "Z":
        return f"({group}[+-]\\d{{4}}|Z)"
    if letter == "X":
        return f"({group}Z|[+-]\\d{{2}}(?::?\\d{{2}})?)"
    return f"({group}(?:GMT)?[+-]\\d{{1,2}}(?::?\\d{{2}})?|UTC|GMT|Z)"  # z


def _offset(text: str) -> dt.timedelta:
    text = text.removeprefix("GMT")
    if text in ("", "Z", "UTC"):
        return dt.timedelta(0)
    sign = -1 if text[0] == "-" else 1
    digits = text[1:].replace(":", "")
    hours = int(digits[:-2]) if len(digits) > 2 else int(digits)
    minutes = int(digits[-2:]) if len(digits) > 2 else 0
    return sign * dt.timedelta(hours=hours, minutes=minutes)


class JavaDateFormat:
    """A ``java.text.SimpleDateFormat`` pattern that formats and parses in UTC.

    Args:
        pattern: The Java pattern, e.g. ``yyyy-MM-dd'T'HH:mm:ss.SSSX``.

    Raises:
        ValueError: The pattern uses an unsupported letter or has an unterminated quote;
            the message names the letter and lists the supported ones.

    Attributes:
        pattern: The Java pattern as given.
        granularity_ms: The length in milliseconds of the smallest unit the pattern shows
            (a day for ``yyyyMMdd``); two instants in the same UTC-aligned unit format to
            the same text, which lets callers cache formatted results.

    """

    __slots__ = ("_formatters", "_regex", "_two_digit_year", "granularity_ms", "pattern")

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self._two_digit_year = False
        tokens = _tokenize(pattern)
        formatters: list[_Formatter | str] = []
        regex: list[str] = []
        seen: set[str] = set()
        granularity = _DAY_MS
        for i, (letter, arg) in enumerate(tokens):
            if letter == "'":
                text = str(arg)
                if formatters and isinstance(formatters[-1], str):
                    formatters[-1] += text
                else:
                    formatters.append(text)
                regex.append(re.escape(text))
                continue
            count = int(arg)
            formatters.append(_formatter(letter, count))
            granularity = min(granularity, _MS_PER.get(letter, _DAY_MS))
            following = tokens[i + 1] if i + 1 < len(tokens) else None
            abutting = following is not None and following[0] in _NUMERIC and not (
                following[0] in "ML" and int(following[1]) >= 3)
            capture = _group(letter) not in seen
            seen.add(_group(letter))
            regex.append(_parse_regex(letter, count, abutting, capture))
            if letter == "y" and count == 2:
                self._two_digit_year = True
        self._formatters = tuple(formatters)
        self._regex = re.compile("".join(regex))
        self.granularity_ms = granularity

    def __repr__(self) -> str:
        return f"JavaDateFormat({self.pattern!r})"

    def format(self, when: dt.datetime) -> str:
        """``when`` as text, in UTC (a naive datetime is taken to be UTC already)."""
        if when.tzinfo is not None and when.utcoffset():
            when = when.astimezone(dt.UTC)
        return "".join(
            part if isinstance(part, str) else part(when) for part in self._formatters
        )

    def format_millis(self, epoch_millis: int) -> str:
        """The instant ``epoch_millis`` (milliseconds since the Unix epoch) as text."""
        return self.format(_EPOCH + dt.timedelta(milliseconds=epoch_millis))

    def parse(self, text: str) -> dt.datetime:
        """The instant ``text`` denotes, as an aware UTC datetime.

        Fields the pattern does not have take their epoch values (1970-01-01 00:00:00);
        a zone in the text (``Z``, ``X``, ``z``) is honoured, otherwise the text is UTC.

        Raises:
            ValueError: ``text`` does not match the pattern, or names an impossible date;
                the message quotes both.

        """
        match = self._regex.match(text)
        if match is None:
            raise ValueError(f"{text!r} does not match the date format {self.pattern!r}")
        fields = match.groupdict()
        try:
            year = int(fields["y"]) if fields.get("y") is not None else 1970
            if self._two_digit_year:
                year += 1900 if year >= 69 else 2000
            month_text = fields.get("M")
            month = 1
            if month_text is not None:
                month = int(month_text) if month_text.isdigit() else _NAMES[
                    month_text.lower()] + 1
            day = int(fields["d"]) if fields.get("d") is not None else 1
            hour = 0
            if fields.get("H") is not None:
                hour = int(fields["H"])
            elif fields.get("k") is not None:
                hour = int(fields["k"]) % 24
            elif fields.get("h") is not None or fields.get("K") is not None:
                hour = int(fields.get("h") or fields["K"]) % 12
                if (fields.get("a") or "").upper() == "PM":
                    hour += 12
            minute = int(fields["m"]) if fields.get("m") is not None else 0
            second = int(fields["s"]) if fields.get("s") is not None else 0
            millis = int(fields["S"]) if fields.get("S") is not None else 0
            if fields.get("D") is not None and fields.get("d") is None:
                base = dt.datetime(year, 1, 1, tzinfo=dt.UTC)
                base += dt.timedelta(days=int(fields["D"]) - 1)
                month, day = base.month, base.day
            result = dt.datetime(year, month, day, hour, minute, second, tzinfo=dt.UTC)
            result += dt.timedelta(milliseconds=millis)
            if fields.get("Z") is not None:
                result -= _offset(fields["Z"])
        except (ValueError, OverflowError, KeyError) as exc:
            raise ValueError(
                f"{text!r} is not a valid date for the format {self.pattern!r}: {exc}"
            ) from None
        return result


def _translate_regex(pattern: str) -> str:
    out: list[str] = []
    i, n, in_class = 0, len(pattern), False
    while i < n:
        c = pattern[i]
        if c == "\\" and i + 1 < n:
            if pattern[i + 1] == "Q":
                end = pattern.find("\\E", i + 2)
                literal = pattern[i + 2:] if end < 0 else pattern[i + 2:end]
                out.append(re.escape(literal))
                i = n if end < 0 else end + 2
                continue
            out.append(pattern[i:i + 2])
            i += 2
            continue
        if in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
            out.append(c)
            # A ']' right after '[' or '[^' is a literal member, not the end.
            if pattern.startswith("^]", i + 1) or pattern.startswith("]", i + 1):
                skip = 2 if pattern[i + 1] == "^" else 1
                out.append(pattern[i + 1:i + 1 + skip])
                i += skip
            i += 1
            continue
        elif pattern.startswith("(?<", i) and i + 3 < n and (
            pattern[i + 3].isalpha()
        ):
            out.append("(?P<")
            i += 3
            continue
        out.append(c)
        i += 1
    return "".join(out)


def java_regex(pattern: str) -> re.Pattern[str]:
    """``pattern``, a Java regular expression, compiled with Python's ``re``.

    Raises:
        ValueError: The pattern is not valid (the message says where).

    """
    try:
        return re.compile(_translate_regex(pattern))
    except re.error as exc:
        raise ValueError(f"invalid regular expression {pattern!r}: {exc}") from None


def java_replacement(replacement: str, regex: re.Pattern[str]) -> Callable[[re.Match[str]], str]:
    r"""A function building Java's ``Matcher`` replacement of a match of ``regex``.

    ``$n`` is group *n* (Java reads as many digits as still name a group), ``${name}`` a
    named group, ``\x`` the character *x* itself (so ``\$`` is a dollar sign). A group
    that did not take part in the match contributes nothing.

    Raises:
        ValueError: A reference to a group the regex does not have, a ``$`` or ``\`` at
            the end, or an unterminated ``${``.

    """
    parts: list[str | int] = []
    literal: list[str] = []
    i, n = 0, len(replacement)
    groups = regex.groups

    def flush() -> None:
        if literal:
            parts.append("".join(literal))
            literal.clear()

    while i < n:
        c = replacement[i]
        if c == "\\":
            if i + 1 >= n:
                raise ValueError(f"replacement {replacement!r} ends with a lone backslash")
            literal.append(replacement[i + 1])
            i += 2
        elif c == "$":
            if i + 1 >= n:
                raise ValueError(f"replacement {replacement!r} ends with a lone '$' "
                                 "(write \\$ for a dollar sign)")
            if replacement[i + 1] == "{":
                end = replacement.find("}", i + 2)
                if end < 0:
                    raise ValueError(f"replacement {replacement!r} has an unterminated '${{'")
                name = replacement[i + 2:end]
                if name not in regex.groupindex:
                    raise ValueError(f"replacement {replacement!r} names group {name!r}, "
                                     f"which the regex {regex.pattern!r} does not have")
                flush()
                parts.append(regex.groupindex[name])
                i = end + 1
            elif replacement[i + 1].isdigit():
                number = int(replacement[i + 1])
                j = i + 2
                while j < n and replacement[j].isdigit() and number * 10 + int(
                        replacement[j]) <= groups:
                    number = number * 10 + int(replacement[j])
                    j += 1
                if number > groups:
                    raise ValueError(f"replacement {replacement!r} refers to group {number}, "
                                     f"but the regex has {groups} group(s)")
                flush()
                parts.append(number)
                i = j
            else:
                raise ValueError(f"replacement {replacement!r} has '$' not followed by a group "
                                 "number or {name} (write \\$ for a dollar sign)")
        else:
            literal.append(c)
            i += 1
    flush()
    frozen = tuple(parts)
    if all(isinstance(part, str) for part in frozen):
        constant = "".join(str(part) for part in frozen)
        return lambda match: constant

    def expand(match: re.Match[str]) -> str:
        return "".join(
            part if isinstance(part, str) else (match.group(part) or "") for part in frozen
        )

    return expand
