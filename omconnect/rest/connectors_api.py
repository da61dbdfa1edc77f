"""``/connectors``: create, read, change, pause/resume/stop/restart and delete connectors,
their tasks and offsets.

Kafka Connect's endpoints with its status codes and JSON shapes, plus OpenMessaging
Connect's ``POST /connectors/{name}`` (create with the config as the body). Every change
to one connector holds that connector's lock (:mod:`omconnect.rest.locks`); every
config shown has its secrets masked (:mod:`omconnect.rest.masking`). Configs are stored
and shown as written: ``${env:...}``/``${file:...}`` references are resolved by the
worker when it validates or starts a connector, never returned resolved.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal
from urllib.parse import quote

from fastapi import APIRouter, Depends, Path, Query, Response

from omconnect.errors import ConfigError, ConnectError
from omconnect.rest.dependencies import Herder, Locks, error_responses, require_json
from omconnect.rest.masking import masked_config, masked_task_config, scrubbing
from omconnect.rest.models import (
    ActiveTopicsOut,
    ConfigBody,
    ConnectorInfoOut,
    ConnectorStatusOut,
    CreateConnectorRequest,
    ExpandedConnector,
    MessageOut,
    OffsetsBody,
    OffsetsPatch,
    TaskInfoOut,
    TaskStateOut,
)
from omconnect.runtime.status import ConnectorInfo

__all__ = ["router"]

router = APIRouter()

Name = Annotated[str, Path(description="The connector's name.")]
TaskNumber = Annotated[int, Path(description="The task's number (0, 1, ...).")]
JSON_BODY = [Depends(require_json)]


def info_dict(info: ConnectorInfo) -> dict[str, Any]:
    """A connector's info in Kafka Connect's shape, its secrets masked."""
    data = info.to_dict(masked=False)
    data["config"] = masked_config(data["config"], info.config)
    return data


def _with_name(config: dict[str, Any], name: str) -> dict[str, Any]:
    given = config.get("name")
    if given is not None and str(given).strip() != name.strip():
        raise ConfigError(f"the config's name {given!r} does not match the connector's "
                          f"name {name!r}; remove name from the config or make it match",
                          key="name")
    return {**config, "name": name}


def _created(response: Response, info: ConnectorInfo) -> dict[str, Any]:
    response.headers["Location"] = f"/connectors/{quote(info.name, safe='')}"
    return info_dict(info)


# -- the collection --------------------------------------------------------------------


@router.get("/connectors", operation_id="listConnectors", tags=["connectors"],
            response_model=list[str] | dict[str, ExpandedConnector],
            response_model_exclude_unset=True, responses=error_responses(400))
def list_connectors(
    herder: Herder,
    expand: Annotated[list[Literal["status", "info"]], Query(
        description="Also return each connector's `status` and/or `info`; the answer is "
        "then an object by name.")] = [],  # noqa: B006 (FastAPI copies defaults)
) -> Any:
    """List connectors.

    The names of every connector; with ``expand``, an object by name with each one's
    status and/or info.
    """
    names = herder.connectors()
    if not expand:
        return names
    expanded: dict[str, dict[str, Any]] = {}
    for name in names:
        try:
            entry: dict[str, Any] = {}
            if "status" in expand:
                entry["status"] = herder.connector_status(name).to_dict()
            if "info" in expand:
                entry["info"] = info_dict(herder.connector_info(name))
        except ConnectError:
            continue  # deleted meanwhile
        expanded[name] = entry
    return expanded


@router.post("/connectors", operation_id="createConnector", tags=["connectors"],
             status_code=201, response_model=ConnectorInfoOut, dependencies=JSON_BODY,
             responses=error_responses(400, 409, 415))
def create_connector(body: CreateConnectorRequest, herder: Herder, locks: Locks,
                     response: Response) -> Any:
    """Create a connector.

    Kafka Connect's request; the connector starts at once in ``initial_state``
    (default RUNNING). 409 when the name is in use.
    """
    config = _with_name(dict(body.config), body.name)
    with locks.hold(body.name.strip()), scrubbing(config):
        info = herder.create_connector(config, initial_state=body.initial_state or "RUNNING")
    return _created(response, info)


# -- one connector -----------------------------------------------------------------------


@router.post("/connectors/{name}", operation_id="createNamedConnector", tags=["connectors"],
             status_code=201, response_model=ConnectorInfoOut, dependencies=JSON_BODY,
             responses=error_responses(400, 409, 415))
def create_named_connector(name: Name, config: ConfigBody, herder: Herder, locks: Locks,
                           response: Response) -> Any:
    """Create a connector named in the path.

    OpenMessaging Connect's request: the body is the config. 409 when the name is in use.
    """
    config = _with_name(dict(config), name)
    with locks.hold(name.strip()), scrubbing(config):
        info = herder.create_connector(config)
    return _created(response, info)


@router.get("/connectors/{name}", operation_id="getConnector", tags=["connectors"],
            response_model=ConnectorInfoOut, responses=error_responses(404))
def get_connector(name: Name, herder: Herder) -> Any:
    """Get a connector.

    Its config (secrets masked), task ids and type.
    """
    return info_dict(herder.connector_info(name))


@router.delete("/connectors/{name}", operation_id="deleteConnector", tags=["connectors"],
               status_code=204, response_class=Response, responses=error_responses(404))
def delete_connector(name: Name, herder: Herder, locks: Locks) -> Response:
    """Delete a connector.

    Stops it and its tasks; its offsets are kept.
    """
    with locks.hold(name):
        herder.delete_connector(name)
    return Response(status_code=204)


@router.get("/connectors/{name}/config", operation_id="getConnectorConfig",
            tags=["connectors"], response_model=dict[str, str | None],
            responses=error_responses(404))
def get_config(name: Name, herder: Herder) -> Any:
    """Get a connector's config (secrets masked)."""
    config: dict[str, Any] = info_dict(herder.connector_info(name))["config"]
    return config


