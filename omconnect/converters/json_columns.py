r"""JSON text of a whole ``string`` column at once, and back: the JSON converter's
column form.

A string needs no escape in JSON unless it holds ``"``, ``\`` or a control character
(U+0000 to U+001F): omconnect writes UTF-8 without ``\u`` escapes of other characters,
as :func:`json.dumps` with ``ensure_ascii=False`` does. So when no item of a column holds
one of those (one regular-expression scan in Arrow), each item's JSON is the item between
quotes, inside the envelope's fixed head and tail, joined in Arrow with no Python object
per item. Reading is the same in reverse: when every item is a null, a null envelope,
or one of the known envelope heads, a quote, a string without ``"``, ``\`` or control
characters, a quote and the tail, the strings are sliced out in Arrow. Otherwise, or for
other column types, the converter has no column form for the batch and the runtime
converts it record by record.
"""

from __future__ import annotations

from collections.abc import Sequence

from omconnect.plugins import require

require("pyarrow", plugin="the columnar path", extra="columnar")

import pyarrow as pa  # noqa: E402
import pyarrow.compute as pc  # noqa: E402

__all__ = ["json_string_column", "json_string_values"]

_NEEDS_ESCAPE = '["\\\\\\x00-\\x1f]'


def json_string_column(column: pa.Array, head: str, tail: str,
                       null_text: str | None) -> pa.Array | None:
    """``head + JSON string + tail`` of each item of a string ``column``, as ``binary``;
    a null item becomes ``null_text`` (``None``: a null, a tombstone). ``None`` when the
    column is not a string column or some item needs escapes.
    """
    kind = column.type
    if pa.types.is_large_string(kind) or pa.types.is_string_view(kind):
        column = column.cast(pa.string())
    elif not pa.types.is_string(kind):
        return None
    if len(column) and pc.any(pc.match_substring_regex(column, _NEEDS_ESCAPE)).as_py():
        return None
    joined = pc.binary_join_element_wise(head + '"', column, '"' + tail, "")
    if null_text is not None and column.null_count:
        joined = pc.if_else(column.is_null(), pa.scalar(null_text, pa.string()), joined)
    return joined.cast(pa.binary())


def json_string_values(column: pa.Array, heads: Sequence[str], tail: str,
                       null_texts: Sequence[str]) -> pa.Array | None:
    """The strings a ``binary`` column of JSON holds, when each item is a null, one of
    ``null_texts`` (a null value), or ``head + JSON string without escapes + tail`` for
    one of ``heads``: a ``string`` column (``null`` type when every item is null, as
    Arrow reads a column of ``None``). ``None`` when some item is anything else.
    """
    rows = len(column)
    if column.null_count == rows:
        return pa.nulls(rows)
    try:
        text = column.cast(pa.string())  # checks the UTF-8
    except pa.ArrowInvalid:
        return None
    nulls = column.is_null()
    for null_text in null_texts:
        nulls = pc.or_(nulls, pc.fill_null(pc.equal(text, null_text), False))
    if pc.all(nulls).as_py():  # only null values
        return pa.nulls(rows)
    values: pa.Array | None = None
    matched = nulls
    closing = '"' + tail
    ends = pc.fill_null(pc.ends_with(text, closing), False)
    for head in heads:
        opening = head + '"'
        fits = pc.and_(pc.and_(pc.fill_null(pc.starts_with(text, opening), False), ends),
                       pc.greater_equal(pc.utf8_length(text), len(opening) + len(closing)))
        fits = pc.and_not(fits, matched)
        if not pc.any(fits).as_py():
            continue
        body = pc.utf8_slice_codeunits(text, start=len(opening), stop=-len(closing))
        values = body if values is None else pc.if_else(fits, body, values)
        matched = pc.or_(matched, fits)
        if pc.all(matched).as_py():
            break
    else:
        return None  # some item matched no head
    assert values is not None
    strings = pc.if_else(nulls, pa.scalar(None, pa.string()), values)
    if pc.any(pc.match_substring_regex(strings, _NEEDS_ESCAPE)).as_py():
        return None  # escapes, or a quote that ends the string early: per record
    return strings
