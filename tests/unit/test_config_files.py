"""Config files (properties, YAML, JSON), Kafka Connect's example files, ${...} indirection."""

from __future__ import annotations

import json
import logging
import pickle
import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest

from omconnect.config import ConfigDef, ConfigType, Password
from omconnect.config.files import config_format, flatten, load_config_file, parse_config
from omconnect.config.properties import parse_properties
from omconnect.config.providers import ResolvedConfig, has_references, resolve_config
from omconnect.errors import ConfigError

EXAMPLES = Path(__file__).parents[2] / "examples" / "kafka-connect"


def _write(directory: Path, name: str, text: str) -> Path:
    path = directory / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


# -- Java .properties syntax -------------------------------------------------------------

# Documents covering the syntax; each is also checked against java.util.Properties below.
PROPERTIES_CASES: dict[str, tuple[str, dict[str, str]]] = {
    "separators": (
        "a=1\nb:2\nc 3\nd\t4\ne = 5\nf : 6\ng \t= \t7\nh=\ni\nj:\n",
        {"a": "1", "b": "2", "c": "3", "d": "4", "e": "5", "f": "6", "g": "7", "h": "",
         "i": "", "j": ""},
    ),
    "only the first separator counts": (
        "url=jdbc:postgresql://db:5432/orders?a=b\nk:v=w\nk2 v2 = w2\n",
        {"url": "jdbc:postgresql://db:5432/orders?a=b", "k": "v=w", "k2": "v2 = w2"},
    ),
    "comments and blank lines": (
        "# comment\n! also a comment\n   # indented comment\n\n  \t\nkey=value # not a comment\n",
        {"key": "value # not a comment"},
    ),
    "a comment is never continued": (
        "# comment \\\nkey=value\n",
        {"key": "value"},
    ),
    "leading whitespace and trailing whitespace": (
        "   indented = yes\n\f\tkey=  value with trailing spaces   \n",
        {"indented": "yes", "key": "value with trailing spaces   "},
    ),
    "continuations": (
        "fruits = apple, banana, \\\n         pear, \\\n    cantaloupe\nnext=1\n",
        {"fruits": "apple, banana, pear, cantaloupe", "next": "1"},
    ),
    "continuation onto a line that looks like a comment": (
        "key = a\\\n   # b\n",
        {"key": "a# b"},
    ),
    "an even number of backslashes does not continue": (
        "path = C:\\\\dir\\\\\nnext = 2\n",
        {"path": "C:\\dir\\", "next": "2"},
    ),
    "escapes in values": (
        "v = tab\\tnl\\ncr\\rff\\f\\u0041\\u00e9\\=\\:\\ \\#\\!\\\\\\q\n",
        {"v": "tab\tnl\ncr\rff\fAé=: #!\\q"},
    ),
    "escapes in keys": (
        "my\\ key = 1\nk\\=ey = 2\nk\\:ey = 3\n\\#notcomment = 4\n",
        {"my key": "1", "k=ey": "2", "k:ey": "3", "#notcomment": "4"},
    ),
    "characters beyond the BMP as a surrogate pair": (
        "smile = \\ud83d\\ude00\n",
        {"smile": "\U0001f600"},
    ),
    "UTF-8 text": (
        "greeting = héllo wörld ✓\n",
        {"greeting": "héllo wörld ✓"},
    ),
    "line endings": (
        "a=1\r\nb=2\rc=3\n",
        {"a": "1", "b": "2", "c": "3"},
    ),
    "a key given twice keeps its last value": (
        "k=1\nk=2\n",
        {"k": "2"},
    ),
    "a trailing backslash at the end of the file": (
        "k=v\\",
        {"k": "v"},
    ),
}


@pytest.mark.parametrize("case", list(PROPERTIES_CASES))
def test_properties_syntax(case: str) -> None:
    text, expected = PROPERTIES_CASES[case]
    assert parse_properties(text) == expected


