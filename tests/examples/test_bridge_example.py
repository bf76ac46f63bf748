"""The usage example of docs/bridge.md, kept as a test so that the page never lies."""

from __future__ import annotations

import anyio
import pytest

from mcp_testkit import TestMcpServer, faults
from mcp_testkit.bridge import BearerToken, MCPCallOutcomeUnknown, ServerConfig, ToolPool

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    """The example runs on asyncio, as most applications do."""
    return "asyncio"


async def test_bridge_example(monkeypatch: pytest.MonkeyPatch) -> None:
    """A pool connects to a server, calls a read, and refuses to resend a write whose answer was lost."""
    monkeypatch.setenv("GH_MCP_TOKEN", "let-me-in")
    server = TestMcpServer("gh", page_size=1)
    server.require_header("Authorization", "Bearer let-me-in")
    server.tool("search_issues", read_only=True, returns="2 open issues")
    server.tool("close_issue", returns="closed")

    with anyio.fail_after(20):
        async with server:
            config = ServerConfig(name="gh", url=server.url, auth=BearerToken(env="GH_MCP_TOKEN"))
            async with ToolPool([config]) as pool:
                assert [tool.name for tool in pool.tools()] == ["gh.search_issues", "gh.close_issue"]
                assert await pool.call("gh.search_issues", {"q": "bug"}) == "2 open issues"

                server.inject(faults.Drop(after_execution=True), method="tools/call", tool="close_issue")
                with pytest.raises(MCPCallOutcomeUnknown, match="may have run"):
                    await pool.call("gh.close_issue", {"number": 7})

    assert server.executions("close_issue") == 1  # it ran once, and was not sent again


async def test_bridge_eras_example() -> None:
    """The bridge speaks 2026-07-28 to a server of both eras, the handshake to an older one, renegotiating a -32022."""
    modern = TestMcpServer("modern")
    legacy = TestMcpServer("legacy", eras=("handshake",))
    for server in (modern, legacy):
        server.tool("search", read_only=True, returns="found")

    with anyio.fail_after(20):
        async with modern, legacy:
            configs = [ServerConfig(name="m", url=modern.url), ServerConfig(name="l", url=legacy.url)]
            async with ToolPool(configs) as pool:
                assert (pool.era("m"), pool.era("l")) == ("stateless", "handshake")
                modern.inject(faults.UnsupportedVersion())  # -32022 offering 2026-07-28: renegotiated once
                assert await pool.call("m.search") == "found"

    assert [r.status for r in modern.calls("search")] == [400, 200]
    assert modern.journal.requests("initialize") == []
    assert [r.rpc_method for r in legacy.journal][:2] == ["server/discover", "initialize"]
