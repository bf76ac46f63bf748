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
