import re

import pytest

from omconnect.errors import ConfigError, DataError
from omconnect.transforms.filter import Filter
from omconnect.transforms.regex_router import RegexRouter
from omconnect.transforms.timestamp_router import TimestampRouter


def test_regex_router_uses_java_group_references(configured, sink_record):
    router = configured(RegexRouter, {"regex": r"(?<env>\w+)\.(.*)-raw",
                                      "replacement": "${env}_$2"})
    out = router.apply(sink_record("v", topic="prod.orders-raw"))
    assert out.topic == "prod_orders"
    assert out.original_topic == "prod.orders-raw"  # a sink record keeps where it came from


def test_regex_router_needs_a_whole_match(configured, sink_record):
    router = configured(RegexRouter, {"regex": "orders", "replacement": "x"})
    record = sink_record("v", topic="orders-eu")
    assert router.apply(record) is record


def test_regex_router_escaped_dollar_and_multi_digit_groups(configured, source_record):
    router = configured(RegexRouter, {"regex": "(a)(b)(c)(d)(e)(f)(g)(h)(i)(j)(k)",
                                      "replacement": r"$11-$1\$"})
    assert router.apply(source_record("v", topic="abcdefghijk")).topic == "k-a$"


@pytest.mark.parametrize(("options", "key", "fragment"), [
    ({"regex": "(unclosed", "replacement": "x"}, "regex", "invalid regular expression"),
    ({"regex": "(a)", "replacement": "$2"}, "replacement", "refers to group 2"),
    ({"regex": "(a)", "replacement": "${name}"}, "replacement", "names group 'name'"),
    ({"regex": "a", "replacement": "cost$"}, "replacement", "lone '$'"),
])
def test_regex_router_config_errors_name_the_option(options, key, fragment):
    with pytest.raises(ConfigError, match=re.escape(fragment)) as caught:
        RegexRouter().configure(options)
    assert caught.value.context["key"] == key


def test_timestamp_router_default_format(configured, sink_record):
    out = configured(TimestampRouter).apply(sink_record("v"))
    assert out.topic == "orders-20240305"


def test_timestamp_router_custom_formats(configured, source_record):
    router = configured(TimestampRouter, {"topic.format": "${timestamp}/${topic}",
                                          "timestamp.format": "yyyy-MM-dd'T'HH:mm"})
    assert router.apply(source_record("v")).topic == "2024-03-05T07:08/orders"
    # a later instant of another minute is not served from the cache of the first
    later = source_record("v", timestamp=1_709_622_489_123 + 60_000)
    assert router.apply(later).topic == "2024-03-05T07:09/orders"


def test_timestamp_router_cache_respects_day_boundaries(configured, source_record):
    router = configured(TimestampRouter)
    midnight = 1_709_596_800_000  # 2024-03-05T00:00:00Z
    assert router.apply(source_record("v", timestamp=midnight - 1)).topic == "orders-20240304"
    assert router.apply(source_record("v", timestamp=midnight)).topic == "orders-20240305"
    assert router.apply(source_record("v", timestamp=-1)).topic == "orders-19691231"


def test_timestamp_router_without_timestamp_is_a_data_error(configured, source_record):
    with pytest.raises(DataError, match="needs a record timestamp"):
        configured(TimestampRouter).apply(source_record("v", timestamp=None))


def test_filter_drops_everything_it_applies_to(configured, sink_record):
    assert configured(Filter).apply(sink_record("v")) is None