def test_properties_agree_with_java_util_properties(tmp_path: Path) -> None:
    java = shutil.which("java")
    if java is None:
        pytest.skip("no java on PATH to compare with java.util.Properties")
    (tmp_path / "Dump.java").write_text(textwrap.dedent("""
        import java.io.*;
        import java.nio.charset.StandardCharsets;
        import java.util.*;

        public class Dump {
            public static void main(String[] args) throws IOException {
                for (String name : args) {
                    Properties props = new Properties();
                    try (Reader r = new InputStreamReader(new FileInputStream(name),
                                                          StandardCharsets.UTF_8)) {
                        props.load(r);
                    }
                    StringBuilder out = new StringBuilder(name + "\\n");
                    for (String key : props.stringPropertyNames()) {
                        out.append(hex(key)).append(' ').append(hex(props.getProperty(key)))
                           .append('\\n');
                    }
                    System.out.print(out.append(".\\n"));
                }
            }
            static String hex(String s) {
                StringBuilder b = new StringBuilder("x");
                for (char c : s.toCharArray()) b.append(String.format("%04x", (int) c));
                return b.toString();
            }
        }
    """))
    names = []
    for i, (text, _) in enumerate(PROPERTIES_CASES.values()):
        path = tmp_path / f"case{i}.properties"
        path.write_bytes(text.encode("utf-8"))
        names.append(str(path))
    result = subprocess.run([java, str(tmp_path / "Dump.java"), *names], capture_output=True,
                            text=True, timeout=120, check=True)

    def unhex(token: str) -> str:
        units = bytes.fromhex(token[1:])
        return units.decode("utf-16-be", "surrogatepass")

    java_view: dict[str, dict[str, str]] = {}
    current: dict[str, str] = {}
    for line in result.stdout.splitlines():
        if line == ".":
            continue
        if " " not in line:
            current = java_view.setdefault(line, {})
            continue
        key, value = line.split(" ")
        current[unhex(key)] = unhex(value)
    for name, (case, (text, _)) in zip(names, PROPERTIES_CASES.items(), strict=True):
        assert parse_properties(text) == java_view[name], case


def test_properties_duplicate_key_is_logged_with_both_lines(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING):
        parse_properties("a=1\nb=2\na=3\n", source="w.properties")
    assert "w.properties: key 'a' on line 3 overrides line 1" in caplog.text


def test_properties_malformed_unicode_escape_names_the_file_and_line() -> None:
    with pytest.raises(ConfigError, match=r"^bad.properties, line 3: malformed \\uXXXX escape "
                                          r"'\\\\u12g4'"):
        parse_properties("a=1\n\nb=x\\u12g4\n", source="bad.properties")
    with pytest.raises(ConfigError, match="line 1: malformed"):
        parse_properties("a=\\u12", source="bad.properties")


def test_properties_empty_key_names_the_line() -> None:
    with pytest.raises(ConfigError, match=r"^p, line 2: a setting has no key \('=value'\); "
                                          "write key=value"):
        parse_properties("ok=1\n=value\n", source="p")


def test_properties_lines_record_where_each_key_is_set() -> None:
    lines: dict[str, int] = {}
    parse_properties("# c\na=1\nb = x\\\n  y\nc=3\n", lines=lines)
    assert lines == {"a": 2, "b": 3, "c": 5}


# -- the Kafka Connect example files -----------------------------------------------------


def test_kafka_connects_file_source_example_loads_unchanged() -> None:
    assert load_config_file(EXAMPLES / "connect-file-source.properties") == {
        "name": "local-file-source",
        "connector.class": "FileStreamSource",
        "tasks.max": "1",
        "file": "test.txt",
        "topic": "connect-test",
    }


def test_kafka_connects_file_sink_example_loads_unchanged() -> None:
    assert load_config_file(EXAMPLES / "connect-file-sink.properties") == {
        "name": "local-file-sink",
        "connector.class": "FileStreamSink",
        "tasks.max": "1",
        "file": "test.sink.txt",
        "topics": "connect-test",
    }


# -- YAML and JSON -----------------------------------------------------------------------