@router.put("/connectors/{name}/config", operation_id="putConnectorConfig",
            tags=["connectors"], response_model=ConnectorInfoOut, dependencies=JSON_BODY,
            responses={201: {"model": ConnectorInfoOut, "description": "Created."},
                       **error_responses(400, 415)})
def put_config(name: Name, config: ConfigBody, herder: Herder, locks: Locks,
               response: Response) -> Any:
    """Create or replace a connector's config.

    Creates the connector (201), or replaces its config and restarts it in its current
    target state (200).
    """
    config = _with_name(dict(config), name)
    with locks.hold(name), scrubbing(config):
        info, created = herder.put_connector_config(name, config)
    if created:
        response.status_code = 201
        return _created(response, info)
    return info_dict(info)


@router.patch("/connectors/{name}/config", operation_id="patchConnectorConfig",
              tags=["connectors"], response_model=ConnectorInfoOut, dependencies=JSON_BODY,
              responses=error_responses(400, 404, 415))
def patch_config(name: Name, patch: ConfigBody, herder: Herder, locks: Locks) -> Any:
    """Change some keys of a connector's config.

    A ``null`` value removes the key; the connector restarts with the result.
    """
    with locks.hold(name):
        with scrubbing(patch):
            current = herder.connector_config(name)
        merged = {**current, **{k: v for k, v in patch.items() if v is not None}}
        with scrubbing(current, merged):  # the patch's keys are secret as the connector says
            info = herder.patch_connector_config(name, dict(patch))
    return info_dict(info)


@router.get("/connectors/{name}/status", operation_id="getConnectorStatus",
            tags=["connectors"], response_model=ConnectorStatusOut,
            response_model_exclude_unset=True, responses=error_responses(404))
def get_status(name: Name, herder: Herder) -> Any:
    """Get a connector's status.

    Its state and its tasks' states, with the trace of a failure.
    """
    return herder.connector_status(name).to_dict()


@router.put("/connectors/{name}/pause", operation_id="pauseConnector", tags=["connectors"],
            status_code=202, response_class=Response, responses=error_responses(404, 409))
def pause(name: Name, herder: Herder, locks: Locks) -> Response:
    """Pause a connector.

    Sources stop polling, sinks stop consuming (state PAUSED). 409 when it is stopped.
    """
    with locks.hold(name):
        herder.pause_connector(name)
    return Response(status_code=202)


@router.put("/connectors/{name}/resume", operation_id="resumeConnector",
            tags=["connectors"], status_code=202, response_class=Response,
            responses=error_responses(404))
def resume(name: Name, herder: Herder, locks: Locks) -> Response:
    """Resume a connector.

    Resumes a paused connector, or starts a stopped one.
    """
    with locks.hold(name):
        herder.resume_connector(name)
    return Response(status_code=202)


@router.put("/connectors/{name}/stop", operation_id="stopConnector", tags=["connectors"],
            status_code=204, response_class=Response, responses=error_responses(404))
def stop(name: Name, herder: Herder, locks: Locks) -> Response:
    """Stop a connector.

    Stops it and its tasks, keeping its config (state STOPPED); its offsets can then be
    changed.
    """
    with locks.hold(name):
        herder.stop_connector(name)
    return Response(status_code=204)


@router.post("/connectors/{name}/restart", operation_id="restartConnector",
             tags=["connectors"], status_code=202, response_model=ConnectorStatusOut,
             response_model_exclude_unset=True,
             responses={202: {"description": "Restarted (with tasks); the status after."},
                        204: {"description": "The connector alone was restarted."},
                        **error_responses(400, 404, 409)})
def restart(
    name: Name, herder: Herder, locks: Locks,
    include_tasks: Annotated[bool, Query(alias="includeTasks", description=(
        "Restart its tasks too."))] = False,
    only_failed: Annotated[bool, Query(alias="onlyFailed", description=(
        "Restart only what is FAILED."))] = False,
) -> Any:
    """Restart a connector.

    Kafka Connect's semantics: 204 when the connector alone was restarted; 202 with the
    status after the restart when ``includeTasks`` or ``onlyFailed`` is given. 409 when
    it is stopped.
    """
    with locks.hold(name):
        status = herder.restart_connector(name, include_tasks=include_tasks,
                                          only_failed=only_failed)
    if not include_tasks and not only_failed:
        return Response(status_code=204)
    return status.to_dict()


