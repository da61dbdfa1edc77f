"""Configuration: ConfigDef, value types, validators, and config files."""

from omconnect.config.definition import NO_DEFAULT, ConfigDef, ConfigKey
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
    "ValidList",
    "Validator",
]
