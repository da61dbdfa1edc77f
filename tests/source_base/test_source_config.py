from __future__ import annotations

from typing import Any

import attrs
import pytest

from omconnect.config import ConfigType
from omconnect.errors import ConfigError
from omconnect.runtime.connector_config import COMMON_CONFIG_DEF
from omconnect.source_base import SourceCommonConfig, common_config_def
from omconnect.source_base.formats.csv import CsvFormat
from omconnect.source_base.formats.jsonl import JsonLinesFormat


def test_defaults() -> None:
    config = SourceCommonConfig.from_config({})
    assert config.max_poll_records == 500
    assert config.poll_timeout == 1.0
    assert (config.backoff.initial_delay, config.backoff.max_delay) == (0.1, 5.0)
    assert (config.task_id, config.max_tasks) == (0, 1)
    assert config.record_format.name == "bytes"
    assert config.compression == "auto"


def test_strings_from_a_properties_file_are_parsed() -> None:
    config = SourceCommonConfig.from_config({
        "max.poll.records": "50", "poll.timeout.ms": "250", "poll.backoff.initial.ms": "20",
        "poll.backoff.max.ms": "2000", "input.format": "csv", "csv.delimiter": ";",
        "csv.column.types": "id:int64, price:float64", "tasks.max": "4", "task.id": "3",
        "record.key": "field", "record.key.field": "id",
    })
    assert config.max_poll_records == 50
    assert config.poll_timeout == 0.25
    assert config.backoff.max_delay == 2.0
    assert (config.task_id, config.max_tasks) == (3, 4)
    assert isinstance(config.record_format, CsvFormat)
    assert config.record_format.delimiter == ";"
    assert config.record_format.column_types == {"id": "int64", "price": "float64"}
    assert config.record_format.key_field == "id"


@pytest.mark.parametrize(("settings", "key", "message"), [
    ({"poll.backoff.max.ms": "6000"}, "poll.backoff.max.ms", "at most 5000"),
    ({"poll.backoff.initial.ms": "3000", "poll.backoff.max.ms": "1000"},
     "poll.backoff.initial.ms", "must not exceed poll.backoff.max.ms"),
    ({"task.id": "2", "tasks.max": "2"}, "task.id", "must be below tasks.max"),
    ({"input.format": "xml"}, "input.format", "must be one of"),
    ({"record.key": "field", "input.format": "jsonl"}, "record.key.field", "needs"),
    ({"input.format": "csv", "csv.column.types": "id:decimal"}, "csv.column.types",
     "column:type"),
    ({"distribution.type": "partition"}, "file.name.pattern", "named group 'partition'"),
    ({"input.encoding": "klingon", "input.format": "jsonl"}, "input.encoding",
     "unknown encoding"),
    ({"max.poll.records": "0"}, "max.poll.records", "at least 1"),
])
def test_bad_settings_are_reported_by_key(settings: dict[str, str], key: str,
                                          message: str) -> None:
    with pytest.raises(ConfigError) as info:
        SourceCommonConfig.from_config(settings)
    assert key in info.value.errors, info.value.errors
    assert message in " ".join(info.value.errors[key])


def test_the_fragment_merges_with_the_runtimes_common_keys_and_a_connectors_own() -> None:
    merged = COMMON_CONFIG_DEF.merge(
        common_config_def().define("path", ConfigType.STRING, documentation="Where."))
    assert "path" in merged and "tasks.max" in merged and "input.format" in merged


def test_a_subclass_adds_its_own_fields() -> None:
    @attrs.frozen(kw_only=True)
    class DirectoryConfig(SourceCommonConfig):
        directory: str
        topic: str

    raw: dict[str, Any] = {"input.format": "jsonl", "directory": "/d", "topic": "t"}
    config = DirectoryConfig.from_config(raw, directory=raw["directory"], topic=raw["topic"])
    assert config.directory == "/d" and config.topic == "t"
    assert isinstance(config.record_format, JsonLinesFormat)
    assert config.settings["directory"] == "/d"
