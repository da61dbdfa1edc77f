"""Process and port helpers for test-broker launchers (standard library only).

The launchers in ``transports/omconnect_*/testing.py`` start brokers as child processes
in their own process group on free loopback ports; these are the pieces they share.
"""

from __future__ import annotations

import contextlib
import importlib.resources
import importlib.util
import os
import shutil
import signal
import socket
import subprocess
from pathlib import Path

__all__ = [
    "LOOPBACK",
    "find_broker_binary",
    "free_port",
    "kill_process_group",
    "log_tail",
    "port_open",
    "terminate_process_group",
]

LOOPBACK = "127.0.0.1"


def free_port() -> int:
    """Return a TCP port on 127.0.0.1 that was free a moment ago.

    Returns:
        A port number obtained by binding to port 0 and closing the socket.
    """
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((LOOPBACK, 0))
        return int(sock.getsockname()[1])


def terminate_process_group(process: subprocess.Popen[bytes], timeout: float) -> None:
    """SIGTERM the process group, SIGKILL it after ``timeout`` seconds, always reap."""
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def kill_process_group(process: subprocess.Popen[bytes]) -> None:
    """SIGKILL the process group (a crash: nothing is stopped cleanly) and reap it."""
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def log_tail(path: Path, max_bytes: int = 4000) -> str:
    """The last ``max_bytes`` of a log file as text (for start-up error messages)."""
    try:
        data = path.read_bytes()
    except OSError:
        return "<no log>"
    return data[-max_bytes:].decode("utf-8", "replace").strip() or "<empty log>"


def port_open(port: int, host: str = LOOPBACK) -> bool:
    """Whether something accepts TCP connections on ``host:port`` (0.25 s timeout)."""
    try:
        with socket.create_connection((host, port), timeout=0.25):
            return True
    except OSError:
        return False


def find_broker_binary(name: str, *, env_var: str, package: str, missing_hint: str) -> Path:
    """Locate a broker executable: ``$env_var``, then ``bin/<name>`` inside the installed
    ``package``, then ``name`` on ``PATH``.

    Args:
        name: The executable's file name.
        env_var: Environment variable that overrides the search.
        package: Importable package that ships the binary in its ``bin`` folder.
        missing_hint: What to do when none is found (ends the error message).

    Returns:
        Absolute path of an executable file.

    Raises:
        FileNotFoundError: If ``$env_var`` names no executable file, or none is found.

    """
    override = os.environ.get(env_var)
    if override:
        path = Path(override)
        if path.is_file() and os.access(path, os.X_OK):
            return path.resolve()
        raise FileNotFoundError(f"${env_var}={override!r} is not an executable file")
    if importlib.util.find_spec(package) is not None:
        resource = importlib.resources.files(package).joinpath("bin", name)
        if resource.is_file():
            path = Path(str(resource))
            if os.access(path, os.X_OK):
                return path.resolve()
    on_path = shutil.which(name)
    if on_path:
        return Path(on_path).resolve()
    raise FileNotFoundError(f"no {name} binary: {missing_hint}")
