"""What the SDK client in auto mode does under each fault: it lands on 2026-07-28, or falls back, and then reacts.

The rows of the "auto mode" column of docs/faults.md's table of what the SDK client does.
"""

from __future__ import annotations

from typing import Any

import anyio
import httpx2
import pydantic
import pytest
from mcp import Client, MCPError
from mcp.client.streamable_http import streamable_http_client

from mcp_testkit import TestMcpServer, faults

from ._support import CATALOGUE, FRAMINGS, LIMIT_S, SDK_WAIT_S, Serve, tools

pytestmark = pytest.mark.anyio


def auto_client(server: TestMcpServer, wait_s: float | None = None) -> Client:
    """The official SDK client in auto mode: server/discover first, 2026-07-28 when the server answers it."""
    return Client(server.url, mode="auto", read_timeout_seconds=wait_s)


# -- connecting: the probe --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fault", "version", "opening"),
    [
        (None, "2026-07-28", ["server/discover"]),
        (faults.DiscoverError(), "2025-11-25", ["server/discover", "initialize"]),
        (faults.DiscoverError(404, None), "2025-11-25", ["server/discover", "initialize"]),
        (
            faults.DiscoverError(400, -32020, "Header mismatch: Mcp-Method"),
            "2025-11-25",
            ["server/discover", "initialize"],
        ),
        (faults.HeaderMismatch(), "2025-11-25", ["server/discover", "initialize"]),
        (faults.MissingCapability(), "2025-11-25", ["server/discover", "initialize"]),
        (faults.HttpStatus(500), "2025-11-25", ["server/discover", "initialize"]),
        (faults.UnsupportedVersion(), "2026-07-28", ["server/discover", "server/discover"]),
        (faults.UnsupportedVersion(["2025-11-25"]), "2025-11-25", ["server/discover", "initialize"]),
    ],
    ids=repr,
)
async def test_the_probe_decides_the_era(
    serve: Serve, fault: faults.Fault | None, version: str, opening: list[str]
) -> None:
    """A failed probe sends the client to initialize (even a modern -32020 or -32021); -32022 naming a mutual
    version makes it probe again."""
    server = tools(serve(), "create")
    if fault is not None:
        server.inject(fault, method="server/discover")
    with anyio.fail_after(LIMIT_S):
        async with auto_client(server) as client:
            negotiated = client.protocol_version
            result = await client.call_tool("create", {})
    assert negotiated == version
    assert [r.rpc_method for r in server.journal][: len(opening)] == opening
    assert result.is_error is False
    assert server.calls("create")[0].era == ("stateless" if version == "2026-07-28" else "handshake")


async def test_a_probe_offering_only_an_unknown_modern_version_fails_the_connect(serve: Serve) -> None:
    """-32022 whose supported list holds only modern versions the client lacks: connecting raises MCPError -32022."""
    server = serve()
    server.inject(faults.UnsupportedVersion(["2027-01-01"]), method="server/discover")
    refused = pytest.RaisesExc(MCPError, check=lambda error: error.code == -32022)
    with anyio.fail_after(LIMIT_S), pytest.RaisesGroup(refused, flatten_subgroups=True):
        async with auto_client(server):
            pass
    assert [r.rpc_method for r in server.journal] == ["server/discover"]


async def test_a_dropped_probe_loses_the_connection(serve: Serve) -> None:
    """A Drop of the probe is no era verdict: the client raises with httpx2.RemoteProtocolError."""
    server = serve()
    server.inject(faults.Drop(), method="server/discover")
    with anyio.fail_after(LIMIT_S), pytest.RaisesGroup(httpx2.RemoteProtocolError, flatten_subgroups=True):
        async with auto_client(server):
            pass


# -- calls ------------------------------------------------------------------------------------------------