def test_yaml_flattens_nested_mappings_keeps_lists_and_types(tmp_path: Path) -> None:
    path = _write(tmp_path, "c.yaml", """
        name: orders
        tasks.max: 2
        key:
          converter: json
          converter.schemas.enable: false
        value:
          converter:
            schemas:
              enable: true
        topics: [a, b]
        transforms:
          - {type: InsertField}
        ratio: 0.5
        empty: {}
        nothing:
    """)
    assert load_config_file(path) == {
        "name": "orders",
        "tasks.max": 2,
        "key.converter": "json",
        "key.converter.schemas.enable": False,
        "value.converter.schemas.enable": True,
        "topics": ["a", "b"],
        "transforms": [{"type": "InsertField"}],
        "ratio": 0.5,
        "nothing": None,
    }


def test_json_flattens_the_same_way(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"name": "orders", "key": {"converter": "json"},
                                "topics": ["a", "b"], "tasks.max": 2}))
    assert load_config_file(path) == {"name": "orders", "key.converter": "json",
                                      "topics": ["a", "b"], "tasks.max": 2}


def test_the_three_formats_give_the_same_settings_after_parsing(tmp_path: Path) -> None:
    definition = (ConfigDef().define("name", ConfigType.STRING)
                  .define("tasks.max", ConfigType.INT, 1)
                  .define("topics", ConfigType.LIST)
                  .define("key.converter", ConfigType.STRING))
    files = [
        _write(tmp_path, "c.properties", "name=o\ntasks.max=3\ntopics=a,b\nkey.converter=json\n"),
        _write(tmp_path, "c.yaml", "name: o\ntasks.max: 3\ntopics: [a, b]\nkey:\n"
                                   "  converter: json\n"),
        _write(tmp_path, "c.json", '{"name": "o", "tasks": {"max": "3"}, "topics": "a,b",'
                                   ' "key.converter": "json"}'),
    ]
    parsed = [definition.parse(load_config_file(f)) for f in files]
    assert parsed[0] == parsed[1] == parsed[2] == {
        "name": "o", "tasks.max": 3, "topics": ["a", "b"], "key.converter": "json"}


def test_yaml_anchors_and_merge_keys_work(tmp_path: Path) -> None:
    path = _write(tmp_path, "c.yml", """
        base: &base
          retries: 3
          timeout.ms: 100
        kafka:
          <<: *base
          timeout.ms: 500
    """)
    config = load_config_file(path)
    assert config["kafka.retries"] == 3
    assert config["kafka.timeout.ms"] == 500


def test_yaml_duplicate_key_names_both_lines(tmp_path: Path) -> None:
    path = _write(tmp_path, "dup.yaml", "a: 1\nnested:\n  b: 1\n  b: 2\n")
    with pytest.raises(ConfigError, match=r"dup.yaml, line 4: key 'b' is set twice \(first on "
                                          r"line 3\); keep one"):
        load_config_file(path)


def test_yaml_syntax_error_names_the_line(tmp_path: Path) -> None:
    path = _write(tmp_path, "bad.yaml", "a: 1\nb: [unclosed\nc: 3\n")
    with pytest.raises(ConfigError, match=r"bad.yaml, line \d: invalid YAML: "):
        load_config_file(path)


def test_yaml_boolean_keys_are_refused_with_a_hint(tmp_path: Path) -> None:
    path = _write(tmp_path, "bool.yaml", "features:\n  on: true\n")
    with pytest.raises(ConfigError, match=r"bool.yaml, line 2: key True under 'features' is a "
                                          r"bool, not a name; quote it"):
        load_config_file(path)


def test_a_nested_and_a_dotted_spelling_of_one_key_conflict(tmp_path: Path) -> None:
    path = _write(tmp_path, "both.yaml", "key:\n  converter: json\nkey.converter: string\n")
    with pytest.raises(ConfigError, match=r"both.yaml, line 3: key 'key.converter' is set "
                                          r"twice \(once nested, once dotted\)"):
        load_config_file(path)


