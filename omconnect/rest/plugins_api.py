"""``/connector-plugins``: the installed plugins, a connector's config definitions, and
validation of a connector config.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Query

from omconnect.config.types import Password
from omconnect.errors import ConfigError
from omconnect.rest.dependencies import Herder, error_responses, require_json
from omconnect.rest.errors import ApiError
from omconnect.rest.masking import masked_config, scrub, scrubbing
from omconnect.rest.models import ConfigBody, ConfigInfos, ConfigKeyInfo, PluginOut
from omconnect.runtime.connector_config import key_definition, load_connector_class

__all__ = ["router"]

router = APIRouter(tags=["plugins"])


@router.get("/connector-plugins", operation_id="listConnectorPlugins",
            response_model=list[PluginOut], response_model_exclude_unset=True,
            responses=error_responses(400))
def list_plugins(
    herder: Herder,
    connectors_only: Annotated[bool, Query(alias="connectorsOnly", description=(
        "Only connectors (default); false adds transports, converters, transforms and "
        "predicates."))] = True,
) -> Any:
    """List the installed plugins.

    Each with class, type (source/sink for connectors) and version; one that cannot be
    loaded (e.g. its extra is missing) says why in ``problem``.
    """
    return [plugin.to_dict() for plugin in
            herder.plugins(["connector"] if connectors_only else None)]


@router.get("/connector-plugins/{plugin}/config", operation_id="getConnectorPluginConfig",
            response_model=list[ConfigKeyInfo], responses=error_responses(404))
def plugin_config(
    plugin: Annotated[str, Path(description="The connector: entry-point name, Kafka "
                                "Connect short name or Python path.")],
) -> Any:
    """Get a connector plugin's config definitions.

    The keys the connector itself declares (its ``config_def()``), in Kafka Connect's
    ``ConfigKeyInfo`` shape (KIP-769); the runtime's common keys are in the validation
    response.
    """
    try:
        connector_class = load_connector_class(plugin)
    except ConfigError as exc:
        raise ApiError(404, f"no connector plugin {plugin!r}: {exc.message}") from exc
    return [key_definition(key, order)
            for order, key in enumerate(connector_class().config_def())]


@router.put("/connector-plugins/{plugin}/config/validate",
            operation_id="validateConnectorConfig", response_model=ConfigInfos,
            dependencies=[Depends(require_json)], responses=error_responses(400, 404, 415))
def validate_config(
    plugin: Annotated[str, Path(description="The connector: entry-point name, Kafka "
                                "Connect short name or Python path.")],
    config: ConfigBody,
    herder: Herder,
) -> Any:
    """Validate a connector config.

    Nothing is created. Every key's definition, value (secrets masked) and problems, in
    Kafka Connect's shape; an invalid config is a 200 with ``error_count`` > 0.
    """
    try:
        wanted = load_connector_class(plugin)
    except ConfigError as exc:
        raise ApiError(404, f"no connector plugin {plugin!r}: {exc.message}") from exc
    config = dict(config)
    given = config.get("connector.class")
    if given is None or not str(given).strip():
        config["connector.class"] = plugin
    else:
        try:
            same = load_connector_class(str(given).strip()) is wanted
        except ConfigError:
            same = False
        if not same:
            raise ApiError(400, f"connector.class {given!r} in the config does not name the "
                           f"connector in the path ({plugin!r}); make them match",
                           errors={"connector.class": ["does not match the path"]})
    with scrubbing(config) as secrets:
        result = herder.validate_connector_config(config).to_dict()
    shown = masked_config({item["value"]["name"]: item["value"]["value"]
                           for item in result["configs"]}, config)
    for item in result["configs"]:
        value = item["value"]
        if shown.get(value["name"]) == Password.MASK:
            value["value"] = Password.MASK
        value["errors"] = [scrub(message, secrets) for message in value["errors"]]
    return result
