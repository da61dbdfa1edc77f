"""ConfigDef: types, defaults, required keys, validators, messages, password masking."""

from __future__ import annotations

import logging
import pickle

import pytest

from omconnect.config import (
    NO_DEFAULT,
    ConfigDef,
    ConfigType,
    Importance,
    NonEmptyString,
    OneOf,
    Password,
    Range,
    Regex,
    ValidList,
)
from omconnect.errors import ConfigError, DataError

# -- ConfigType.parse -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [("true", True), ("TRUE", True), (" yes ", True), ("1", True), ("on", True),
     ("false", False), ("No", False), ("0", False), ("off", False), (True, True),
     (False, False)],
)
def test_boolean_parses_the_usual_spellings(raw: object, expected: bool) -> None:
    assert ConfigType.BOOLEAN.parse(raw) is expected


@pytest.mark.parametrize("raw", ["maybe", "", "2", "tru"])
def test_boolean_rejects_anything_else(raw: str) -> None:
    with pytest.raises(DataError, match="expected a boolean"):
        ConfigType.BOOLEAN.parse(raw)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [("42", 42), (" -7 ", -7), (2**31 - 1, 2**31 - 1), (str(-(2**31)), -(2**31)), (0, 0)],
)
def test_int_parses_32_bit_integers(raw: object, expected: int) -> None:
    assert ConfigType.INT.parse(raw) == expected


@pytest.mark.parametrize("raw", [2**31, str(-(2**31) - 1)])
def test_int_rejects_values_beyond_32_bits(raw: object) -> None:
    with pytest.raises(DataError, match="32-bit integer"):
        ConfigType.INT.parse(raw)


@pytest.mark.parametrize("raw", ["abc", "1.5", 1.5, True, "", "0x10"])
def test_int_rejects_non_integers(raw: object) -> None:
    with pytest.raises(DataError, match="expected an integer"):
        ConfigType.INT.parse(raw)


def test_long_takes_64_bit_values() -> None:
    assert ConfigType.LONG.parse("9223372036854775807") == 2**63 - 1
    assert ConfigType.LONG.parse(2**40) == 2**40
    with pytest.raises(DataError, match="expected an integer"):
        ConfigType.LONG.parse(False)


@pytest.mark.parametrize(("raw", "expected"), [("1.5", 1.5), (" -2e3 ", -2000.0), (3, 3.0)])
def test_double_parses_numbers(raw: object, expected: float) -> None:
    assert ConfigType.DOUBLE.parse(raw) == expected


@pytest.mark.parametrize("raw", ["fast", True, [1]])
def test_double_rejects_non_numbers(raw: object) -> None:
    with pytest.raises(DataError, match="expected a number"):
        ConfigType.DOUBLE.parse(raw)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [("a,b , c", ["a", "b", "c"]), ("a,,b,", ["a", "b"]), ("", []), ("  ", []),
     (["x ", " y"], ["x", "y"]), (("p", 1), ["p", "1"]), ("one", ["one"])],
)
def test_list_splits_on_commas_and_trims(raw: object, expected: list[str]) -> None:
    assert ConfigType.LIST.parse(raw) == expected


def test_string_keeps_whitespace_and_stringifies_typed_values() -> None:
    assert ConfigType.STRING.parse("  padded ") == "  padded "
    assert ConfigType.STRING.parse(5) == "5"


def test_class_keeps_a_class_and_trims_a_name() -> None:
    assert ConfigType.CLASS.parse(" pkg.mod:Cls ") == "pkg.mod:Cls"
    assert ConfigType.CLASS.parse(dict) is dict


def test_password_wraps_and_keeps_an_existing_password() -> None:
    secret = ConfigType.PASSWORD.parse("hunter2")
    assert isinstance(secret, Password)
    assert secret.value() == "hunter2"
    assert ConfigType.PASSWORD.parse(secret) is secret


@pytest.mark.parametrize("type_", list(ConfigType))
def test_none_parses_to_none_for_every_type(type_: ConfigType) -> None:
    assert type_.parse(None) is None


# -- define, defaults, required ----------------------------------------------------------


def _orders_def() -> ConfigDef:
    return (
        ConfigDef()
        .define("file", ConfigType.STRING, importance=Importance.HIGH,
                documentation="The file to read.", validators=[NonEmptyString()])
        .define("batch.size", ConfigType.INT, 2000, validators=[Range(min=1, max=100_000)],
                documentation="Most lines per poll.")
        .define("mode", ConfigType.STRING, "append", validators=[OneOf(("append", "replace"))])
        .define("topics", ConfigType.LIST, validators=[ValidList(allow_empty=False)])
        .define("label", ConfigType.STRING, "orders", validators=[NonEmptyString()])
        .define("password", ConfigType.PASSWORD, None, documentation="Database password.")
        .define("strict", ConfigType.BOOLEAN, False)
    )


