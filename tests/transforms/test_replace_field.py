import pytest

from omconnect.errors import ConfigError
from omconnect.transforms.replace_field import ReplaceFieldKey, ReplaceFieldValue


def test_struct_exclude_and_rename_keep_input_order(configured, sink_record, order,
                                                    order_schema):
    transform = configured(ReplaceFieldValue, {"exclude": "note",
                                               "renames": "customer:buyer,amount:total"})
    out = transform.apply(sink_record(order, order_schema))
    schema = out.value_schema
    assert [f.name for f in schema.fields] == ["id", "buyer", "total"]
    assert schema.name == "com.example.Order"
    assert schema.field("total").schema == order_schema.field("amount").schema
    assert out.value.to_dict() == {"id": 42, "buyer": "ada", "total": 9.5}


def test_struct_include_keeps_only_listed_fields(configured, sink_record, order, order_schema):
    out = configured(ReplaceFieldValue, {"include": "amount,id,absent"}).apply(
        sink_record(order, order_schema))
    assert out.value.to_dict() == {"id": 42, "amount": 9.5}


def test_exclude_wins_over_include(configured, sink_record):
    out = configured(ReplaceFieldValue, {"include": "a,b", "exclude": "b"}).apply(
        sink_record({"a": 1, "b": 2, "c": 3}))
    assert out.value == {"a": 1}


def test_schemaless_rename_and_exclude(configured, sink_record):
    original = {"a": 1, "b": 2, "c": 3}
    out = configured(ReplaceFieldValue, {"exclude": ["c"], "renames": ["a:x"]}).apply(
        sink_record(original))
    assert out.value == {"x": 1, "b": 2}
    assert original == {"a": 1, "b": 2, "c": 3}


def test_deprecated_whitelist_and_blacklist(configured, sink_record):
    out = configured(ReplaceFieldValue, {"whitelist": "a,b", "blacklist": "b"}).apply(
        sink_record({"a": 1, "b": 2, "c": 3}))
    assert out.value == {"a": 1}


def test_new_and_deprecated_name_together_is_an_error():
    with pytest.raises(ConfigError) as caught:
        ReplaceFieldValue().configure({"exclude": "a", "blacklist": "b"})
    assert caught.value.context["key"] == "blacklist"


def test_bad_rename_names_the_option():
    with pytest.raises(ConfigError, match="write old:new") as caught:
        ReplaceFieldValue().configure({"renames": "a-b"})
    assert caught.value.context["key"] == "renames"


def test_key_variant(configured, sink_record, order, order_schema):
    record = sink_record(order, order_schema, key=order, key_schema=order_schema)
    out = configured(ReplaceFieldKey, {"include": "id"}).apply(record)
    assert out.key.to_dict() == {"id": 42}
    assert out.value is order


def test_no_change_returns_the_record(configured, sink_record, order, order_schema):
    record = sink_record(order, order_schema)
    assert configured(ReplaceFieldValue, {"exclude": "absent"}).apply(record) is record


def test_tombstone_passes_through(configured, sink_record, order_schema):
    record = sink_record(None, order_schema)
    assert configured(ReplaceFieldValue, {"exclude": "id"}).apply(record) is record
