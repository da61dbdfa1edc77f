"""Serving: where it listens, starting and stopping, the missing extra, and the CLI's
``omconnect standalone ... --rest-port``.
"""

from __future__ import annotations

import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from omconnect.errors import ConnectError
from omconnect.rest import RestServer, start_server
from omconnect.runtime import StandaloneHerder


def test_it_listens_on_127_0_0_1_by_default(herder: StandaloneHerder):
    server = RestServer(herder, port=0)
    assert server.host == "127.0.0.1"
    with server:
        assert server.url == f"http://127.0.0.1:{server.port}"
        assert server.port != 0
        assert httpx.get(server.url + "/").status_code == 200


def test_a_port_in_use_is_an_error_naming_it(herder: StandaloneHerder):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(ConnectError, match=rf"cannot listen on 127.0.0.1:{port}: "
                                               r".*choose another --rest-port"):
            start_server(herder, port=port)


def test_stop_frees_the_port_and_is_idempotent(herder: StandaloneHerder):
    server = start_server(herder, port=0)
    port = server.port
    server.stop()
    server.stop()
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"http://127.0.0.1:{port}/")
    again = start_server(herder, port=port)  # the same port can be served again
    try:
        assert httpx.get(again.url + "/").status_code == 200
    finally:
        again.stop()


def test_without_the_rest_extra_the_import_names_it():
    code = ("import sys; sys.modules['fastapi'] = None\n"
            "try:\n    import omconnect.rest\n"
            "except ImportError as exc:\n    print(type(exc).__name__, exc)\n")
    printed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             check=True).stdout
    assert printed.startswith("MissingExtraError REST API needs the 'fastapi' package")
    assert "pip install 'omconnect[rest]'" in printed


def _start_cli(tmp_path: Path, extra: dict[str, Any]) -> subprocess.Popen[str]:
    (tmp_path / "in.txt").write_text("a\nb\n")
    worker = {"transport": "embedded", "embedded.path": str(tmp_path / "data"),
              "offset.flush.interval.ms": "100"} | extra
    (tmp_path / "worker.properties").write_text(
        "".join(f"{k}={v}\n" for k, v in worker.items()))
    (tmp_path / "reader.properties").write_text(
        f"name=reader\nconnector.class=FileStreamSource\nfile={tmp_path / 'in.txt'}\n"
        "topic=lines\n")
    return subprocess.Popen(
        [sys.executable, "-m", "omconnect.cli", "standalone",
         str(tmp_path / "worker.properties"), str(tmp_path / "reader.properties"),
         "--rest-port", "0"],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        text=True, cwd=tmp_path)


def _rest_url(process: subprocess.Popen[str]) -> str:
    assert process.stderr is not None
    seen = []
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        line = process.stderr.readline()
        if not line and process.poll() is not None:
            break
        seen.append(line)
        match = re.search(r"REST API listening on (http://127\.0\.0\.1:\d+)", line)
        if match:
            return match.group(1)
    pytest.fail("the CLI did not report the REST API's address:\n" + "".join(seen))


def test_the_cli_serves_the_api_beside_the_worker(tmp_path: Path):
    process = _start_cli(tmp_path, {"rest.auth.token": "cli-token"})
    try:
        url = _rest_url(process)
        assert httpx.get(url + "/connectors").status_code == 401
        listed = httpx.get(url + "/connectors", headers={"Authorization": "Bearer cli-token"})
        assert listed.json() == ["reader"]
    finally:
        process.send_signal(signal.SIGTERM)
        _, rest_of_log = process.communicate(timeout=30)
        assert process.returncode == 0, rest_of_log
