import importlib
import logging
import re
import sys
import textwrap

import pytest

from omconnect import plugins
from omconnect.data import Headers
from omconnect.errors import ConfigError, DataError
from omconnect.records import SourceRecord
from omconnect.transforms import TransformChain
from omconnect.transforms.insert_field import InsertFieldValue
from omconnect.transforms.regex_router import RegexRouter

KC = "org.apache.kafka.connect.transforms."


def config_error(config) -> ConfigError:
    with pytest.raises(ConfigError) as caught:
        TransformChain.from_config(config)
    return caught.value


# -- chains ------------------------------------------------------------------------------
def test_chain_of_several_applies_in_order_with_every_naming(chain_of, sink_record, order,
                                                             order_schema):
    chain = chain_of({
        "transforms": "addTopic, drop, route",
        "transforms.addTopic.type": KC + "InsertField$Value",  # Kafka Connect class name
        "transforms.addTopic.topic.field": "src",
        "transforms.drop.type": "ReplaceField$Value",  # Kafka Connect short name
        "transforms.drop.exclude": "note",
        "transforms.route.type": "regex-router",  # entry-point name
        "transforms.route.regex": "(.*)s",
        "transforms.route.replacement": "$1",
    })
    assert [type(s.transform) for s in chain.stages][::2] == [InsertFieldValue, RegexRouter]
    [out] = chain.apply_batch([sink_record(order, order_schema)])
    assert out.topic == "order"
    # InsertField ran before RegexRouter, so it saw the original topic
    assert out.value.to_dict() == {"id": 42, "customer": "ada", "amount": 9.5,
                                   "src": "orders"}


def test_source_records_keep_their_source_position(chain_of, source_record):
    chain = chain_of({"transforms": "i", "transforms.i.type": "InsertField$Value",
                      "transforms.i.static.field": "s", "transforms.i.static.value": "x"})
    [out] = chain.apply_batch([source_record({"a": 1})])
    assert isinstance(out, SourceRecord)
    assert out.source_partition == {"file": "/in.txt"}
    assert out.source_offset == {"position": 12}
    assert out.value == {"a": 1, "s": "x"}


def test_empty_chain_passes_records_through(sink_record):
    chain = TransformChain.from_config({"name": "orders", "connector.class": "x"})
    records = [sink_record(i) for i in range(3)]
    assert len(chain) == 0
    assert chain.apply_batch(records) == records


def test_filter_with_predicate_and_negate(chain_of, sink_record):
    base = {"predicates": "tomb", "predicates.tomb.type": KC + "predicates.RecordIsTombstone",
            "transforms": "f", "transforms.f.type": "Filter", "transforms.f.predicate": "tomb"}
    records = [sink_record("a"), sink_record(None), sink_record("b")]
    assert [r.value for r in chain_of(base).apply_batch(records)] == ["a", "b"]
    keep_tombstones = chain_of({**base, "transforms.f.negate": "true"})
    assert [r.value for r in keep_tombstones.apply_batch(records)] == [None]


def test_one_predicate_guards_two_transforms(chain_of, sink_record):
    chain = chain_of({
        "predicates": "isRaw", "predicates.isRaw.type": "TopicNameMatches",
        "predicates.isRaw.pattern": ".*-raw",
        "transforms": "tag,route",
        "transforms.tag.type": "InsertHeader", "transforms.tag.header": "was-raw",
        "transforms.tag.value.literal": "true", "transforms.tag.predicate": "isRaw",
        "transforms.route.type": "RegexRouter", "transforms.route.regex": "(.*)-raw",
        "transforms.route.replacement": "$1", "transforms.route.predicate": "isRaw",
    })
    raw, clean = chain.apply_batch([sink_record("v", topic="a-raw"), sink_record("v", topic="b")])
    assert (raw.topic, raw.headers.last("was-raw").value) == ("a", True)
    assert (clean.topic, clean.headers) == ("b", Headers.EMPTY)
    assert chain.stages[0].predicate is chain.stages[1].predicate


def test_has_header_key_predicate_negated(chain_of, sink_record):
    chain = chain_of({
        "predicates": "traced", "predicates.traced.type": "has-header-key",
        "predicates.traced.name": "trace",
        "transforms": "tag", "transforms.tag.type": "InsertHeader",
        "transforms.tag.header": "trace", "transforms.tag.value.literal": "generated",
        "transforms.tag.predicate": "traced", "transforms.tag.negate": True,
    })
    untraced, traced = chain.apply_batch([sink_record("v"),
                                          sink_record("v", headers=[("trace", "t1")])])
    assert untraced.headers.keys() == ["trace"]
    assert traced.headers.all("trace")[0].value == "t1" and len(traced.headers) == 1


# -- errors while applying ---------------------------------------------------------------
def cast_chain(chain_of):
    return chain_of({"transforms": "c", "transforms.c.type": "Cast$Value",
                     "transforms.c.spec": "int8"})


