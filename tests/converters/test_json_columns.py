"""The JSON converter's column form: a string column's JSON at once, byte for byte what
from_connect gives each item, or no column form (record by record) where it cannot be.
"""

from __future__ import annotations

import datetime as dt
import decimal

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
    logical,
)

DOCUMENTED = SchemaBuilder.string().optional().doc("a line").version(2).build()
DEFAULTED = SchemaBuilder.string().default_value("dflt").build()
PLAIN = ["a", "ünïcödé ✓", "", "x\u2028y 🙂", "\x7f del", "tab-free, quote-free"]


def _converter(schemas: bool) -> JsonConverter:
    converter = JsonConverter()
    converter.configure({"schemas.enable": schemas}, is_key=False)
    return converter


@pytest.mark.parametrize("schemas", [True, False])
@pytest.mark.parametrize("schema", [None, OPTIONAL_STRING_SCHEMA, STRING_SCHEMA, DOCUMENTED,
                                    DEFAULTED],
                         ids=["no-schema", "optional", "required", "documented", "default"])
def test_a_string_column_gives_the_bytes_of_each_record(schemas: bool, schema: object) -> None:
    converter = _converter(schemas)
    values = PLAIN + ([] if schema in (STRING_SCHEMA, DEFAULTED) else [None])
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
    (pa.array(["a", None], pa.string()),  # a null is written as the default
     SchemaBuilder.string().optional().default_value("dflt").build()),
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


@pytest.mark.parametrize("schemas", [True, False])
def test_a_column_of_json_strings_reads_as_the_records_read(schemas: bool) -> None:
    converter = _converter(schemas)
    data = [converter.from_connect("t", schema, value)
            for schema in (None, OPTIONAL_STRING_SCHEMA, STRING_SCHEMA)
            for value in [*PLAIN, None] if not (schema is STRING_SCHEMA and value is None)]
    column = converter.deserialize_column("t", pa.array(data, pa.binary()))
    assert column is not None
    assert column.equals(pa.array([converter.to_connect("t", d).value for d in data]))


@pytest.mark.parametrize("item", [b'{"schema":null,"payload":"say \\"hi\\""}',  # escapes
                                  b'{"schema":null,"payload":12}',  # not a string
                                  b'{"schema":{"type":"string","optional":false},'
                                  b'"payload":null}',  # a required null
                                  b'{ "schema":null,"payload":"x"}',  # another layout
                                  b'{"schema":null,"payload":"a"b"}',  # not JSON
                                  b'\xff'])
def test_an_item_that_is_not_a_plain_string_envelope_is_read_per_record(item: bytes) -> None:
    column = pa.array([b'{"schema":null,"payload":"fine"}', item], pa.binary())
    assert _converter(True).deserialize_column("t", column) is None


@pytest.mark.parametrize("items", [[None, None], [b'{"schema":null,"payload":null}', None]])
def test_a_column_of_nulls_reads_as_arrow_reads_a_column_of_none(items: list) -> None:
    column = _converter(True).deserialize_column("t", pa.array(items, pa.binary()))
    assert column is not None and column.type == pa.null() and len(column) == 2


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.none(), st.text()), min_size=1, max_size=20), st.booleans())
def test_any_json_strings_read_as_the_records_read_or_per_record(values: list[str | None],
                                                                 schemas: bool) -> None:
    converter = _converter(schemas)
    try:
        data = [converter.from_connect("t", OPTIONAL_STRING_SCHEMA, v) for v in values]
    except Exception:  # a lone surrogate has no UTF-8 form
        return
    column = converter.deserialize_column("t", pa.array(data, pa.binary()))
    if column is not None:
        assert column.equals(pa.array([converter.to_connect("t", d).value for d in data]))


# -- struct columns: flat rows written at once ---------------------------------------------

_FIELD_KINDS = {
    "int8": (pa.int8(), SchemaBuilder.int8, st.integers(-128, 127)),
    "int32": (pa.int32(), SchemaBuilder.int32, st.integers(-(2**31), 2**31 - 1)),
    "int64": (pa.int64(), SchemaBuilder.int64, st.integers(-(2**63), 2**63 - 1)),
    "bool": (pa.bool_(), SchemaBuilder.boolean, st.booleans()),
    "float64": (pa.float64(), SchemaBuilder.float64, st.floats(allow_nan=False,
                                                                allow_infinity=False)),
    "float32": (pa.float32(), SchemaBuilder.float32, st.floats(width=32, allow_nan=False,
                                                                allow_infinity=False)),
    "string": (pa.string(), SchemaBuilder.string, st.text()),
}


