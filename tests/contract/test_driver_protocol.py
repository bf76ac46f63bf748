"""drivers/driver_protocol.py's `WireWatch`: it sorts errors as `SdkErrorClassifier` does, and only looks.

Drivers run it on their bridge's `httpx` (mcp<2); here it runs on `httpx2` under the `mcp` 2.x client, the
same interface, so that what it does to a bridge's traffic is tested with a real client and server.
"""

from __future__ import annotations

import importlib.util
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from mcp_testkit import TestMcpServer, faults
from mcp_testkit.tools import ToolContext


def _driver_protocol() -> Any:
    """drivers/driver_protocol.py, loaded from its file: the drivers folder is not put on sys.path (its
    subfolders, named for bridges, would shadow them as namespace packages)."""
    path = Path(__file__).resolve().parents[2] / "drivers" / "driver_protocol.py"
    spec = importlib.util.spec_from_file_location("driver_protocol", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_protocol = _driver_protocol()
WireWatch = _protocol.WireWatch
leaves = _protocol.leaves

LIMIT_S = 10.0

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def _client(server: TestMcpServer, watch: WireWatch) -> AsyncIterator[Client]:
    async with httpx2.AsyncClient(transport=watch.transport(), auth=watch.auth({})) as http:
        transport = streamable_http_client(server.url, http_client=http)
        async with Client(transport, mode="legacy", read_timeout_seconds=5) as client:
            yield client


async def test_a_streamed_answer_reaches_the_bridge_as_it_streams() -> None:
    """The bridge reads a call's first SSE event while the tool still runs: the watch reads no body ahead of it."""
    release = anyio.Event()
    async with TestMcpServer(response_mode="sse") as server:

        @server.tool("slow", read_only=True)
        async def slow(arguments: dict[str, Any], context: ToolContext) -> str:
            await context.progress(1, 2)
            await release.wait()  # set by the client's progress callback: only a streamed event can set it
            return "done"

        async def progressed(progress: float, total: float | None, message: str | None) -> None:
            release.set()

        watch = WireWatch(httpx2)
        with anyio.fail_after(LIMIT_S):
            async with _client(server, watch) as client:
                result = await client.call_tool("slow", {}, progress_callback=progressed)
    assert [block.text for block in result.content] == ["done"]  # type: ignore[union-attr]
    assert release.is_set()


@pytest.mark.parametrize(
    ("fault", "kind"),
    [
        (faults.ProtocolError(-32603, "scripted failure"), "tool_error"),
        (faults.HttpStatus(500), "outcome_unknown"),
        (faults.HttpStatus(401), "auth_error"),
        (faults.LoseSession(), "connection_error"),
    ],
)
async def test_a_call_error_is_sorted_by_what_crossed_the_wire(fault: faults.Fault, kind: str) -> None:
    """A JSON-RPC error in a 2xx answer is a tool error; a 5xx may have run; 401 is auth; a 404 ran nothing."""
    async with TestMcpServer() as server:
        server.tool("tool", read_only=True, returns="ok")
        watch = WireWatch(httpx2)
        with anyio.fail_after(LIMIT_S):
            async with _client(server, watch) as client:
                server.inject(fault, method="tools/call", tool="tool")
                watch.begin()
                with pytest.raises(MCPError) as raised:
                    await client.call_tool("tool", {})
    assert watch.kind(raised.value, "call") == kind


async def test_a_failure_before_the_call_left_is_a_connection_error() -> None:
    """An error raised when no tools/call was sent since `begin()` cannot have run the tool: connection_error."""
    async with TestMcpServer() as server:
        server.tool("tool", read_only=True, returns="ok")
        watch = WireWatch(httpx2)
        server.inject(faults.HttpStatus(503), method="initialize")
        with anyio.fail_after(LIMIT_S):
            watch.begin()
            error: Exception | None = None
            try:
                async with _client(server, watch):
                    pass
            except Exception as exc:  # an exception group around the SDK's error, as bridges on anyio raise
                error = exc
    assert error is not None
    assert [type(leaf) for leaf in leaves(error)] == [MCPError]
    assert watch.kind(error, "call") == "connection_error"
    assert watch.statuses == [503]
