"""The runtime's fast record constructors build exactly what the classes' constructors do."""

from __future__ import annotations

import copy
import pickle

import attrs
import pytest

from omconnect._builders import builder
from omconnect.data import BYTES_SCHEMA, STRING_SCHEMA, Headers
from omconnect.records import (
    RecordMetadata,
    SinkRecord,
    SourceRecord,
    build_record_metadata,
    build_sink_record,
    build_source_record,
)
from omconnect.transport.messages import Message, build_message

HEADERS = Headers([("h", "v", STRING_SCHEMA)])


def _same(built: object, made: object, *, hashable: bool = True) -> None:
    assert type(built) is type(made)
    assert built == made and made == built
    if hashable:
        assert hash(built) == hash(made)
    assert repr(built) == repr(made)


def test_build_sink_record_equals_the_keyword_constructor():
    made = SinkRecord(topic="t", partition=2, key_schema=STRING_SCHEMA, key="k",
                      value_schema=BYTES_SCHEMA, value=b"v", timestamp=5, headers=HEADERS,
                      offset=7)
    built = build_sink_record("t", 2, STRING_SCHEMA, "k", BYTES_SCHEMA, b"v", 5, HEADERS, 7,
                              "t", 2, 7)
    _same(built, made)
    assert built.topic_partition == made.topic_partition


def test_build_source_record_equals_the_keyword_constructor():
    made = SourceRecord(topic="t", value_schema=BYTES_SCHEMA, value=b"v",
                        source_partition={"f": "a"}, source_offset={"n": 1})
    built = build_source_record("t", None, None, None, BYTES_SCHEMA, b"v", None,
                                Headers.EMPTY, {"f": "a"}, {"n": 1})
    _same(built, made, hashable=False)  # source partitions and offsets are dicts


def test_build_message_equals_the_constructor():
    _same(build_message("t", b"k", b"v", (("h", b"1"),), 5, 0, 9),
          Message("t", b"k", b"v", (("h", b"1"),), 5, 0, 9))


def test_build_record_metadata_equals_the_constructor():
    _same(build_record_metadata("t", 1, 42, 5), RecordMetadata("t", 1, 42, 5))


def test_built_records_stay_frozen_and_evolve_pickle_and_copy_like_any_other():
    built = build_sink_record("t", 0, None, None, None, b"v", None, Headers.EMPTY, 3,
                              "t", 0, 3)
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        built.topic = "other"  # type: ignore[misc]
    renamed = built.evolve(topic="u")
    assert (renamed.topic, renamed.original_topic) == ("u", "t")
    assert pickle.loads(pickle.dumps(built)) == built
    assert copy.copy(built) == built


def test_a_builder_takes_the_fields_in_definition_order():
    # A field added to a record class changes its builder's parameters accordingly.
    for cls, build in ((SinkRecord, build_sink_record), (SourceRecord, build_source_record),
                       (Message, build_message), (RecordMetadata, build_record_metadata)):
        names = [field.name for field in attrs.fields(cls)]
        assert build.__code__.co_varnames[:len(names)] == tuple(names)


@attrs.frozen(slots=True)
class _OwnWeakref:
    a: int
    b: str = "x"


def test_a_class_the_fast_path_cannot_handle_gets_an_equivalent_slower_builder():
    # A class with a weakref slot of its own cannot swap layouts with a twin.
    build = builder(_OwnWeakref)
    _same(build(1, "y"), _OwnWeakref(1, "y"))
    assert build.__code__.co_filename == "<builder of _OwnWeakref>"
    for fast in (build_sink_record, build_source_record, build_message,
                 build_record_metadata):  # every omconnect builder takes the fast path
        assert fast.__code__.co_filename.startswith("<fast builder of ")