# -- tasks --------------------------------------------------------------------------------


@router.get("/connectors/{name}/tasks", operation_id="getConnectorTasks", tags=["tasks"],
            response_model=list[TaskInfoOut], responses=error_responses(404))
def get_tasks(name: Name, herder: Herder) -> Any:
    """Get the configs of a connector's tasks (secrets masked)."""
    config = herder.connector_config(name)
    result = []
    for task in herder.task_configs(name):
        data = task.to_dict(masked=False)
        data["config"] = masked_task_config(data["config"], config)
        result.append(data)
    return result


@router.get("/connectors/{name}/tasks/{task}/status", operation_id="getTaskStatus",
            tags=["tasks"], response_model=TaskStateOut, response_model_exclude_unset=True,
            responses=error_responses(400, 404))
def get_task_status(name: Name, task: TaskNumber, herder: Herder) -> Any:
    """Get a task's status.

    Its state, with the trace of a failure.
    """
    return herder.task_status(name, task).to_dict()


@router.post("/connectors/{name}/tasks/{task}/restart", operation_id="restartTask",
             tags=["tasks"], status_code=204, response_class=Response,
             responses=error_responses(400, 404, 409))
def restart_task(name: Name, task: TaskNumber, herder: Herder, locks: Locks) -> Response:
    """Restart a task.

    409 when the connector is stopped.
    """
    with locks.hold(name):
        herder.restart_task(name, task)
    return Response(status_code=204)


# -- active topics (KIP-558) -----------------------------------------------------------------


@router.get("/connectors/{name}/topics", operation_id="getConnectorActiveTopics",
            tags=["topics"], response_model=dict[str, ActiveTopicsOut],
            responses=error_responses(403, 404))
def get_active_topics(name: Name, herder: Herder) -> Any:
    """Get a connector's active topics.

    The topics its tasks produced to (source) or consumed from (sink) since it was
    created or its active topics were last reset, as ``{"<name>": {"topics": [...]}}``.
    403 when the worker has ``topic.tracking.enable=false``.
    """
    return {name: {"topics": herder.active_topics(name)}}


@router.put("/connectors/{name}/topics/reset", operation_id="resetConnectorActiveTopics",
            tags=["topics"], response_class=Response,
            responses={200: {"description": "The active topics were reset (empty body)."},
                       **error_responses(403, 404)})
def reset_active_topics(name: Name, herder: Herder) -> Response:
    """Reset a connector's active topics.

    Its tasks record them again as they produce or consume. 403 when the worker has
    ``topic.tracking.enable=false`` or ``topic.tracking.allow.reset=false``.
    """
    herder.reset_active_topics(name)
    return Response(status_code=200)


# -- offsets ---------------------------------------------------------------------------------


@router.get("/connectors/{name}/offsets", operation_id="getConnectorOffsets",
            tags=["offsets"], response_model=OffsetsBody, responses=error_responses(404))
def get_offsets(name: Name, herder: Herder) -> Any:
    """Get a connector's offsets.

    The committed offsets: for a source per source partition; for a sink its consumer
    group's position per topic partition, in Kafka Connect's names.
    """
    return herder.offsets(name).to_dict()


@router.patch("/connectors/{name}/offsets", operation_id="alterConnectorOffsets",
              tags=["offsets"], response_model=MessageOut, dependencies=JSON_BODY,
              responses=error_responses(400, 404, 409, 415))
def alter_offsets(name: Name, body: OffsetsPatch, herder: Herder, locks: Locks) -> Any:
    """Alter a stopped connector's offsets.

    Sets the given offsets (at least one; to reset them all, use DELETE); an entry with a
    null offset resets that partition. 409 unless
    the connector is STOPPED; 400 naming the entry and field when an entry is malformed
    (sinks: Kafka Connect's `kafka_topic`/`kafka_partition`/`kafka_offset` rules) or the
    connector's own check refuses it (e.g. a negative file `position`).
    """
    entries = [entry.model_dump() for entry in body.offsets]
    with locks.hold(name):
        handled = herder.alter_offsets(name, entries)
    return {"message": _done("altered", handled)}


@router.delete("/connectors/{name}/offsets", operation_id="resetConnectorOffsets",
               tags=["offsets"], response_model=MessageOut,
               responses=error_responses(404, 409))
def reset_offsets(name: Name, herder: Herder, locks: Locks) -> Any:
    """Reset a stopped connector's offsets.

    Forgets every offset: a source starts over, a sink reads from the earliest message
    kept. 409 unless the connector is STOPPED.
    """
    with locks.hold(name):
        handled = herder.reset_offsets(name)
    return {"message": _done("reset", handled)}


def _done(change: str, handled: bool) -> str:
    """Kafka Connect's confirmation: a connector that did not confirm it handled the
    change may keep offsets elsewhere that need the same change.
    """
    if handled:
        return f"The offsets for this connector have been {change} successfully"
    return (f"The Connect framework-managed offsets for this connector have been {change} "
            f"successfully. However, if this connector manages offsets externally, they "
            f"will need to be manually {change} in the system that the connector uses.")