def test_parse_fills_defaults_and_parses_declared_keys() -> None:
    values = _orders_def().parse({"file": "/tmp/in.txt", "batch.size": "10",
                                  "topics": "a,b", "strict": "yes"})
    assert values == {"file": "/tmp/in.txt", "batch.size": 10, "mode": "append",
                      "topics": ["a", "b"], "label": "orders", "password": None,
                      "strict": True}


def test_parse_keeps_undeclared_keys_as_given() -> None:
    values = _orders_def().parse({"file": "f", "topics": "a", "kafka.linger.ms": "5"})
    assert values["kafka.linger.ms"] == "5"


def test_a_key_without_default_is_required() -> None:
    definition = _orders_def()
    assert definition.key("file").required
    assert definition.key("file").default is NO_DEFAULT
    assert not definition.key("password").required  # default None: optional


@pytest.mark.parametrize("given", [{}, {"file": None}, {"file": "   "}])
def test_a_missing_required_key_names_the_key_and_the_fix(given: dict[str, object]) -> None:
    errors = _orders_def().validate({**given, "topics": "a"})
    assert errors["file"] == ["missing required setting; set file (The file to read)"]


def test_validate_lists_every_declared_key_and_only_the_bad_ones_have_messages() -> None:
    errors = _orders_def().validate({"file": "f", "topics": "a"})
    assert set(errors) == set(_orders_def().names())
    assert not any(errors.values())


def test_an_unparsable_value_names_the_expected_type_and_the_key() -> None:
    errors = _orders_def().validate({"file": "f", "topics": "a", "batch.size": "lots"})
    assert errors["batch.size"] == [
        "expected an integer, got 'lots'; fix the value of batch.size"]


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("batch.size", "0", "must be at least 1, got 0; fix the value of batch.size"),
        ("batch.size", "100001", "must be at most 100000, got 100001; fix the value of "
                                 "batch.size"),
        ("mode", "upsert", "must be one of append, replace; got 'upsert'; fix the value of "
                           "mode"),
        ("topics", " , ", "must list at least one item; fix the value of topics"),
        ("label", " ", "must not be empty; fix the value of label"),
    ],
)
def test_validator_messages_name_the_problem_and_the_key(key: str, value: str,
                                                         message: str) -> None:
    config = {"file": "f", "topics": "a", key: value}
    assert _orders_def().validate(config)[key] == [message]


def test_prefix_is_how_the_user_wrote_the_keys() -> None:
    errors = _orders_def().validate({"topics": "a"}, prefix="source.")
    assert errors["source.file"] == ["missing required setting; set source.file "
                                     "(The file to read)"]


def test_parse_raises_one_config_error_listing_every_bad_key() -> None:
    with pytest.raises(ConfigError) as caught:
        _orders_def().parse({"batch.size": "-1", "mode": "x"}, what="connector 'orders'")
    error = caught.value
    assert set(error.errors) == {"file", "batch.size", "mode", "topics"}
    text = str(error)
    assert text.startswith("invalid connector 'orders' (4 errors):")
    for key in ("file", "batch.size", "mode", "topics"):
        assert f"  {key}: " in text
    assert isinstance(error, ValueError)


def test_one_bad_key_is_named_in_the_error_context() -> None:
    with pytest.raises(ConfigError) as caught:
        _orders_def().parse({"topics": "a"})
    assert caught.value.context["key"] == "file"


def test_defining_a_key_twice_is_an_error() -> None:
    with pytest.raises(ValueError, match="'file' is defined twice"):
        ConfigDef().define("file", ConfigType.STRING).define("file", ConfigType.STRING)


def test_an_unparsable_default_is_an_error_at_definition() -> None:
    with pytest.raises(ValueError, match="default of config key 'n': expected an integer"):
        ConfigDef().define("n", ConfigType.INT, "many")


def test_a_default_that_fails_its_validators_is_an_error_at_definition() -> None:
    with pytest.raises(ValueError, match="default of config key 'n': must be at least 1, got 0"):
        ConfigDef().define("n", ConfigType.INT, 0, validators=[Range(min=1)])


def test_defaults_are_parsed_at_definition() -> None:
    definition = ConfigDef().define("topics", ConfigType.LIST, "a, b")
    assert definition.key("topics").default == ["a", "b"]


