"""Configuration: ConfigDef, value types, validators, and config files."""

from omconnect.config.definition import NO_DEFAULT, ConfigDef, ConfigKey
from omconnect.config.files import load_config_file, parse_config
from omconnect.config.properties import parse_properties
from omconnect.config.providers import ResolvedConfig, resolve_config
from omconnect.config.types import ConfigType, Importance, Password
from omconnect.config.validators import NonEmptyString, OneOf, Range, Regex, Validator, ValidList

__all__ = [
    "NO_DEFAULT",
    "ConfigDef",
    "ConfigKey",
    "ConfigType",
    "Importance",
    "NonEmptyString",
    "OneOf",
    "Password",
    "Range",
    "Regex",
    "ResolvedConfig",
    "ValidList",
    "Validator",
    "load_config_file",
    "parse_config",
    "parse_properties",
    "resolve_config",
]
