import datetime as dt

import pytest

from omconnect.transforms.java import JavaDateFormat, java_regex, java_replacement

WHEN = dt.datetime(2024, 3, 5, 7, 8, 9, 45000, tzinfo=dt.UTC)


@pytest.mark.parametrize(("pattern", "text"), [
    ("yyyyMMdd", "20240305"),
    ("yyyy-MM-dd'T'HH:mm:ss.SSSXXX", "2024-03-05T07:08:09.045Z"),
    ("yy/M/d H:m:s.S", "24/3/5 7:8:9.45"),
    ("EEE, dd MMM yyyy hh:mm a", "Tue, 05 Mar 2024 07:08 AM"),
    ("EEEE d MMMM yyyy 'at' k 'o''clock'", "Tuesday 5 March 2024 at 7 o'clock"),
    ("D u Z z", "65 2 +0000 UTC"),
])
def test_format_like_simple_date_format(pattern, text):
    assert JavaDateFormat(pattern).format(WHEN) == text


def test_format_converts_to_utc():
    plus_two = dt.timezone(dt.timedelta(hours=2))
    assert JavaDateFormat("HH:mm").format(WHEN.astimezone(plus_two)) == "07:08"


@pytest.mark.parametrize(("pattern", "text", "expected"), [
    ("yyyyMMddHHmmss", "20240305070809", WHEN.replace(microsecond=0)),
    ("yyyy-MM-dd HH:mm:ss.SSSZ", "2024-03-05 09:08:09.045+0200", WHEN),
    ("dd MMM yyyy hh:mm a z", "05 Mar 2024 07:08 PM GMT+01:00",
     dt.datetime(2024, 3, 5, 18, 8, tzinfo=dt.UTC)),
    ("yyyy-D", "2024-65", dt.datetime(2024, 3, 5, tzinfo=dt.UTC)),
    ("yyyy-MM-dd K:mm a", "2024-03-05 0:30 PM", dt.datetime(2024, 3, 5, 12, 30, tzinfo=dt.UTC)),
    ("yyyy-MM-dd h:mm a", "2024-03-05 12:30 AM", dt.datetime(2024, 3, 5, 0, 30, tzinfo=dt.UTC)),
    ("yyyy-MM-dd kk", "2024-03-05 24", dt.datetime(2024, 3, 5, 0, tzinfo=dt.UTC)),
    ("yy-MM-dd", "99-01-02", dt.datetime(1999, 1, 2, tzinfo=dt.UTC)),
    ("yyyy-MM-dd", "2024-3-5T10:00", dt.datetime(2024, 3, 5, tzinfo=dt.UTC)),  # a prefix
])
def test_parse_like_simple_date_format(pattern, text, expected):
    assert JavaDateFormat(pattern).parse(text) == expected


def test_parse_rejects_impossible_dates():
    with pytest.raises(ValueError, match="not a valid date"):
        JavaDateFormat("yyyy-MM-dd").parse("2024-02-30")


def test_granularity_is_the_smallest_unit():
    assert JavaDateFormat("yyyyMMdd").granularity_ms == 86_400_000
    assert JavaDateFormat("yyyy-MM-dd-HH").granularity_ms == 3_600_000
    assert JavaDateFormat("mm:ss.SSS").granularity_ms == 1


def test_java_regex_named_groups_and_quoting():
    regex = java_regex(r"(?<env>[a-z]+)\Q.*\E(?<=\*)[(?<]")
    assert regex.fullmatch("prod.*(").group("env") == "prod"


def test_replacement_of_an_absent_group_is_empty():
    regex = java_regex("(a)?(b)")
    assert java_replacement("[$1$2]", regex)(regex.fullmatch("b")) == "[b]"