CALL_ERRORS = [
    pytest.param(
        faults.ProtocolError(-32000, "backend down"), "json", -32000, "backend down", False, id="protocol-error"
    ),
    pytest.param(faults.HttpStatus(500), "json", -32603, "Server returned an error response", False, id="status-500"),
    pytest.param(faults.HttpStatus(400), "json", -32603, "Server returned an error response", False, id="status-400"),
    pytest.param(faults.HttpStatus(401), "json", -32603, "Server returned an error response", False, id="status-401"),
    pytest.param(
        faults.HttpStatus(400, {"jsonrpc": "2.0", "id": None, "error": {"code": -32000, "message": "busy"}}),
        "json",
        -32000,
        "busy",
        False,
        id="status-with-json-rpc-body",
    ),
    pytest.param(faults.HttpStatus(404), "json", -32601, "Not Found", False, id="status-404"),
    pytest.param(faults.Accepted(), "json", -32600, "server answered a request with 202 Accepted", False, id="202"),
    pytest.param(
        faults.WrongContentType(), "json", -32600, "Unexpected content type: text/html", True, id="content-type"
    ),
    pytest.param(faults.TruncateBody(), "json", -32700, "Failed to parse JSON response", True, id="truncate-json"),
    pytest.param(faults.TruncateBody(), "sse", -32000, "SSE stream ended without a response", True, id="truncate-sse"),
    pytest.param(faults.EndStream(), "json", -32000, "SSE stream ended without a response", True, id="end-stream"),
    pytest.param(faults.MalformedSse(), "sse", -32700, "Failed to parse SSE message", True, id="malformed-sse"),
    pytest.param(faults.UnsupportedVersion(), "json", -32022, "Unsupported protocol version", False, id="32022"),
    pytest.param(faults.MissingCapability(), "json", -32021, "Missing required client capability", False, id="32021"),
    pytest.param(faults.EraDowngrade(), "json", -32600, "Bad Request: Missing session ID", False, id="downgrade"),
    pytest.param(
        faults.LoseSession(), "json", -32603, "mcp-testkit: LoseSession() has no meaning", False, id="misplaced"
    ),
    pytest.param(
        faults.BreakStream(),
        "sse",
        -32603,
        "mcp-testkit: BreakStream(after_events=1, retry_s=None) has no meaning",
        False,
        id="break-stream-misplaced",
    ),
]


@pytest.mark.parametrize(("fault", "framing", "code", "message", "ran"), CALL_ERRORS)
async def test_a_call_fault_raises_mcp_error_and_the_next_call_works(
    serve: Serve, fault: faults.Fault, framing: str, code: int, message: str, ran: bool
) -> None:
    """Each of these faults makes the auto-mode call raise MCPError(code, message), never resent; the next works."""
    server = tools(serve(response_mode=framing), "create")
    with anyio.fail_after(LIMIT_S):
        async with auto_client(server) as client:
            server.inject(fault, method="tools/call", tool="create", times=1)  # EraDowngrade lasts, unless told
            with pytest.raises(MCPError) as caught:
                await client.call_tool("create", {})
            again = await client.call_tool("create", {})
    assert (caught.value.code, caught.value.message[: len(message)]) == (code, message)
    assert again.is_error is False
    assert [(c.fault, c.era) for c in server.calls("create")] == [(fault, "stateless"), (None, "stateless")]
    assert server.executions("create") == 1 + ran
    server.reset()  # a misplaced fault is a recorded server error; this test expected it


async def test_an_error_result_is_returned_as_is_error(serve: Serve) -> None:
    """ErrorResult reaches the auto-mode client as a result with is_error=True and the text."""
    server = tools(serve(), "create")
    with anyio.fail_after(LIMIT_S):
        async with auto_client(server) as client:
            server.fail_next_call(faults.ErrorResult("disk full"), tool="create")
            result = await client.call_tool("create", {})
    assert (result.is_error, result.content[0].text) == (True, "disk full")  # type: ignore[union-attr]


async def test_a_long_delay_times_out_and_the_handler_still_runs(serve: Serve) -> None:
    """Delay past read_timeout_seconds: MCPError -32001; the delayed call still runs on the server."""
    server = tools(serve(), "create")
    with anyio.fail_after(LIMIT_S):
        async with auto_client(server, wait_s=SDK_WAIT_S) as client:
            server.fail_next_call(faults.Delay(SDK_WAIT_S * 4), tool="create")
            with pytest.raises(MCPError) as caught:
                await client.call_tool("create", {})
    assert caught.value.code == -32001
    await anyio.to_thread.run_sync(lambda: server.journal.wait_for(lambda j: j.calls("create")[0].status is not None))
    assert server.executions("create") == 1


@pytest.mark.parametrize("framing", FRAMINGS)
@pytest.mark.parametrize("after_execution", [False, True], ids=["before", "after-execution"])
async def test_a_drop_loses_the_whole_connection(serve: Serve, framing: str, after_execution: bool) -> None:
    """A Drop of a stateless call: `async with Client` raises a group with RemoteProtocolError, as in legacy mode."""
    server = tools(serve(response_mode=framing), "create")
    with anyio.fail_after(LIMIT_S), pytest.RaisesGroup(httpx2.RemoteProtocolError, flatten_subgroups=True):
        async with auto_client(server) as client:
            server.fail_next_call(faults.Drop(after_execution=after_execution), tool="create")
            await client.call_tool("create", {})
    assert server.executions("create") == after_execution


