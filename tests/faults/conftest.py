"""Fault tests share started servers (one per configuration, `with server:` in a thread), reset per test."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import pytest

from mcp_testkit import TestMcpServer

from ._support import Serve


@pytest.fixture(scope="package")
def _started() -> Iterator[dict[tuple[Any, ...], TestMcpServer]]:
    """Servers on 127.0.0.1:0, started on first use and stopped after this package's last test.

    Not session-wide: other packages count the server threads alive and must not see ours.
    """
    servers: dict[tuple[Any, ...], TestMcpServer] = {}
    try:
        yield servers
    finally:
        for server in servers.values():
            with contextlib.suppress(Exception):
                server.stop()


@pytest.fixture
def serve(_started: dict[tuple[Any, ...], TestMcpServer]) -> Serve:
    """`serve(response_mode=..., page_size=..., ...)`: a started server with those options, freshly reset."""

    def fresh(**options: Any) -> TestMcpServer:
        options.setdefault("response_mode", "json")
        key = tuple(sorted(options.items()))
        server = _started.get(key)
        if server is None:
            server = _started[key] = TestMcpServer("faults", **options)
            server.start()
        server.reset()
        return server

    return fresh