@st.composite
def _struct_columns(draw: st.DrawFn) -> tuple[object, object]:
    kinds = draw(st.lists(st.sampled_from(sorted(_FIELD_KINDS)), min_size=1, max_size=5))
    optional = [draw(st.booleans()) for _ in kinds]
    names = [draw(st.text(min_size=1, max_size=6)) + f"_{i}" for i in range(len(kinds))]
    builder = SchemaBuilder.struct()
    fields = []
    for name, kind, opt in zip(names, kinds, optional, strict=True):
        arrow, schema, _ = _FIELD_KINDS[kind]
        field_schema = schema()
        builder.field(name, (field_schema.optional() if opt else field_schema).build())
        fields.append(pa.field(name, arrow, opt))
    rows = draw(st.lists(st.tuples(*[
        (st.none() | _FIELD_KINDS[k][2]) if opt else _FIELD_KINDS[k][2]
        for k, opt in zip(kinds, optional, strict=True)]), min_size=1, max_size=8))
    column = pa.array([dict(zip(names, row, strict=True)) for row in rows],
                      pa.struct(fields))
    return column, builder.build()


@settings(max_examples=300, deadline=None)
@given(_struct_columns(), st.booleans())
def test_any_flat_struct_column_gives_the_record_bytes_or_no_column_form(
        drawn: tuple[object, object], schemas: bool) -> None:
    from omconnect.columnar.typed_values import value_builder

    column, schema = drawn
    converter = _converter(schemas)
    fast = converter.serialize_column("t", column, schema)
    if fast is None:  # a control character in a string: the records decide
        assert any("\x00" <= ch <= "\x1f" for row in column.to_pylist()
                   for value in row.values() if isinstance(value, str) for ch in value)
        return
    records = [converter.from_connect("t", schema, value)
               for value in map(value_builder(schema), column.to_pylist())]
    assert fast.to_pylist() == records


@st.composite
def _nested_struct_columns(draw: st.DrawFn) -> tuple[object, object]:
    """A struct column with a drawn flat struct nested in it (optional or not, null in
    some rows when optional) beside a string field.
    """
    inner_column, inner_schema = draw(_struct_columns())
    optional = draw(st.booleans())
    inner_rows = inner_column.to_pylist()
    if optional:
        inner_rows = [None if draw(st.booleans()) else row for row in inner_rows]
    labels = draw(st.lists(st.text(max_size=4), min_size=len(inner_rows),
                           max_size=len(inner_rows)))
    field_builder = SchemaBuilder.struct().optional() if optional else SchemaBuilder.struct()
    for field in inner_schema.fields:
        field_builder.field(field.name, field.schema)
    field_schema = field_builder.build()
    schema = (SchemaBuilder.struct().field("label", SchemaBuilder.string().build())
              .field("inner", field_schema).build())
    column = pa.array([{"label": label, "inner": row}
                       for label, row in zip(labels, inner_rows, strict=True)],
                      pa.struct([pa.field("label", pa.string(), False),
                                 pa.field("inner", inner_column.type, optional)]))
    return column, schema


@settings(max_examples=200, deadline=None)
@given(_nested_struct_columns(), st.booleans())
def test_any_struct_column_with_a_nested_struct_gives_the_record_bytes_or_no_form(
        drawn: tuple[object, object], schemas: bool) -> None:
    from omconnect.columnar.typed_values import value_builder

    column, schema = drawn
    converter = _converter(schemas)
    fast = converter.serialize_column("t", column, schema)
    if fast is None:  # a control character in a string: the records decide
        def strings(value: object) -> list[str]:
            if isinstance(value, dict):
                return [text for item in value.values() for text in strings(item)]
            return [value] if isinstance(value, str) else []

        assert any("\x00" <= ch <= "\x1f" for row in column.to_pylist()
                   for text in strings(row) for ch in text)
        return
    records = [converter.from_connect("t", schema, value)
               for value in map(value_builder(schema), column.to_pylist())]
    assert fast.to_pylist() == records