async def test_a_rotated_credential_raises_and_the_old_value_is_sent_again(serve: Serve) -> None:
    """After rotate_header the old value gets 401: MCPError(-32603); the client keeps sending the old value."""
    server = tools(serve(), "create")
    server.require_header("X-Key", "old")
    http = httpx2.AsyncClient(headers={"X-Key": "old"})
    with anyio.fail_after(LIMIT_S):
        async with http, Client(streamable_http_client(server.url, http_client=http), mode="auto") as client:
            server.rotate_header("X-Key", "new")
            for _ in range(2):
                with pytest.raises(MCPError) as caught:
                    await client.call_tool("create", {})
                assert caught.value.code == -32603
    assert [(c.status, c.headers["x-key"]) for c in server.calls("create")] == [(401, "old"), (401, "old")]


async def test_a_header_mismatch_makes_the_client_list_again_and_resend(serve: Serve) -> None:
    """-32020 on a call: the SDK lists the tools again and resends the call, which then runs once."""
    server = tools(serve(), "create")
    with anyio.fail_after(LIMIT_S):
        async with auto_client(server) as client:
            server.fail_next_call(faults.HeaderMismatch("Mcp-Name"), tool="create")
            result = await client.call_tool("create", {})
    assert result.is_error is False
    after_probe = [(r.rpc_method, r.status) for r in server.journal][1:4]
    assert after_probe == [("tools/call", 400), ("tools/list", 200), ("tools/call", 200)]
    assert server.executions("create") == 1


# -- listing ----------------------------------------------------------------------------------------------


async def _walk(server: TestMcpServer, wait_s: float | None, max_pages: int = 6) -> list[Any]:
    """Pages as the auto-mode client walks them by hand: tool names, or the exception that ended the walk."""
    pages: list[Any] = []
    with anyio.fail_after(LIMIT_S):
        async with auto_client(server, wait_s=wait_s) as client:
            cursor: str | None = None
            for _ in range(max_pages):
                try:
                    page = await client.list_tools(cursor=cursor)
                except (MCPError, pydantic.ValidationError) as exc:
                    pages.append(exc)
                    break
                pages.append([tool.name for tool in page.tools])
                cursor = page.next_cursor
                if cursor is None:
                    break
    return pages


@pytest.mark.parametrize(
    ("fault", "shape"),
    [
        (faults.EmptyCursor(1), [["t1", "t2"], ["t3", "t4"], ["t5"]]),
        (faults.RepeatCursor(2), [["t1", "t2"], ["t3", "t4"], ["t3", "t4"], ["t5"]]),
        (faults.StuckCursor(2), [["t1", "t2"], ["t3", "t4"], ["t5"], ["t5"], ["t5"], ["t5"]]),
        (faults.EndlessPages(), [["t1", "t2"], ["t3", "t4"], ["t5"], [], [], []]),
        (faults.SlowPage(2, SDK_WAIT_S * 4), [["t1", "t2"], -32001]),
        (faults.DuplicateTool(2), [["t1", "t2"], ["t3", "t4", "t1"], ["t5"]]),
        (faults.CatalogueChange(2, remove=("t1",)), [["t1", "t2"], ["t4", "t5"]]),
        (faults.ListChanged(2), [["t1", "t2"], ["t3", "t4"], ["t5"]]),
        (faults.PageError(2), [["t1", "t2"], -32603]),
        (faults.InvalidCursor(2), [["t1", "t2"], -32602]),
        (faults.MalformedPage(2), [["t1", "t2"], "ValidationError"]),
        (faults.EraDowngrade(), [-32600]),
    ],
    ids=repr,
)
async def test_listing_faults_as_the_auto_mode_client_walks_them(
    serve: Serve, fault: faults.Fault, shape: list[Any]
) -> None:
    """The pages the auto-mode client gets under each listing fault; an empty cursor is followed, as 2026-07-28 says."""
    server = tools(serve(page_size=2), *CATALOGUE)
    server.inject(fault)
    pages = await _walk(server, SDK_WAIT_S if isinstance(fault, faults.SlowPage) else None)
    seen = [
        page.code if isinstance(page, MCPError) else type(page).__name__ if isinstance(page, Exception) else page
        for page in pages
    ]
    assert seen == shape
    assert {r.era for r in server.journal} == {"stateless"}
