"""The pool's listen stream (2026-07-28): with its tool cache on it hears tool changes on `subscriptions/listen`,
drops the cached listing and offers the current tools; without a cache, or in the handshake era, it opens none."""

from __future__ import annotations

import anyio
import anyio.to_thread
import pytest

from mcp_testkit import TestMcpServer
from mcp_testkit.bridge import ToolCache, ToolPool

from .conftest import LIMIT_S, config_for, script_tools

pytestmark = pytest.mark.anyio


@pytest.fixture(autouse=True)
def _empty_cache() -> None:
    ToolCache.clear()


async def _offered(pool: ToolPool, wanted: set[str]) -> set[str]:
    """The tools the pool offers once they are `wanted`, or as they are when the limit passes."""
    offered: set[str] = set()
    with anyio.move_on_after(LIMIT_S):
        for _ in range(int(LIMIT_S * 100)):
            if (offered := {tool.name for tool in pool.tools()}) == wanted:
                break
            await anyio.sleep(0.01)
    return offered


async def _acknowledged(server: TestMcpServer) -> None:
    """Wait until the server acknowledged a listen stream (its record is still open, so no journal wait sees it)."""
    with anyio.fail_after(LIMIT_S):
        for _ in range(int(LIMIT_S * 100)):
            if any(record.response for record in server.journal.requests("subscriptions/listen")):
                return
            await anyio.sleep(0.01)


async def test_a_cached_pool_hears_a_tool_change_and_offers_the_current_tools() -> None:
    """A tool added at the server reaches the pool on its listen stream: it lists again and offers it, and the cache
    holds the new listing, not the old one."""
    server = script_tools(TestMcpServer(cache_ttl_s=60))
    with anyio.fail_after(LIMIT_S * 2):
        async with server, ToolPool([config_for(server, era="stateless")]) as pool:
            before = {tool.name for tool in pool.tools()}
            await _acknowledged(server)
            await anyio.to_thread.run_sync(lambda: server.tool("added", returns="ok"))
            after = await _offered(pool, before | {"t.added"})
            (key,) = ToolCache.keys()
            cached = {tool.name for tool in ToolCache.get(key) or []}
    assert after == before | {"t.added"}
    assert "added" in cached
    (listen,) = server.journal.requests("subscriptions/listen")
    assert listen.params is not None
    assert listen.params["notifications"] == {"toolsListChanged": True}


@pytest.mark.parametrize(("era", "cache"), [("stateless", False), ("handshake", True)])
async def test_no_listen_stream_without_a_cache_or_in_the_handshake_era(era: str, cache: bool) -> None:
    """A pool without a cache has nothing to keep fresh, and the handshake era has no listen: neither opens one."""
    server = script_tools(TestMcpServer())
    with anyio.fail_after(LIMIT_S):
        async with server, ToolPool([config_for(server, era=era)], cache=cache) as pool:
            await pool.call("t.search", {"q": "x"})
    assert server.journal.requests("subscriptions/listen") == []
