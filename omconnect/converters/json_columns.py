r"""JSON text of a whole ``string`` column at once: the JSON converter's column form.

A string needs no escape in JSON unless it holds ``"``, ``\`` or a control character
(U+0000 to U+001F): omconnect writes UTF-8 without ``\u`` escapes of other characters,
as :func:`json.dumps` with ``ensure_ascii=False`` does. So when no item of a column holds
one of those (one regular-expression scan in Arrow), each item's JSON is the item between
quotes, inside the envelope's fixed head and tail, joined in Arrow with no Python object
per item. Otherwise, or for other column types, the converter has no column form for the
batch and the runtime converts it record by record.
"""

from __future__ import annotations

from omconnect.plugins import require

require("pyarrow", plugin="the columnar path", extra="columnar")

import pyarrow as pa  # noqa: E402
import pyarrow.compute as pc  # noqa: E402

__all__ = ["json_string_column"]

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