@pytest.mark.parametrize(("name", "text", "kind"),
                         [("l.yaml", "- a\n- b\n", "list"), ("s.json", '"text"', "str"),
                          ("n.json", "3", "int")])
def test_the_top_level_must_be_a_mapping(tmp_path: Path, name: str, text: str,
                                         kind: str) -> None:
    path = _write(tmp_path, name, text)
    with pytest.raises(ConfigError, match=f"{name}: the top level must be a mapping of "
                                          f"settings \\(key: value\\), not a {kind}"):
        load_config_file(path)


def test_an_empty_yaml_file_has_no_settings(tmp_path: Path) -> None:
    assert load_config_file(_write(tmp_path, "empty.yaml", "# nothing yet\n")) == {}


def test_json_syntax_error_names_line_and_column(tmp_path: Path) -> None:
    path = _write(tmp_path, "bad.json", '{\n  "a": 1,\n  "b": \n}\n')
    with pytest.raises(ConfigError, match=r"bad.json, line 4, column 1: invalid JSON: "):
        load_config_file(path)


def test_json_duplicate_key_is_refused(tmp_path: Path) -> None:
    path = _write(tmp_path, "dup.json", '{"a": {"b": 1, "b": 2}}')
    with pytest.raises(ConfigError, match=r"dup.json: key 'b' is set twice in one object"):
        load_config_file(path)


def test_flatten_is_usable_on_its_own() -> None:
    assert flatten({"a": {"b": {"c": 1}}, "d": [{"e": {"f": 2}}]}) == {
        "a.b.c": 1, "d": [{"e": {"f": 2}}]}
    assert flatten({1: "numeric keys become names"}) == {"1": "numeric keys become names"}


# -- reading files -----------------------------------------------------------------------


@pytest.mark.parametrize(("name", "format_"),
                         [("a.properties", "properties"), ("a.YAML", "yaml"),
                          ("a.yml", "yaml"), ("a.json", "json")])
def test_the_format_follows_the_extension(name: str, format_: str) -> None:
    assert config_format(name) == format_


def test_an_unknown_extension_lists_the_supported_ones() -> None:
    with pytest.raises(ConfigError, match=r"c.toml: cannot tell the config format from the "
                                          r"extension '.toml'; name the file with one of: "
                                          r".json, .properties, .yaml, .yml"):
        load_config_file("c.toml")


def test_format_can_be_given_for_an_unusual_extension(tmp_path: Path) -> None:
    path = _write(tmp_path, "connector.conf", "a=1\n")
    assert load_config_file(path, format="properties") == {"a": "1"}


def test_a_missing_file_names_the_path(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"nope.properties: config file not found"):
        load_config_file(tmp_path / "nope.properties")


def test_a_file_that_is_not_utf8_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "latin1.properties"
    path.write_bytes("a=1\nb=caf\u00e9\n".encode("latin-1"))
    with pytest.raises(ConfigError, match=r"latin1.properties, line 2: not valid UTF-8 "
                                          r"\(byte 0xe9\); save the file as UTF-8"):
        load_config_file(path)


def test_a_utf8_byte_order_mark_is_ignored(tmp_path: Path) -> None:
    path = tmp_path / "bom.properties"
    path.write_bytes(b"\xef\xbb\xbfname=x\n")
    assert load_config_file(path) == {"name": "x"}


def test_parse_config_refuses_an_unknown_format() -> None:
    with pytest.raises(ConfigError, match="unknown config format 'toml'"):
        parse_config("", format="toml")


# -- ${env:...} and ${file:...} ------------------------------------------------------------

ENV = {"DB_PASSWORD": "pa55", "DB_HOST": "db.local", "EMPTY": ""}


def test_env_references_are_resolved_when_a_file_is_loaded(tmp_path: Path) -> None:
    path = _write(tmp_path, "c.properties", """
        connection.password=${env:DB_PASSWORD}
        connection.url=jdbc:postgresql://${env:DB_HOST}:5432/orders
        hosts=${env:DB_HOST},${env:DB_HOST}
        plain=no references here
    """)
    config = load_config_file(path, environ=ENV)
    assert config == {"connection.password": "pa55",
                      "connection.url": "jdbc:postgresql://db.local:5432/orders",
                      "hosts": "db.local,db.local", "plain": "no references here"}


