"""Settings: bad ones are refused naming the key and the fix; storage options reach
fsspec; the module imports without fsspec.
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from objectstore_helpers import config
from omconnect_objectstore.config import parse_config, storage_options
from omconnect_objectstore.source import ObjectStoreSourceConnector
from omconnect_objectstore.store import ObjectStore, glob_filter
from omconnect_objectstore.topics import TopicTemplate

from omconnect.errors import ConfigError
from omconnect.plugins import load


def _errors(settings) -> dict[str, list[str]]:
    return {k: v for k, v in ObjectStoreSourceConnector().validate(settings).items() if v}


def test_the_connector_is_installed_under_its_entry_point_name():
    assert load("omconnect.connectors", "objectstore-source") is ObjectStoreSourceConnector


def test_missing_url_and_topic_are_named():
    errors = _errors({"input.format": "jsonl"})
    assert set(errors) == {"objectstore.url", "topic"}


def test_problems_visible_only_together_are_reported_per_key(tmp_path):
    errors = _errors(config(tmp_path, topic="t-{table}", input_format="csv",
                            csv_column_types="id:decimal", errors_tolerance="some"))
    assert "unknown placeholder {table}" in errors["topic"][0]
    assert "file.name.pattern" in errors["topic"][0]  # where {table} could come from
    assert "csv.column.types" in errors
    assert errors["errors.tolerance"] == ["must be none or all, got 'some'"]


def test_an_unknown_url_protocol_is_refused_naming_the_key(tmp_path):
    settings = config(tmp_path)
    settings["objectstore.url"] = "nosuchfs://bucket/prefix"
    parsed = parse_config(settings)
    with pytest.raises(ConfigError, match="'nosuchfs://bucket/prefix' cannot be opened"
                       ) as caught:
        ObjectStore(parsed.url)
    assert caught.value.context["key"] == "objectstore.url"


def test_storage_options_nest_on_dots_and_take_types_from_text():
    options = storage_options({
        "objectstore.storage.options.anon": "false",
        "objectstore.storage.options.default_block_size": "1048576",
        "objectstore.storage.options.client_kwargs.endpoint_url": "http://127.0.0.1:9000",
        "objectstore.storage.options.client_kwargs.region_name": "eu-west-1",
        "objectstore.url": "s3://bucket"})
    assert options == {"anon": False, "default_block_size": 1048576,
                       "client_kwargs": {"endpoint_url": "http://127.0.0.1:9000",
                                         "region_name": "eu-west-1"}}
    with pytest.raises(ConfigError, match="as a value and as a group"):
        storage_options({"objectstore.storage.options.a": "1",
                         "objectstore.storage.options.a.b": "2"})


def test_storage_options_reach_the_filesystem(tmp_path):
    settings = {**config(tmp_path), "objectstore.storage.options.auto_mkdir": "true"}
    store = ObjectStore(str(tmp_path), storage_options(settings))
    assert store.fs.auto_mkdir is True
    assert store.location == tmp_path.as_uri()


def test_globs_keep_within_directories_unless_doubled():
    csv = glob_filter("*.csv")
    assert csv("a.csv") and csv("x/y/a.csv") and not csv("a.csv.tmp")
    nested = glob_filter("2024/*/orders-?.csv")
    assert nested("2024/05/orders-1.csv") and not nested("2024/05/06/orders-1.csv")
    deep = glob_filter("2024/**/*.csv")
    assert deep("2024/a.csv") and deep("2024/05/06/a.csv") and not deep("2023/a.csv")
    classes = glob_filter("[!.]*.json[l]")
    assert classes("a.jsonl") and not classes(".a.jsonl")
    assert glob_filter(None) is None


def test_topic_templates():
    assert TopicTemplate("orders").fixed == "orders"
    assert TopicTemplate("raw-{stem}").topic_for("2024/05/orders.csv.gz") == "raw-orders"
    assert TopicTemplate("{object}").topic_for("a b/c.csv") == "a_b_c.csv"
    assert TopicTemplate("{{x}}-{stem}").topic_for("a.csv") == "{x}-a"
    for bad, message in (("t-{stem!r}", "without format specs"), ("t-{", "not a valid"),
                         ("", "must name a topic")):
        with pytest.raises(ConfigError, match=message):
            TopicTemplate(bad)


def test_the_connector_module_imports_without_fsspec():
    code = ("import sys; import omconnect_objectstore.source, omconnect_objectstore.config;"
            " print('fsspec' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True)
    assert result.stdout.strip() == "False"