_TIME_KINDS = {
    # Arrow type, Connect schema, values (what Arrow's to_pylist gives for the type)
    "date32": (pa.date32(), "date", st.dates()),
    "date64": (pa.date64(), "date", st.dates()),
    "time32s": (pa.time32("s"), "time", st.times().map(lambda t: t.replace(microsecond=0))),
    "time32ms": (pa.time32("ms"), "time",
                 st.times().map(lambda t: t.replace(microsecond=t.microsecond // 1000 * 1000))),
    "time64us": (pa.time64("us"), "time", st.times()),
    "ts_s": (pa.timestamp("s"), "timestamp",
             st.datetimes().map(lambda d: d.replace(microsecond=0))),
    "ts_ms": (pa.timestamp("ms", tz="UTC"), "timestamp",
              st.datetimes(timezones=st.just(dt.UTC)).map(
                  lambda d: d.replace(microsecond=d.microsecond // 1000 * 1000))),
    "ts_us": (pa.timestamp("us"), "timestamp", st.datetimes()),
}


@st.composite
def _time_struct_columns(draw: st.DrawFn) -> tuple[object, object]:
    """A struct column of Date, Time and Timestamp fields in drawn Arrow types and units
    (before and after the epoch), optional or not, beside an int64 field.
    """
    kinds = draw(st.lists(st.sampled_from(sorted(_TIME_KINDS)), min_size=1, max_size=4))
    optional = [draw(st.booleans()) for _ in kinds]
    builder = SchemaBuilder.struct().field("n", INT64_SCHEMA)
    fields = [pa.field("n", pa.int64(), False)]
    for index, (kind, opt) in enumerate(zip(kinds, optional, strict=True)):
        arrow, name, _ = _TIME_KINDS[kind]
        builder.field(f"f{index}", getattr(logical, f"{name}_schema")(optional=opt))
        fields.append(pa.field(f"f{index}", arrow, opt))
    rows = draw(st.lists(st.tuples(*[
        (st.none() | _TIME_KINDS[k][2]) if opt else _TIME_KINDS[k][2]
        for k, opt in zip(kinds, optional, strict=True)]), min_size=1, max_size=6))
    column = pa.array([{"n": i, **{f"f{j}": v for j, v in enumerate(row)}}
                       for i, row in enumerate(rows)], pa.struct(fields))
    return column, builder.build()


@settings(max_examples=300, deadline=None)
@given(_time_struct_columns(), st.booleans())
def test_any_struct_column_of_dates_and_times_gives_the_record_bytes(
        drawn: tuple[object, object], schemas: bool) -> None:
    from omconnect.columnar.typed_values import value_builder

    column, schema = drawn
    converter = _converter(schemas)
    fast = converter.serialize_column("t", column, schema)
    assert fast is not None, "dates, times and timestamps have a column form"
    records = [converter.from_connect("t", schema, value)
               for value in map(value_builder(schema), column.to_pylist())]
    assert fast.to_pylist() == records


_EXACT = decimal.Context(prec=80)


@st.composite
def _decimal_struct_columns(draw: st.DrawFn) -> tuple[object, object]:
    """A struct column of Decimal fields (decimal128 of drawn precision and scale, values
    of either sign up to the precision, nulls where optional) beside an int64 field,
    possibly a slice of a longer column.
    """
    count = draw(st.integers(1, 3))
    builder = SchemaBuilder.struct().field("n", INT64_SCHEMA)
    fields = [pa.field("n", pa.int64(), False)]
    values = []
    for index in range(count):
        precision = draw(st.integers(1, 38))
        scale = draw(st.integers(0, precision))
        optional = draw(st.booleans())
        builder.field(f"d{index}", logical.decimal_schema(scale, optional=optional))
        fields.append(pa.field(f"d{index}", pa.decimal128(precision, scale), optional))
        limit = 10 ** precision - 1
        number = st.integers(-limit, limit).map(
            lambda u, scale=scale: decimal.Decimal(u).scaleb(-scale, _EXACT))
        values.append((st.none() | number) if optional else number)
    rows = draw(st.lists(st.tuples(*values), min_size=1, max_size=8))
    column = pa.array([{"n": i, **{f"d{j}": v for j, v in enumerate(row)}}
                       for i, row in enumerate(rows)], pa.struct(fields))
    start = draw(st.integers(0, len(rows) - 1))
    return column.slice(start), builder.build()


@settings(max_examples=300, deadline=None)
@given(_decimal_struct_columns(), st.booleans())
def test_any_struct_column_of_decimals_gives_the_record_bytes(
        drawn: tuple[object, object], schemas: bool) -> None:
    from omconnect.columnar.typed_values import value_builder

    column, schema = drawn
    converter = _converter(schemas)
    fast = converter.serialize_column("t", column, schema)
    assert fast is not None, "decimals written as BASE64 have a column form"
    records = [converter.from_connect("t", schema, value)
               for value in map(value_builder(schema), column.to_pylist())]
    assert fast.to_pylist() == records


def test_numeric_decimals_are_written_record_by_record() -> None:
    converter = JsonConverter()
    converter.configure({"schemas.enable": False, "decimal.format": "NUMERIC"}, is_key=False)
    schema = SchemaBuilder.struct().field("p", logical.decimal_schema(2)).build()
    column = pa.array([{"p": decimal.Decimal("1.50")}], pa.struct([("p", pa.decimal128(5, 2))]))
    assert converter.serialize_column("t", column, schema) is None


@pytest.mark.parametrize(("column", "schema", "why"), [
    (pa.array([{"d": 1}], pa.struct([("d", pa.float64())])),
     SchemaBuilder.struct().field("d", SchemaBuilder.float64().build()).build(), "fits"),
    (pa.array([{"n": float("nan")}], pa.struct([("n", pa.float64())])),
     SchemaBuilder.struct().field("n", SchemaBuilder.float64().build()).build(), "NaN"),
    (pa.array([{"n": 1}, None], pa.struct([("n", pa.int64())])),
     SchemaBuilder.struct().optional().field("n", SchemaBuilder.int64().build()).build(),
     "a null row"),
    (pa.array([{"n": [1]}], pa.struct([("n", pa.list_(pa.int64()))])),
     SchemaBuilder.struct().field("n", SchemaBuilder.array(INT64_SCHEMA).build()).build(),
     "an array field"),
    (pa.array([{"n": {"m": 1}}], pa.struct([("n", pa.struct([("m", pa.int64())]))])),
     SchemaBuilder.struct().field("n", SchemaBuilder.struct().field(
         "m", INT64_SCHEMA).build()).build(), "fits"),
    (pa.array([{"n": {"m": [1]}}], pa.struct([("n", pa.struct([("m", pa.list_(pa.int64()))]))])),
     SchemaBuilder.struct().field("n", SchemaBuilder.struct().field(
         "m", SchemaBuilder.array(INT64_SCHEMA).build()).build()).build(),
     "an array in a nested struct"),
    (pa.array([{"p": 1}], pa.struct([("p", pa.decimal128(5, 2))])),
     SchemaBuilder.struct().field("p", logical.decimal_schema(2)).build(), "fits"),
    (pa.array([{"p": 1}], pa.struct([("p", pa.decimal128(5, 3))])),
     SchemaBuilder.struct().field("p", logical.decimal_schema(2)).build(),
     "a decimal column of another scale"),
    (pa.array([{"p": 1}], pa.struct([("p", pa.decimal256(5, 2))])),
     SchemaBuilder.struct().field("p", logical.decimal_schema(2)).build(),
     "a decimal256 column"),
    (pa.array([{"n": 1}], pa.struct([("n", pa.int64())])),
     SchemaBuilder.struct().field("n", SchemaBuilder.int32().build()).build(),
     "int64 values for an INT32 field"),
])
def test_a_struct_column_has_a_form_only_where_records_would_agree(column, schema,
                                                                   why) -> None:
    form = _converter(False).serialize_column("t", column, schema)
    assert (form is not None) == (why == "fits"), why


# -- struct columns read at once (the sink side) -----------------------------------------

def _records_column(converter: JsonConverter, data: list) -> object:
    """What put_batch gets for ``data`` record by record (sink_records_to_batch's value
    column)."""
    from omconnect.columnar.records import sink_records_to_batch
    from omconnect.records import SinkRecord

    read = [converter.to_connect("t", item) for item in data]
    return sink_records_to_batch([
        SinkRecord(topic="t", partition=0, offset=n, value_schema=r.schema, value=r.value)
        for n, r in enumerate(read)]).column("value")


def _written(drawn: tuple[object, object], gaps: list[bool]) -> tuple[JsonConverter, list]:
    """Each row of a drawn struct column written with schemas, a tombstone before the rows
    whose ``gaps`` entry is true."""
    from omconnect.columnar.typed_values import value_builder

    column, schema = drawn
    converter = _converter(True)
    try:
        written = [converter.from_connect("t", schema, value)
                   for value in map(value_builder(schema), column.to_pylist())]
    except Exception:  # a lone surrogate has no UTF-8 form
        pytest.skip("not writable")
    data: list = []
    for item, gap in zip(written, gaps + [False] * len(written), strict=False):
        data += [None, item] if gap else [item]
    return converter, data


@settings(max_examples=300, deadline=None)
@given(st.one_of(_struct_columns(), _nested_struct_columns(), _time_struct_columns()),
       st.lists(st.booleans(), max_size=8))
def test_any_struct_envelopes_read_at_once_as_the_records_read(
        drawn: tuple[object, object], gaps: list[bool]) -> None:
    converter, data = _written(drawn, gaps)
    column = converter.deserialize_column("t", pa.array(data, pa.binary()))
    if column is None:  # FLOAT32, Time, a name JSON escapes: the records decide
        assert not _read_at_once(drawn[1]), f"the converter's bytes have a read form: {data!r}"
        return
    expected = _records_column(converter, data)
    assert column.type == expected.type
    assert column.to_pylist() == expected.to_pylist()


def _read_at_once(schema: object) -> bool:
    """Whether the docs promise a struct schema's envelopes a read form: no FLOAT32 or
    Time field and no field name that JSON escapes, at any depth."""
    for field in schema.fields:  # type: ignore[attr-defined]
        if any(ch in '"\\' or ch < " " for ch in field.name):
            return False
        if field.schema.type.name == "FLOAT32" or field.schema.name == logical.TIME:
            return False
        if field.schema.fields and not _read_at_once(field.schema):
            return False
    return True


_SCHEMA = (SchemaBuilder.struct().field("n", SchemaBuilder.int8())
           .field("s", SchemaBuilder.string().optional()).build())


def _envelope(payload: str) -> bytes:
    """``{"schema":S,"payload":<payload>}`` with S as the converter writes _SCHEMA."""
    from omconnect.data import Struct

    full = _converter(True).from_connect("t", _SCHEMA, Struct(_SCHEMA, {"n": 0}))
    head = full[:full.index(b',"payload":') + len(b',"payload":')]
    return head + payload.encode() + b"}"


def test_fields_the_schema_lacks_are_ignored_as_the_records_ignore_them() -> None:
    converter = _converter(True)
    data = [_envelope('{"n":1,"s":"a","extra":[1,{"x":2}]}'), _envelope('{"n":2}')]
    column = converter.deserialize_column("t", pa.array(data, pa.binary()))
    assert column is not None
    assert column.to_pylist() == _records_column(converter, data).to_pylist() == [
        {"n": 1, "s": "a"}, {"n": 2, "s": None}]


@pytest.mark.parametrize("payload", [
    '{"n":300,"s":"a"}',  # out of int8's range
    '{"s":"a"}',  # a required field missing
    '{"n":null}',  # a required field null
    '{"n":"1"}',  # a string for an integer
    '{"n":1.5}',  # a float for an integer
    '{"n":1,"n":2}',  # a duplicate key (the records take the last)
    '{"n":1} {"n":2}',  # two objects in one item
    'null',  # a null payload for a required struct
    '[1]',  # not an object
    '{\n"n":1}',  # spread over lines
])
def test_an_item_the_records_refuse_or_read_otherwise_sends_the_batch_per_record(
        payload: str) -> None:
    converter = _converter(True)
    data = [_envelope('{"n":1,"s":"a"}'), _envelope(payload)]
    assert converter.deserialize_column("t", pa.array(data, pa.binary())) is None


def test_items_of_two_schemas_are_read_per_record() -> None:
    converter = _converter(True)
    other = (SchemaBuilder.struct().field("n", SchemaBuilder.int64()).build())
    from omconnect.data import Struct

    data = [_envelope('{"n":1}'), converter.from_connect("t", other, Struct(other, {"n": 5}))]
    assert converter.deserialize_column("t", pa.array(data, pa.binary())) is None
