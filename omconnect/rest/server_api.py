"""``GET /`` (what is serving), ``GET /health`` (for probes), ``GET /metrics``
(Prometheus text format), ``GET /summary`` and the dashboard ``GET /ui``.
"""

from __future__ import annotations

import functools
import json
from importlib import resources
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import unquote, urlparse

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse, JSONResponse, PlainTextResponse

from omconnect import __version__
from omconnect.rest.dependencies import Herder
from omconnect.rest.models import ClusterOut, ServerInfo, SummaryOut, WorkerHealth
from omconnect.rest.prometheus import CONTENT_TYPE, render_metrics
from omconnect.rest.summary import summary as worker_summary
from omconnect.runtime.herder_api import Herder as RuntimeHerder

__all__ = ["HEALTH_TIMEOUT_S", "router", "server_info"]

HEALTH_TIMEOUT_S = 10.0
"""How long ``GET /health`` waits for the herder before answering 503 (Kafka Connect's
``rest.health.check.timeout`` default, KIP-1017, is 10 s too)."""

router = APIRouter(tags=["server"])


def server_info(herder: RuntimeHerder) -> dict[str, Any]:
    """``GET /``'s answer: version, source commit, cluster id, worker id, transport,
    mode and (in a cluster) its ``group.id``.
    """
    transport = herder.config.transport_name
    info = {"version": __version__, "commit": source_commit(),
            "kafka_cluster_id": f"{transport}:{herder.config['config.storage.namespace']}",
            "worker_id": herder.worker_id, "transport": transport,
            "mode": "distributed" if herder.config.distributed else "standalone"}
    if herder.config.distributed:
        info["group_id"] = herder.config["group.id"]
    return info


@router.get("/", operation_id="serverInfo", response_model=ServerInfo)
def root(request: Request) -> Any:
    """Get the server's version.

    The omconnect version and commit serving, the cluster id (what workers sharing
    connectors have in common), the worker id and transport.
    """
    return request.app.state.server_info


@router.get("/workers", operation_id="listWorkers", response_model=ClusterOut)
def workers(herder: Herder) -> Any:
    """List the cluster's workers.

    Every worker of the cluster (alive, or departed with work waiting for it), which one
    leads, what each runs, and its rebalance metrics; a standalone worker is a cluster
    of its own.
    """
    return herder.cluster().to_dict()


@router.get("/health", operation_id="health", response_model=WorkerHealth,
            responses={503: {"model": WorkerHealth,
                             "description": "The worker is starting (or stopped), or its "
                             "herder did not answer in time (status `unhealthy`)."}})
def health(herder: Herder) -> Any:
    """Get the worker's health, for load balancers and liveness/readiness probes.

    200 once the worker has started and its herder answers; 503 otherwise: while it
    starts (or after it stopped), or when the herder did not answer within 10 seconds.
    The bodies are Kafka Connect's (KIP-1017), which answers the last case with 500;
    here any failed probe is one status, and ``status`` tells which.
    """
    if not herder.running:
        return JSONResponse(status_code=503, content={
            "status": "starting", "message": "Worker is still starting up."})
    if not herder.answers(HEALTH_TIMEOUT_S):
        return JSONResponse(status_code=503, content={
            "status": "unhealthy", "message": "Worker was unable to handle this request "
            "and may be unable to handle other requests."})
    return {"status": "healthy",
            "message": "Worker has completed startup and is ready to handle requests."}


@router.get("/metrics", operation_id="metrics", response_class=PlainTextResponse,
            responses={200: {"content": {CONTENT_TYPE.split(";")[0]: {
                "schema": {"type": "string"}}},
                "description": "Prometheus text exposition format 0.0.4."}})
def metrics(herder: Herder) -> PlainTextResponse:
    """Get metrics in Prometheus' text format.

    Every running task's metrics, and every connector's and task's state.
    """
    return PlainTextResponse(render_metrics(herder), media_type=CONTENT_TYPE)


@router.get("/summary", operation_id="workerSummary", response_model=SummaryOut,
            response_model_exclude_unset=True)
def summary(
    herder: Herder,
    scope: Annotated[Literal["cluster", "worker"], Query(
        description="`worker`: counts of this worker's tasks only (what workers of a "
        "cluster ask each other for).")] = "cluster",
) -> Any:
    """Get every connector's and task's state and counts.

    What the dashboard (`GET /ui`) and `omconnect status` show: states, records (the
    transport acknowledged for sources, handed to put for sinks), lag, errors and
    dead-lettered records, summed per connector, and the cluster's workers; rates come
    from two summaries. In a cluster the counts of tasks running on other workers are
    asked from them.
    """
    return worker_summary(herder, scope=scope)


@router.get("/ui", operation_id="dashboard", response_class=HTMLResponse,
            responses={200: {"content": {"text/html": {"schema": {"type": "string"}}},
                             "description": "The dashboard page."}})
def dashboard() -> HTMLResponse:
    """Get the status dashboard.

    A page showing connectors and tasks with state, records/s, a throughput chart, lag,
    errors and dead-lettered counts, refreshing every second, with pause, resume and
    restart buttons that call this API.
    """
    return HTMLResponse(_dashboard_page())


@functools.cache
def _dashboard_page() -> str:
    page = resources.files("omconnect.rest").joinpath("dashboard", "index.html")
    return page.read_text(encoding="utf-8")


def source_commit() -> str:
    """The git commit omconnect was installed from, or ``"unknown"``.

    Read from the installation's ``direct_url.json`` (a VCS install names the commit; an
    editable install of a git checkout names the directory, whose HEAD is read).
    """
    from importlib import metadata

    try:
        text = metadata.distribution("omconnect").read_text("direct_url.json")
        direct = json.loads(text) if text else {}
    except (metadata.PackageNotFoundError, ValueError):
        return "unknown"
    commit = (direct.get("vcs_info") or {}).get("commit_id")
    if commit:
        return str(commit)
    url = urlparse(str(direct.get("url", "")))
    if url.scheme != "file":
        return "unknown"
    return _head_of(Path(unquote(url.path)) / ".git") or "unknown"


def _head_of(git: Path) -> str | None:
    try:
        head = (git / "HEAD").read_text().strip()
        if not head.startswith("ref: "):
            return head or None
        ref = head[5:]
        loose = git / ref
        if loose.is_file():
            return loose.read_text().strip() or None
        for line in (git / "packed-refs").read_text().splitlines():
            commit, _, name = line.partition(" ")
            if name.strip() == ref:
                return commit
    except OSError:
        return None
    return None
