"""The servers of one pytest worker, by constructor settings: started once, reset for every test."""

from __future__ import annotations

import sys
import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp_testkit.server import TestMcpServer

__all__ = ["ServerPool", "stop_all"]


class ServerPool:
    """Servers by constructor settings: the first test asking for some settings starts one, later ones reset it."""

    def __init__(self, transport: str) -> None:
        self._transport = transport
        self._servers: dict[Any, TestMcpServer] = {}

    def server(self, settings: dict[str, Any]) -> tuple[TestMcpServer, bool]:
        """A fresh server with these settings, and whether it is this test's alone (to stop after it)."""
        try:
            key: Any = _frozen(settings)
            hash(key)
        except TypeError:
            return self._start(settings), True
        server = self._servers.get(key)
        if server is None:
            server = self._servers[key] = self._start(settings)
        else:
            server.reset()
            _forget_cached_listings()
        return server, False

    def _start(self, settings: dict[str, Any]) -> TestMcpServer:
        from mcp_testkit.server import TestMcpServer

        server = TestMcpServer(**settings)
        if self._transport == "socket":
            server.start()
        return server

    def close(self) -> None:
        """Stop every server of the pool."""
        servers, self._servers = list(self._servers.values()), {}
        stop_all(servers)


def stop_all(servers: list[TestMcpServer]) -> None:
    """Stop servers side by side: each stop waits on uvicorn's shutdown, so one after another adds up."""
    started = [server for server in servers if server.started]
    if len(started) == 1:
        started[0].stop()
        return
    threads = [threading.Thread(target=server.stop, name=f"stop-{server.name}") for server in started]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def _forget_cached_listings() -> None:
    """Empty the reference bridge's tool-list cache, if the bridge is in use at all.

    A reused server keeps its URL while each test scripts new tools behind it: a bridge pool
    would otherwise be served the previous test's listing from the process-level cache.
    """
    cache = sys.modules.get("mcp_testkit.bridge._cache")
    if cache is not None:
        cache.ToolCache.clear()


def _frozen(value: Any) -> Any:
    if isinstance(value, Mapping):
        return tuple(sorted((key, _frozen(item)) for key, item in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(_frozen(item) for item in value)
    if isinstance(value, (set, frozenset)):
        return frozenset(_frozen(item) for item in value)
    return value
