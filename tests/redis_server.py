"""A real Redis server for the tests of the shared example database: Debian's `redis-server`, started on 127.0.0.1 on
a port of its own, with nothing saved to disk, and stopped after.

Without `redis-server` (or the `redis` client of the dev extra) these tests skip and say why. Under `CI=true` they
fail instead: CI must never turn them off by missing Redis (`.ci/run` installs it where it is missing)."""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from node_trees import on_ci

READY_S = 30.0
"""A redis-server says it is ready well within this, or the test fails (a hang guard, not a timing)."""
STOP_S = 10.0


def redis_server_path(purpose: str) -> str:
    """The path of `redis-server`; without it (or without the redis client) the test skips naming `purpose`, or
    fails under CI=true."""
    found = shutil.which("redis-server")
    try:
        import redis  # noqa: F401
    except ImportError:
        missing = "the redis client is not installed (pip install -e '.[dev]')"
    else:
        missing = "" if found else "redis-server is not installed (apt-get install redis-server)"
    if missing:
        reason = f"{missing}, and {purpose} needs it"
        if on_ci():
            pytest.fail(f"{reason}; under CI=true a Redis test must not skip", pytrace=False)
        pytest.skip(reason)
    assert found is not None
    return found


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def redis_server(folder: Path, purpose: str) -> Iterator[str]:
    """A redis-server of this test session's own on 127.0.0.1; its URL (`redis://127.0.0.1:PORT/0`)."""
    binary = redis_server_path(purpose)
    port = _free_port()
    command = [binary, "--bind", "127.0.0.1", "--port", str(port), "--save", "", "--appendonly", "no",
               "--dir", str(folder), "--logfile", ""]  # fmt: skip
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    guard = threading.Timer(READY_S, process.kill)  # a server that never says it is ready is killed: readline ends
    guard.start()
    said = []
    try:
        assert process.stdout is not None
        for line in process.stdout:
            said.append(line)
            if "Ready to accept connections" in line:
                break
        else:
            raise AssertionError(f"redis-server on port {port} never became ready:\n{''.join(said)}")
        guard.cancel()
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        guard.cancel()
        process.terminate()
        try:
            process.wait(timeout=STOP_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stdout is not None:
            process.stdout.close()