def test_error_without_handler_names_stage_and_record(chain_of, sink_record):
    with pytest.raises(DataError) as caught:
        cast_chain(chain_of).apply_batch([sink_record("1"), sink_record("x", offset=99)])
    notes = "\n".join(caught.value.__notes__)
    assert "transform 'c' (Cast$Value)" in notes
    assert "topic='orders', partition=3, offset=99" in notes


def test_error_handler_gets_the_original_record_and_the_batch_goes_on(chain_of, sink_record):
    failures = []
    bad = sink_record("x")
    out = cast_chain(chain_of).apply_batch(
        [sink_record("1"), bad, sink_record("2")],
        on_error=lambda record, stage, exc: failures.append((record, stage.alias, exc)))
    assert [r.value for r in out] == [1, 2]
    [(record, alias, exc)] = failures
    assert record is bad and alias == "c" and isinstance(exc, DataError)


def test_apply_single_record(chain_of, sink_record):
    chain = cast_chain(chain_of)
    assert chain.apply(sink_record("7")).value == 7
    dropping = chain_of({"transforms": "f", "transforms.f.type": "filter"})
    assert dropping.apply(sink_record("7")) is None


# -- configuration errors ----------------------------------------------------------------
def test_unknown_type_names_the_key_with_did_you_mean():
    error = config_error({"transforms": "a", "transforms.a.type": "InsertFeild$Value"})
    assert error.context["key"] == "transforms.a.type"
    assert list(error.errors) == ["transforms.a.type"]
    assert "did you mean 'InsertField$Value'?" in str(error)


def test_unknown_kafka_connect_class_name_suggests_the_right_one():
    error = config_error({"transforms": "a", "transforms.a.type": KC + "RegexRoutr"})
    assert f"did you mean '{KC}RegexRouter'?" in error.errors["transforms.a.type"][0]


def test_missing_type():
    error = config_error({"transforms": "a"})
    assert error.context["key"] == "transforms.a.type"
    assert "missing; set transforms.a.type" in str(error)


def test_bad_and_missing_options_name_the_prefixed_key():
    error = config_error({"transforms": "m,r,t",
                          "transforms.m.type": "MaskField$Value",
                          "transforms.r.type": "RegexRouter", "transforms.r.regex": "(",
                          "transforms.r.replacement": "x",
                          "transforms.t.type": "TimestampRouter",
                          "transforms.t.timestamp.format": "YYYY"})
    assert set(error.errors) == {"transforms.m.fields", "transforms.r.regex",
                                 "transforms.t.timestamp.format"}
    assert "set transforms.m.fields" in error.errors["transforms.m.fields"][0]
    assert "3 errors" in str(error)


def test_undefined_predicate():
    error = config_error({"transforms": "f", "transforms.f.type": "Filter",
                          "transforms.f.predicate": "nope"})
    assert error.context["key"] == "transforms.f.predicate"
    assert "add it to predicates" in str(error)


def test_bad_predicate_options_and_type():
    error = config_error({"predicates": "p,q", "predicates.p.type": "TopicNameMatches",
                          "predicates.q.type": "TopicNameMatchs"})
    assert set(error.errors) == {"predicates.p.pattern", "predicates.q.type"}
    assert "did you mean 'TopicNameMatches'?" in error.errors["predicates.q.type"][0]


def test_negate_needs_a_predicate_and_a_boolean():
    error = config_error({"transforms": "f,g", "transforms.f.type": "Filter",
                          "transforms.f.negate": "true",
                          "transforms.g.type": "Filter", "transforms.g.negate": "maybe",
                          "transforms.g.predicate": "p",
                          "predicates": "p", "predicates.p.type": "RecordIsTombstone"})
    assert set(error.errors) == {"transforms.f.negate", "transforms.g.negate"}
    assert "without a predicate" in error.errors["transforms.f.negate"][0]


def test_duplicate_alias():
    error = config_error({"transforms": "f,f", "transforms.f.type": "Filter"})
    assert error.context["key"] == "transforms"


def test_a_predicate_is_not_a_transform():
    error = config_error({"transforms": "p", "transforms.p.type":
                          "omconnect.transforms.predicates:TopicNameMatches"})
    assert "is not a subclass of omconnect.transforms.base.Transformation" in str(error)


def test_validate_reports_per_key_without_raising():
    assert TransformChain.validate({"transforms": "f", "transforms.f.type": "Filter"}) == {}
    errors = TransformChain.validate({"transforms": "c", "transforms.c.type": "Cast$Value",
                                      "transforms.c.spec": "a:decimal"})
    assert list(errors) == ["transforms.c.spec"]


def test_misspelt_option_is_logged_with_a_suggestion(caplog):
    caplog.set_level(logging.WARNING, logger="omconnect.transforms.chain")
    TransformChain.from_config({"transforms": "x", "transforms.x.type": "ExtractField$Key",
                                "transforms.x.field": "id", "transforms.x.feild": "id"})
    assert "transforms.x.feild is not an option of ExtractField$Key; did you mean " \
           "transforms.x.field?" in caplog.text


