"""Process and port helpers (standard library only): free loopback ports, and stopping a
child process with its whole process group.

The suite's pipeline cases run workers this way; test-broker launchers (such as
``omconnect_testbrokers`` in ``tests/brokers``) use the same helpers for brokers.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
from pathlib import Path

__all__ = [
    "LOOPBACK",
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