def test_env_defaults_apply_when_unset_or_empty() -> None:
    config = resolve_config({"a": "${env:UNSET:-fallback}", "b": "${env:EMPTY:-fallback}",
                             "c": "${env:DB_HOST:-fallback}", "d": "${env:UNSET:-}"},
                            environ=ENV)
    assert config == {"a": "fallback", "b": "fallback", "c": "db.local", "d": ""}


def test_an_unset_variable_names_the_key_the_reference_and_the_fix(tmp_path: Path) -> None:
    path = _write(tmp_path, "c.properties", "name=x\n\npassword=${env:NOT_SET_ANYWHERE}\n")
    with pytest.raises(ConfigError) as caught:
        load_config_file(path, environ=ENV)
    error = caught.value
    assert error.context["key"] == "password"
    assert str(error).startswith(f"invalid references in {path} (1 error):\n  password: "
                                 "cannot resolve ${env:NOT_SET_ANYWHERE}: environment variable "
                                 "NOT_SET_ANYWHERE is not set; set it, or give a default with "
                                 "${env:NOT_SET_ANYWHERE:-default} (line 3)")


def test_every_unresolvable_reference_is_reported_at_once() -> None:
    with pytest.raises(ConfigError) as caught:
        resolve_config({"a": "${env:X1}", "b": "ok", "c": "${env:X2}-${vault:secret/db}"},
                       environ={}, source="c.yaml")
    error = caught.value
    assert set(error.errors) == {"a", "c"}
    assert len(error.errors["c"]) == 2
    assert "invalid references in c.yaml (3 errors)" in str(error)
    assert ("cannot resolve ${vault:secret/db}: unknown config provider 'vault'; known "
            "providers: env, file") in str(error)


def test_an_unknown_provider_gets_a_did_you_mean() -> None:
    with pytest.raises(ConfigError, match="unknown config provider 'evn'; did you mean 'env'"):
        resolve_config({"a": "${evn:HOME}"}, environ={})


def test_file_references_read_a_properties_file_relative_to_the_config(tmp_path: Path) -> None:
    secrets = tmp_path / "secrets"
    secrets.mkdir()
    _write(secrets, "db.properties", "password = s3cret\nuser : app\n")
    path = _write(tmp_path, "c.properties",
                  "connection.password=${file:secrets/db.properties:password}\n"
                  "connection.user=${file:" + str(secrets / "db.properties") + ":user}\n")
    assert load_config_file(path) == {"connection.password": "s3cret",
                                      "connection.user": "app"}


def test_file_references_read_yaml_and_json_files_with_dotted_keys(tmp_path: Path) -> None:
    _write(tmp_path, "s.yaml", "db:\n  password: from-yaml\n  port: 5432\n")
    _write(tmp_path, "s.json", '{"api": {"token": "from-json"}}')
    config = resolve_config({"a": "${file:s.yaml:db.password}", "b": "${file:s.yaml:db.port}",
                             "c": "${file:s.json:api.token}"}, base_dir=tmp_path)
    assert config == {"a": "from-yaml", "b": "5432", "c": "from-json"}


def test_a_file_path_may_contain_colons_the_key_follows_the_last_one(tmp_path: Path) -> None:
    odd = tmp_path / "dir:with:colons"
    odd.mkdir()
    _write(odd, "secrets", "key=found\n")  # no extension: read as properties
    config = resolve_config({"k": f"${{file:{odd / 'secrets'}:key}}"})
    assert config == {"k": "found"}


def test_a_missing_file_or_key_is_reported(tmp_path: Path) -> None:
    _write(tmp_path, "s.properties", "password=x\n")
    with pytest.raises(ConfigError) as caught:
        resolve_config({"a": "${file:nope.properties:password}",
                        "b": "${file:s.properties:pasword}", "c": "${file:s.properties}"},
                       base_dir=tmp_path)
    errors = caught.value.errors
    assert "nope.properties: config file not found" in errors["a"][0]
    assert errors["b"][0] == (f"cannot resolve ${{file:s.properties:pasword}}: key 'pasword' is "
                              f"not in {tmp_path / 's.properties'}; did you mean 'password'?")
    assert "write ${file:path:key}" in errors["c"][0]


