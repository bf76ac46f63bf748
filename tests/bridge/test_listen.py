"""The pool's change streams: with its tool cache on it hears tool changes on `subscriptions/listen` (2026-07-28) or
on the session's GET stream (the handshake era), drops the cached listing and offers the current tools; without a
cache it opens none, and a server that offers no GET stream (405) costs one GET and nothing else."""

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


# -- the handshake era's GET stream ----------------------------------------------------------------


async def _streaming(server: TestMcpServer, other_than: str | None = None) -> str:
    """The id of a live session whose GET stream is open (other than `other_than`), once there is one."""
    with anyio.fail_after(LIMIT_S):
        for _ in range(int(LIMIT_S * 100)):
            for session in server.sessions.alive:
                if session.outbox.streaming and session.id != other_than:
                    return session.id
            await anyio.sleep(0.01)
    raise AssertionError("no GET stream opened")


def _gets(server: TestMcpServer) -> list[tuple[str | None, int | None]]:
    """The GET requests the server saw: the session each named and the status it got."""
    return [(record.session_id, record.status) for record in server.journal if record.http_method == "GET"]


async def test_a_cached_pool_hears_a_tool_change_on_the_handshake_get_stream() -> None:
    """A tool added at the server reaches the pool on its session's GET stream: it lists again on a new session,
    offers the tool, keeps the new listing in the cache, and opens the new session's stream for the next change."""
    server = script_tools(TestMcpServer(get_stream=True))
    with anyio.fail_after(LIMIT_S * 2):
        async with server, ToolPool([config_for(server, era="handshake")]) as pool:
            before = {tool.name for tool in pool.tools()}
            first = await _streaming(server)
            await anyio.to_thread.run_sync(lambda: server.tool("added", returns="ok"))
            after = await _offered(pool, before | {"t.added"})
            second = await _streaming(server, other_than=first)
            await anyio.to_thread.run_sync(lambda: server.tool("again", returns="ok"))
            again = await _offered(pool, before | {"t.added", "t.again"})
            (key,) = ToolCache.keys()
            cached = {tool.name for tool in ToolCache.get(key) or []}
    assert after == before | {"t.added"}
    assert again == before | {"t.added", "t.again"}
    assert {"added", "again"} <= cached
    streams = [record for record in server.journal if record.http_method == "GET"]
    assert [record.session_id for record in streams[:2]] == [first, second]
    assert streams[0].response == [{"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}]
    assert streams[0].headers["accept"] == "text/event-stream"
    assert server.sessions.alive == []  # every session ended, so no stream was left open


async def test_a_server_without_a_get_stream_costs_one_get() -> None:
    """A 405 to the GET is the server offering no stream: the pool calls on, and a new session opens no new GET."""
    server = script_tools(TestMcpServer())
    with anyio.fail_after(LIMIT_S):
        async with server, ToolPool([config_for(server, era="handshake")]) as pool:
            await _get_seen(server)
            session_id = pool.session_id("t")
            await anyio.to_thread.run_sync(server.lose_session)
            assert await pool.call("t.search", {"q": "x"}) == "found"
            assert pool.session_id("t") != session_id
            assert await pool.call("t.search", {"q": "y"}) == "found"
    assert _gets(server) == [(session_id, 405)]


async def _get_seen(server: TestMcpServer) -> None:
    """Wait until the server answered a GET."""
    with anyio.fail_after(LIMIT_S):
        for _ in range(int(LIMIT_S * 100)):
            if any(record.http_method == "GET" and record.status for record in server.journal):
                return
            await anyio.sleep(0.01)


async def test_the_get_stream_follows_a_new_session_after_a_lost_one() -> None:
    """When the server loses the session, the next call opens a new one, and the pool opens its GET stream: a change
    after that is heard there."""
    server = script_tools(TestMcpServer(get_stream=True))
    with anyio.fail_after(LIMIT_S * 2):
        async with server, ToolPool([config_for(server, era="handshake")]) as pool:
            before = {tool.name for tool in pool.tools()}
            first = await _streaming(server)
            await anyio.to_thread.run_sync(server.lose_session)
            assert await pool.call("t.search", {"q": "x"}) == "found"
            second = await _streaming(server, other_than=first)
            assert second == pool.session_id("t")
            await anyio.to_thread.run_sync(lambda: server.tool("added", returns="ok"))
            after = await _offered(pool, before | {"t.added"})
    assert after == before | {"t.added"}
    assert [session for session, _ in _gets(server)][:2] == [first, second]


async def test_no_get_stream_without_a_cache() -> None:
    """A pool without a cache has no listing to keep fresh: it opens no GET stream, even where the server offers
    one."""
    server = script_tools(TestMcpServer(get_stream=True))
    with anyio.fail_after(LIMIT_S):
        async with server, ToolPool([config_for(server, era="handshake")], cache=False) as pool:
            await pool.call("t.search", {"q": "x"})
    assert _gets(server) == []


async def test_closing_the_pool_closes_its_get_stream() -> None:
    """Closing the pool closes the GET stream itself, not only through the session's DELETE: with a server that
    refuses DELETE the session outlives the pool, and its stream still ends."""
    server = script_tools(TestMcpServer(get_stream=True, allow_delete=False))
    with anyio.fail_after(LIMIT_S):
        async with server:
            async with ToolPool([config_for(server, era="handshake")]):
                session_id = await _streaming(server)
            for _ in range(int(LIMIT_S * 100)):
                if not server.session(session_id).outbox.streaming:
                    break
                await anyio.sleep(0.01)
            assert [session.id for session in server.sessions.alive] == [session_id]
            assert not server.session(session_id).outbox.streaming
