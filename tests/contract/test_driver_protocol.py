"""drivers/driver_protocol.py's `error_kind`: it sorts a bridge's errors from the error alone, as
`SdkErrorClassifier` does, and the Python drivers put nothing between their bridge and the server.

Drivers run it on what their mcp 1.x bridge raises; here the errors come from the `mcp` 2.x client against a real
server, and the mcp 1.x shapes (an `HTTPStatusError` carrying its response, an error with `.error.code`) are
built as that version raises them.
"""

from __future__ import annotations

import importlib.util
import sys
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

if sys.version_info < (3, 11):
    from exceptiongroup import ExceptionGroup


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
error_kind = _protocol.error_kind
current_headers = _protocol.current_headers
leaves = _protocol.leaves

LIMIT_S = 10.0

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def _client(server: TestMcpServer, headers: dict[str, str]) -> AsyncIterator[Client]:
    async with httpx2.AsyncClient(auth=current_headers(httpx2, headers)) as http:
        transport = streamable_http_client(server.url, http_client=http)
        async with Client(transport, mode="legacy", read_timeout_seconds=5) as client:
            yield client


@pytest.mark.parametrize(
    ("fault", "kind"),
    [
        (faults.ProtocolError(-32603, "scripted failure"), "tool_error"),
        (faults.HttpStatus(500), "outcome_unknown"),
        (faults.HttpStatus(401), "outcome_unknown"),
        (faults.LoseSession(), "connection_error"),
    ],
)
async def test_a_call_error_is_sorted_from_the_error_alone(fault: faults.Fault, kind: str) -> None:
    """A server's JSON-RPC error is a tool error; mcp 2.3's one error for every HTTP status may have run (a 401
    included: its caller cannot tell it from a 500); a lost session ran nothing."""
    async with TestMcpServer() as server:
        server.tool("tool", read_only=True, returns="ok")
        with anyio.fail_after(LIMIT_S):
            async with _client(server, {}) as client:
                server.inject(fault, method="tools/call", tool="tool")
                with pytest.raises(MCPError) as raised:
                    await client.call_tool("tool", {})
    assert error_kind(raised.value, "call") == kind


async def test_a_failure_at_connect_is_a_connection_error() -> None:
    """An error raised while the bridge connects, inside the exception group a bridge on anyio raises, is a
    connection error: nothing was called."""
    async with TestMcpServer() as server:
        server.tool("tool", read_only=True, returns="ok")
        server.inject(faults.HttpStatus(503), method="initialize")
        with anyio.fail_after(LIMIT_S):
            error: Exception | None = None
            try:
                async with _client(server, {}):
                    pass
            except Exception as exc:
                error = exc
    assert error is not None
    assert [type(leaf) for leaf in leaves(error)] == [MCPError]
    assert error_kind(error, "connect") == "connection_error"


async def test_the_headers_reach_the_server_and_follow_a_rotation() -> None:
    """`current_headers` sets the driver's current credentials on every request, a rotation included."""
    headers = {"Authorization": "Bearer one"}
    async with TestMcpServer() as server:
        server.tool("tool", read_only=True, returns="ok")
        with anyio.fail_after(LIMIT_S):
            async with _client(server, headers) as client:
                await client.call_tool("tool", {})
                headers["Authorization"] = "Bearer two"
                await client.call_tool("tool", {})
        calls = [r for r in server.journal if r.rpc_method == "tools/call"]
    assert [r.headers.get("authorization") for r in calls] == ["Bearer one", "Bearer two"]


def _status_error(status: int) -> Exception:
    """What mcp 1.x raises for an HTTP error status (`response.raise_for_status()`): an `HTTPStatusError` that
    carries the response, inside the exception group its transport's task group ends with."""
    request = httpx2.Request("POST", "http://127.0.0.1/mcp")
    error = httpx2.HTTPStatusError("refused", request=request, response=httpx2.Response(status, request=request))
    return ExceptionGroup("unhandled errors in a TaskGroup", [error])


@pytest.mark.parametrize(
    ("status", "at", "kind"),
    [(401, "call", "auth_error"), (403, "connect", "auth_error"), (404, "call", "connection_error"),
     (500, "call", "outcome_unknown"), (500, "connect", "connection_error")],
)
def test_an_http_status_the_bridge_hands_its_caller_is_read_from_the_error(status: int, at: str, kind: str) -> None:
    """Where the bridge's error carries the HTTP status (mcp 1.x's `HTTPStatusError`), the status decides."""
    assert error_kind(_status_error(status), at) == kind


class _Mcp1Error(Exception):
    """The shape of mcp 1.x's `McpError`: its `ErrorData` under `.error`."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.error = type("ErrorData", (), {"code": code, "message": message})()


@pytest.mark.parametrize(
    ("code", "message", "kind"),
    [(408, "Timed out while waiting for response", "outcome_unknown"), (-32000, "Connection closed", "outcome_unknown"),
     (32600, "Session terminated", "connection_error"), (-32602, "bad arguments", "tool_error")],
)
def test_an_mcp1_error_is_sorted_by_its_code(code: int, message: str, kind: str) -> None:
    """mcp 1.x's timeout (408) and closed connection are lost answers; its "Session terminated" (32600) ran
    nothing; a server's other JSON-RPC error answers the call."""
    assert error_kind(_Mcp1Error(code, message), "call") == kind
