"""The official `mcp` SDK client against the server: both connect modes, paging by cursor, every answer kind."""

from __future__ import annotations

import anyio
import mcp_types
import pytest
from mcp import Client, ClientSession, MCPError
from mcp_types import PaginatedRequestParams

from mcp_testkit import TestMcpServer, ToolError
from mcp_testkit.server._presets import PNG_1X1, WAV_SILENCE

from ._support import LATEST, LIMIT_S, sdk_transport, serving

pytestmark = pytest.mark.anyio

TOOL_NAMES = ["t1", "t2", "t3", "t4", "t5"]


def _catalogue(**options: object) -> TestMcpServer:
    server = TestMcpServer("sdk", **options)  # type: ignore[arg-type]
    for name in TOOL_NAMES:
        server.tool(name, description=f"tool {name}", returns=f"{name} ran")
    return server


async def test_legacy_mode_initializes_lists_and_calls(via: str) -> None:
    """Client(mode="legacy") initializes (no server/discover), lists the catalogue and calls a tool."""
    server = _catalogue()
    async with serving(server, via):
        with anyio.fail_after(LIMIT_S):
            async with Client(sdk_transport(server, via), mode="legacy") as client:
                assert client.protocol_version == LATEST
                listed = await client.list_tools()
                result = await client.call_tool("t2", {"x": 1})
        assert [t.name for t in listed.tools] == TOOL_NAMES
        assert result.content == [mcp_types.TextContent(type="text", text="t2 ran")]
        assert server.journal.requests("server/discover") == []
        assert server.journal[0].rpc_method == "initialize"
        server.journal.assert_called("t2", times=1, arguments={"x": 1})
        assert server.executions("t2") == 1


async def test_auto_mode_falls_back_to_initialize(via: str) -> None:
    """Client(mode="auto") against eras=("handshake",): the probe gets -32601, then an initialize handshake."""
    server = _catalogue(eras=("handshake",))
    async with serving(server, via):
        with anyio.fail_after(LIMIT_S):
            async with Client(sdk_transport(server, via), mode="auto") as client:
                assert client.protocol_version == LATEST
                result = await client.call_tool("t1", {})
        assert result.content[0].text == "t1 ran"  # type: ignore[union-attr]
        probe, handshake = server.journal[0], server.journal[1]
        opening = [r.rpc_method for r in server.journal][:3]
        assert opening == ["server/discover", "initialize", "notifications/initialized"]
        assert probe.rpc_method == "server/discover"
        assert probe.response["error"]["code"] == -32601
        assert probe.session_id is None
        assert handshake.rpc_method == "initialize"
        assert handshake.status == 200
        assert len(server.sessions) == 1


@pytest.mark.parametrize("response_mode", ["json", "sse"])
async def test_auto_mode_lands_on_2026_07_28_lists_every_page_and_calls(via: str, response_mode: str) -> None:
    """Client(mode="auto") against the default server speaks 2026-07-28: no initialize, every page, tool calls."""
    server = _catalogue(page_size=2, response_mode=response_mode)
    async with serving(server, via):
        with anyio.fail_after(LIMIT_S):
            async with Client(sdk_transport(server, via), mode="auto") as client:
                version = client.protocol_version
                pages = [await client.list_tools()]
                while pages[-1].next_cursor is not None:
                    pages.append(await client.list_tools(cursor=pages[-1].next_cursor))
                results = [await client.call_tool(name, {"n": i}) for i, name in enumerate(["t1", "t5"])]
    assert version == "2026-07-28"
    assert [[t.name for t in page.tools] for page in pages] == [["t1", "t2"], ["t3", "t4"], ["t5"]]
    assert [r.content[0].text for r in results] == ["t1 ran", "t5 ran"]  # type: ignore[union-attr]
    journal = server.journal
    assert journal[0].rpc_method == "server/discover"
    assert journal.requests("initialize") == []
    assert {record.era for record in journal} == {"stateless"}
    assert {record.protocol_version for record in journal} == {"2026-07-28"}
    assert len(server.sessions) == 0
    journal.assert_called("t5", times=1, arguments={"n": 1})
    call = journal.calls("t5")[0]
    assert (call.headers["mcp-method"], call.headers["mcp-name"]) == ("tools/call", "t5")
    assert call.client_info is not None
    assert call.client_info["name"]
    assert server.executions() == 2


