"""A server for tests of cancellation: a 'slow' read that waits until it is cancelled, setting an event once it
runs, and a quick read to show the next call works. Shared by the bridge's, the journal's and the contract's tests."""

from __future__ import annotations

import threading

import anyio

from mcp_testkit import TestMcpServer


def slow_server(limit_s: float, *, name: str | None = None, quick: str = "search", returns: str = "found") -> tuple[
    TestMcpServer, threading.Event
]:
    """The server, and the event its 'slow' tool sets once it runs (it then sleeps twice `limit_s`)."""
    server = TestMcpServer(name) if name is not None else TestMcpServer()
    running = threading.Event()

    @server.tool("slow", read_only=True)
    async def slow(arguments: dict[str, object]) -> str:
        running.set()
        await anyio.sleep(limit_s * 2)
        return "too late"

    server.tool(quick, read_only=True, returns=returns)
    return server, running


async def until_running(running: threading.Event, limit_s: float) -> None:
    """Wait (in a thread, at most `limit_s`) until the slow tool runs."""
    assert await anyio.to_thread.run_sync(running.wait, limit_s), "the tool never ran"