# -- third-party transforms --------------------------------------------------------------
THIRD_PARTY = '''
from omconnect.config import ConfigDef, ConfigType
from omconnect.transforms import Predicate, Transformation

CLOSED = []


class Upper(Transformation):
    """Upper-cases string values; counts its calls."""

    config_def = ConfigDef().define("suffix", ConfigType.STRING, "")

    def configure(self, config):
        self.suffix = self.config_def.parse(config)["suffix"]

    def apply(self, record):
        return record.evolve(value=record.value.upper() + self.suffix)

    def close(self):
        CLOSED.append(self)


class IsShort(Predicate):
    def test(self, record):
        return len(record.value) < 3

    def close(self):
        CLOSED.append(self)


class Broken(Transformation):
    pass
'''


@pytest.fixture
def third_party(tmp_path, monkeypatch):
    (tmp_path / "acme_smt.py").write_text(textwrap.dedent(THIRD_PARTY))
    dist_info = tmp_path / "acme_smt-1.0.dist-info"
    dist_info.mkdir()
    (dist_info / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-smt\nVersion: 1.0\n")
    (dist_info / "entry_points.txt").write_text(
        "[omconnect.transforms]\nacme-upper = acme_smt:Upper\n"
        "[omconnect.predicates]\nacme-short = acme_smt:IsShort\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    plugins._entry_points.cache_clear()
    sys.modules.pop("acme_smt", None)
    yield importlib.import_module("acme_smt")
    plugins._entry_points.cache_clear()
    sys.modules.pop("acme_smt", None)


@pytest.mark.parametrize("name", ["acme_smt:Upper", "acme_smt.Upper", "acme-upper"])
def test_third_party_transform_by_python_path_or_entry_point(third_party, sink_record, name):
    chain = TransformChain.from_config({
        "transforms": "up", "transforms.up.type": name, "transforms.up.suffix": "!",
        "transforms.up.predicate": "short", "predicates": "short",
        "predicates.short.type": "acme-short"})
    out = chain.apply_batch([sink_record("ab"), sink_record("long")])
    assert [r.value for r in out] == ["AB!", "long"]
    chain.close()
    chain.close()  # closing twice closes once
    assert [type(o).__name__ for o in third_party.CLOSED] == ["Upper", "IsShort"]


def test_third_party_transform_missing_apply_is_named(third_party):
    error = config_error({"transforms": "b", "transforms.b.type": "acme_smt:Broken"})
    assert error.context["key"] == "transforms.b.type"
    assert re.search(r"cannot be instantiated: .*apply", str(error))


def test_failed_configuration_closes_what_was_built(third_party):
    config_error({"transforms": "up,bad", "transforms.up.type": "acme-upper",
                  "transforms.bad.type": "nope"})
    assert [type(o).__name__ for o in third_party.CLOSED] == ["Upper"]


def test_settings_of_an_unlisted_alias_are_ignored_with_a_warning(caplog, sink_record):
    caplog.set_level(logging.WARNING, logger="omconnect.transforms.chain")
    chain = TransformChain.from_config({"transforms": "a", "transforms.a.type": "Filter",
                                        "transforms.b.type": "Filter"})
    assert [s.alias for s in chain.stages] == ["a"]
    assert "transforms.b.* settings are ignored: 'b' is not listed in transforms" \
        in caplog.text


KAFKA_DOCS_EXAMPLE = r"""
# The example of Kafka Connect's documentation ("Transformations"), unchanged.
name=local-file-source
connector.class=FileStreamSource
tasks.max=1
file=test.txt
topic=connect-test
transforms=MakeMap, InsertSource
transforms.MakeMap.type=org.apache.kafka.connect.transforms.HoistField$Value
transforms.MakeMap.field=line
transforms.InsertSource.type=org.apache.kafka.connect.transforms.InsertField$Value
transforms.InsertSource.static.field=data_source
transforms.InsertSource.static.value=test-file-source
"""


def test_kafka_connect_documentation_example_runs_unchanged(source_record):
    from omconnect.config.files import parse_config

    config = parse_config(KAFKA_DOCS_EXAMPLE, format="properties")
    with TransformChain.from_config(config) as chain:
        [out] = chain.apply_batch([source_record("foo", topic="connect-test")])
    assert out.value == {"line": "foo", "data_source": "test-file-source"}


def test_yaml_config_with_typed_values(source_record):
    from omconnect.config.files import parse_config

    config = parse_config(textwrap.dedent("""
        transforms: [route, tag]
        transforms.route.type: RegexRouter
        transforms.route.regex: "(.*)-raw"
        transforms.route.replacement: "$1"
        transforms.route.predicate: raw
        transforms.route.negate: false
        transforms.tag.type: insert-header
        transforms.tag.header: n
        transforms.tag.value.literal: 5
        predicates: [raw]
        predicates.raw.type: TopicNameMatches
        predicates.raw.pattern: ".*-raw"
    """), format="yaml")
    with TransformChain.from_config(config) as chain:
        [out] = chain.apply_batch([source_record("v", topic="a-raw")])
    assert out.topic == "a" and out.headers.last("n").value == 5
