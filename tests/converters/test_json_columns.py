"""The JSON converter's column form: a string column's JSON at once, byte for byte what
from_connect gives each item, or no column form (record by record) where it cannot be.
"""

from __future__ import annotations

import pytest

pa = pytest.importorskip("pyarrow")

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from omconnect.converters.json import JsonConverter  # noqa: E402
from omconnect.data import (  # noqa: E402
    INT64_SCHEMA,
    OPTIONAL_STRING_SCHEMA,
    STRING_SCHEMA,
    SchemaBuilder,
)

DOCUMENTED = SchemaBuilder.string().optional().doc("a line").version(2).build()
PLAIN = ["a", "ünïcödé ✓", "", "x\u2028y 🙂", "\x7f del", "tab-free, quote-free"]


def _converter(schemas: bool) -> JsonConverter:
    converter = JsonConverter()
    converter.configure({"schemas.enable": schemas}, is_key=False)
    return converter


@pytest.mark.parametrize("schemas", [True, False])
@pytest.mark.parametrize("schema", [None, OPTIONAL_STRING_SCHEMA, STRING_SCHEMA, DOCUMENTED],
                         ids=["no-schema", "optional", "required", "documented"])
def test_a_string_column_gives_the_bytes_of_each_record(schemas: bool, schema: object) -> None:
    converter = _converter(schemas)
    values = PLAIN + ([] if schema is STRING_SCHEMA else [None])
    column = converter.serialize_column("t", pa.array(values, pa.string()), schema)
    assert column is not None and column.type == pa.binary()
    assert column.to_pylist() == [converter.from_connect("t", schema, v) for v in values]


@pytest.mark.parametrize("needs_escape", ['say "hi"', "back\\slash", "new\nline", "\x00",
                                          "\x1f"])
def test_an_item_that_needs_escapes_sends_the_batch_record_by_record(needs_escape: str) -> None:
    column = pa.array(["fine", needs_escape], pa.string())
    assert _converter(True).serialize_column("t", column, None) is None


@pytest.mark.parametrize(("column", "schema"), [
    (pa.array([1, 2]), INT64_SCHEMA),  # not a string column
    (pa.array(["a", None], pa.string()), STRING_SCHEMA),  # a required null: per record
    (pa.array(["a"], pa.string()), INT64_SCHEMA),  # the schema is not a string's
])
def test_no_column_form_where_the_records_decide(column: object, schema: object) -> None:
    assert _converter(True).serialize_column("t", column, schema) is None


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.none(), st.text()), max_size=20), st.booleans())
def test_any_strings_give_the_record_bytes_or_no_column_form(values: list[str | None],
                                                             schemas: bool) -> None:
    converter = _converter(schemas)
    try:
        column = pa.array(values, pa.string())
    except (pa.ArrowInvalid, UnicodeEncodeError):  # a lone surrogate: no Arrow string
        return
    for schema in (None, OPTIONAL_STRING_SCHEMA):
        got = converter.serialize_column("t", column, schema)
        if got is not None:
            assert got.to_pylist() == [converter.from_connect("t", schema, v) for v in values]