def test_dollar_dollar_writes_a_literal_reference_and_other_dollars_are_left_alone() -> None:
    config = resolve_config({"literal": "$${env:HOME}", "router": "${topic}-${timestamp}",
                             "price": "$5", "mixed": "$${env:A} and ${env:DB_HOST}"},
                            environ=ENV)
    assert config == {"literal": "${env:HOME}", "router": "${topic}-${timestamp}",
                      "price": "$5", "mixed": "${env:A} and db.local"}


def test_resolved_values_are_not_resolved_again() -> None:
    config = resolve_config({"a": "${env:TRICKY}"}, environ={"TRICKY": "${env:DB_HOST}"})
    assert config == {"a": "${env:DB_HOST}"}


def test_references_inside_lists_are_resolved_other_types_pass_through() -> None:
    config = resolve_config({"hosts": ["${env:DB_HOST}", "other"], "n": 3, "flag": True},
                            environ=ENV)
    assert config == {"hosts": ["db.local", "other"], "n": 3, "flag": True}


def test_has_references() -> None:
    assert has_references("x ${env:A} y")
    assert has_references(["a", "${file:p:k}"])
    assert not has_references("$${env:A}")
    assert not has_references("${topic}")
    assert not has_references(5)


def test_loading_without_resolving_keeps_the_references(tmp_path: Path) -> None:
    path = _write(tmp_path, "c.properties", "password=${env:NOT_SET}\n")
    assert load_config_file(path, resolve=False) == {"password": "${env:NOT_SET}"}


# -- secrets stay secret -----------------------------------------------------------------


def _resolved() -> ResolvedConfig:
    return resolve_config(
        {"connection.password": "${env:DB_PASSWORD}", "connection.url": "${env:DB_HOST}:1",
         "topic": "orders", "api.token": "literal-token"},
        environ=ENV,
    )


def test_resolved_config_is_a_dict_of_the_resolved_values() -> None:
    config = _resolved()
    assert isinstance(config, dict)
    assert config["connection.password"] == "pa55"
    assert config == {"connection.password": "pa55", "connection.url": "db.local:1",
                      "topic": "orders", "api.token": "literal-token"}


def test_resolved_config_repr_masks_secrets_and_shows_references() -> None:
    shown = repr(_resolved())
    assert "pa55" not in shown and "literal-token" not in shown
    assert "db.local" not in shown  # resolved from a provider: shown as its reference
    assert "'connection.url': '${env:DB_HOST}:1'" in shown
    assert "'connection.password': '[hidden]'" in shown
    assert str(_resolved()) == shown
    assert f"{_resolved()}" == shown


def test_resolved_secrets_do_not_reach_the_logs(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO):
        logging.getLogger("omconnect.test").info("config: %s", _resolved())
    assert "pa55" not in caplog.text
    assert "[hidden]" in caplog.text


def test_resolved_config_masked_honours_password_types() -> None:
    definition = ConfigDef().define("topic", ConfigType.PASSWORD)
    assert _resolved().masked(definition)["topic"] == "[hidden]"


def test_resolved_config_survives_pickling_with_its_references() -> None:
    copy = pickle.loads(pickle.dumps(_resolved()))
    assert isinstance(copy, ResolvedConfig)
    assert copy == _resolved()
    assert copy.references == {"connection.password": "${env:DB_PASSWORD}",
                               "connection.url": "${env:DB_HOST}:1"}


def test_a_password_key_resolved_from_env_parses_to_a_password() -> None:
    definition = ConfigDef().define("connection.password", ConfigType.PASSWORD)
    value = definition.parse(_resolved())["connection.password"]
    assert isinstance(value, Password)
    assert value.value() == "pa55"