def test_merge_combines_and_refuses_overlaps() -> None:
    a = ConfigDef().define("x", ConfigType.INT, 1)
    b = ConfigDef().define("y", ConfigType.INT, 2)
    assert a.merge(b).names() == ["x", "y"]
    with pytest.raises(ValueError, match="'x' is defined twice"):
        a.merge(a)


def test_suggest_finds_a_close_key() -> None:
    assert _orders_def().suggest("batch.sise") == "batch.size"
    assert _orders_def().suggest("completely.else") is None


def test_strict_parse_warns_about_likely_typos(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="omconnect.config"):
        _orders_def().parse({"file": "f", "topics": "a", "batch.sise": "5", "x.y": "1"},
                            strict=True)
    assert "batch.sise" in caplog.text
    assert "did you mean 'batch.size'" in caplog.text
    assert "x.y" not in caplog.text  # not close to any declared key: passed through quietly


def test_documentation_table_lists_every_key() -> None:
    table = _orders_def().documentation_table()
    assert "| `file` | string | (required) | high | The file to read. |" in table
    assert "| `batch.size` | int | 2000 | medium | Most lines per poll. |" in table


# -- validators on their own ---------------------------------------------------------------


def test_range_accepts_bounds_and_none() -> None:
    assert Range(min=1, max=3)(1) is None
    assert Range(min=1, max=3)(3) is None
    assert Range(min=1)(None) is None
    assert Range(max=0.5)(0.6) == "must be at most 0.5, got 0.6"


def test_one_of_is_case_insensitive_unless_asked() -> None:
    assert OneOf(["none", "all"])("ALL") is None
    assert OneOf(["none", "all"], case_sensitive=True)("ALL") == (
        "must be one of none, all; got 'ALL'")


def test_regex_matches_the_whole_string_and_shows_the_hint() -> None:
    topic = Regex(r"[a-z.]+", hint="lowercase letters and dots")
    assert topic("orders.v") is None
    assert topic("orders.v1") == "must match lowercase letters and dots; got 'orders.v1'"


def test_valid_list_checks_each_item() -> None:
    check = ValidList(item=OneOf(["a", "b"]))
    assert check(["a", "b"]) is None
    assert check(["a", "c"]) == "item 'c' must be one of a, b; got 'c'"


# -- passwords are masked everywhere -------------------------------------------------------


SECRET = "s3cr3t-value"


def test_password_is_masked_in_repr_and_str_and_formatting() -> None:
    secret = Password(SECRET)
    for shown in (repr(secret), str(secret), f"{secret}", f"{secret!r}", repr([secret]),
                  repr({"password": secret})):
        assert SECRET not in shown
    assert str(secret) == "[hidden]"
    assert repr(secret) == "Password([hidden])"


def test_password_compares_by_value_and_survives_pickling() -> None:
    assert Password("a") == Password("a")
    assert Password("a") != Password("b")
    assert Password("a") != "a"
    assert hash(Password("a")) == hash(Password("a"))
    assert pickle.loads(pickle.dumps(Password("a"))).value() == "a"


def test_parsed_passwords_are_masked_when_the_config_is_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    values = _orders_def().parse({"file": "f", "topics": "a", "password": SECRET})
    assert values["password"].value() == SECRET
    with caplog.at_level(logging.INFO):
        logging.getLogger("omconnect.test").info("starting with %s", values)
        logging.getLogger("omconnect.test").info("starting with %r", values)
    assert "[hidden]" in caplog.text
    assert SECRET not in caplog.text


def test_masked_hides_declared_passwords_even_before_parsing() -> None:
    raw = {"file": "f", "password": SECRET}
    assert ConfigDef.masked(raw, _orders_def()) == {"file": "f", "password": "[hidden]"}


@pytest.mark.parametrize(
    "key",
    ["connection.password", "db.PASSWORD", "client.secret", "auth.token",
     "aws.credentials", "sasl.jaas.config"],
)
def test_masked_hides_keys_that_look_secret(key: str) -> None:
    assert ConfigDef.masked({key: SECRET, "topic": "t"}) == {key: "[hidden]", "topic": "t"}


def test_masked_hides_password_values_under_any_key_and_keeps_nulls() -> None:
    masked = ConfigDef.masked({"anything": Password(SECRET), "password": None})
    assert masked == {"anything": "[hidden]", "password": None}


def test_validation_messages_never_echo_a_password() -> None:
    definition = ConfigDef().define("password", ConfigType.PASSWORD,
                                    validators=[NonEmptyString()])
    errors = definition.validate({"password": SECRET})
    assert errors == {"password": []}
    assert SECRET not in repr(definition.parse({"password": SECRET}))