async def test_auto_mode_against_a_discover_error_falls_back(via: str) -> None:
    """A DiscoverError on the probe of a two-era server sends Client(mode="auto") to the handshake."""
    from mcp_testkit import faults

    server = _catalogue()
    server.inject(faults.DiscoverError())
    async with serving(server, via):
        with anyio.fail_after(LIMIT_S):
            async with Client(sdk_transport(server, via), mode="auto") as client:
                assert client.protocol_version == LATEST
                await client.call_tool("t1", {})
    assert [r.rpc_method for r in server.journal][:2] == ["server/discover", "initialize"]
    assert (server.journal[0].status, server.journal[0].fault) == (400, faults.DiscoverError())
    assert server.calls("t1")[0].era == "handshake"


async def test_legacy_mode_against_a_stateless_only_server_is_told_the_versions(via: str) -> None:
    """Client(mode="legacy") against eras=("stateless",): initialize is refused with -32022 naming 2026-07-28."""
    server = _catalogue(eras=("stateless",))
    refused = pytest.RaisesExc(MCPError, check=lambda error: error.code == -32022 and "2026-07-28" in str(error))
    async with serving(server, via):
        with anyio.fail_after(LIMIT_S), pytest.RaisesGroup(refused, flatten_subgroups=True):
            async with Client(sdk_transport(server, via), mode="legacy"):
                pass
    assert (server.journal[0].rpc_method, server.journal[0].status) == ("initialize", 400)


async def test_the_sdk_client_ends_its_session_with_delete(via: str) -> None:
    """On exit the SDK client DELETEs its session, which the server then counts as ended."""
    server = _catalogue()
    async with serving(server, via):
        with anyio.fail_after(LIMIT_S):
            async with Client(sdk_transport(server, via), mode="legacy") as client:
                await client.list_tools()
        assert server.journal.last.http_method == "DELETE"
        assert [s.alive for s in server.sessions] == [False]


@pytest.mark.parametrize("response_mode", ["json", "sse"])
async def test_client_session_pages_by_cursor(via: str, response_mode: str) -> None:
    """ClientSession walks tools/list page by page with opaque cursors, nextCursor only where more pages exist."""
    server = _catalogue(page_size=2, response_mode=response_mode)
    async with serving(server, via):
        with anyio.fail_after(LIMIT_S):
            async with sdk_transport(server, via) as (read, write), ClientSession(read, write) as session:
                await session.initialize()
                pages = [await session.list_tools()]
                while pages[-1].next_cursor is not None:
                    cursor = pages[-1].next_cursor
                    pages.append(await session.list_tools(params=PaginatedRequestParams(cursor=cursor)))
        assert [[t.name for t in page.tools] for page in pages] == [["t1", "t2"], ["t3", "t4"], ["t5"]]
        cursors = [r.params.get("cursor") if r.params else None for r in server.journal.requests("tools/list")]
        assert cursors[0] is None
        assert cursors[1:] == [pages[0].next_cursor, pages[1].next_cursor]
        assert all(c and not c.isdigit() for c in cursors[1:])


async def test_one_page_has_no_next_cursor(via: str) -> None:
    """Without page_size the whole catalogue is one page and no nextCursor is sent."""
    server = _catalogue()
    async with serving(server, via) as wire:
        await wire.initialize()
        result = (await wire.request("tools/list"))["result"]
        assert [t["name"] for t in result["tools"]] == TOOL_NAMES
        assert "nextCursor" not in result


@pytest.mark.sends_invalid_mcp("the SDK client is made to send a cursor the server never gave, to see it refused")
@pytest.mark.parametrize("cursor", ["garbage", "", "bWNwdGs6OTk"])
async def test_invalid_cursor_is_32602(via: str, cursor: str) -> None:
    """A cursor the server never issued (garbage, empty, or past the end) is a JSON-RPC -32602."""
    server = _catalogue(page_size=2)
    async with serving(server, via):
        with anyio.fail_after(LIMIT_S):
            async with sdk_transport(server, via) as (read, write), ClientSession(read, write) as session:
                await session.initialize()
                with pytest.raises(MCPError) as caught:
                    await session.list_tools(params=PaginatedRequestParams(cursor=cursor))
                await session.list_tools()
        assert caught.value.code == -32602
        assert server.journal.requests("tools/list")[-2].response["error"]["code"] == -32602


async def test_every_answer_kind_reaches_the_sdk_client(via: str) -> None:
    """Text, structured content, image, audio, resource link, embedded resources and tool errors parse in the SDK."""
    server = TestMcpServer("kinds")
    server.tool("text", returns="plain")
    server.tool("structured", returns={"count": 2})
    server.tool(
        "blocks",
        returns=[
            mcp_types.ImageContent(type="image", data=PNG_1X1, mime_type="image/png"),
            {"type": "audio", "data": WAV_SILENCE, "mimeType": "audio/wav"},
            {"type": "resource_link", "uri": "file:///a.txt", "name": "a.txt"},
            {"type": "resource", "resource": {"uri": "test://t", "mimeType": "text/plain", "text": "inside"}},
            {"type": "resource", "resource": {"uri": "test://b", "mimeType": "app/bin", "blob": "AAE="}},
        ],
    )
    server.tool(
        "whole",
        returns=mcp_types.CallToolResult(content=[mcp_types.TextContent(type="text", text="w")], is_error=True),
    )
    server.tool("fails", returns=ToolError("no such ticket"))
    async with serving(server, via):
        with anyio.fail_after(LIMIT_S):
            async with Client(sdk_transport(server, via), mode="legacy") as client:
                results = {name: await client.call_tool(name, {}) for name in server.tools}
    assert results["text"].content == [mcp_types.TextContent(type="text", text="plain")]
    assert results["structured"].structured_content == {"count": 2}
    assert results["structured"].content[0].text == '{"count":2}'  # type: ignore[union-attr]
    kinds = [type(block).__name__ for block in results["blocks"].content]
    assert kinds == ["ImageContent", "AudioContent", "ResourceLink", "EmbeddedResource", "EmbeddedResource"]
    assert results["blocks"].content[4].resource.blob == "AAE="  # type: ignore[union-attr]
    assert (results["whole"].is_error, results["whole"].content[0].text) == (True, "w")  # type: ignore[union-attr]
    assert (results["fails"].is_error, results["fails"].content[0].text) == (True, "no such ticket")  # type: ignore[union-attr]
    assert not results["text"].is_error


async def test_unknown_tool_is_an_mcp_error(via: str) -> None:
    """Calling a tool the server does not have raises MCPError -32602 in the SDK client."""
    server = _catalogue()
    async with serving(server, via):
        with anyio.fail_after(LIMIT_S):
            async with sdk_transport(server, via) as (read, write), ClientSession(read, write) as session:
                await session.initialize()
                with pytest.raises(MCPError) as caught:
                    await session.call_tool("nope", {})
        assert caught.value.code == -32602
        assert server.executions() == 0


async def test_default_mode_mirrors_x_mcp_header_parameters(via: str) -> None:
    """Client() in its default mode speaks 2026-07-28 and sends the preset tool's Mcp-Param-Region header,
    base64 for a non-ASCII value, as the server's check requires: the call runs once, with the header."""
    server = TestMcpServer(preset="conformance")
    async with serving(server, via):
        with anyio.fail_after(LIMIT_S):
            async with Client(sdk_transport(server, via)) as client:
                result = await client.call_tool("test_mirrored_header", {"region": "Hello, 世界", "query": "q"})
    assert result.content == [mcp_types.TextContent(type="text", text="ran in Hello, 世界")]
    ran = [record for record in server.calls("test_mirrored_header") if record.executed]
    assert [(r.era, r.status, r.headers.get("mcp-param-region")) for r in ran] == [
        ("stateless", 200, "=?base64?SGVsbG8sIOS4lueVjA==?=")
    ]
    assert server.executions("test_mirrored_header") == 1
