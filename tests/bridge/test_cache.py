"""The tool-list cache (bridge-b "What it costs": the process-level cache of tool schemas), over a real socket.

Time moves by a clock the test holds (``ToolCache.configure(clock=...)``), never by sleeping.
"""

from __future__ import annotations

import math
from typing import Any

import anyio
import httpx2
import pytest

from mcp_testkit import TestMcpServer, faults
from mcp_testkit.bridge import (
    BearerToken,
    MCPAuthError,
    MCPConnectionError,
    ServerConfig,
    ToolCache,
    ToolPool,
    describe_tools,
)

from .conftest import LIMIT_S, config_for, script_tools

pytestmark = pytest.mark.anyio

KEEP_S = 3600


def _cacheable(*args: Any, **options: Any) -> TestMcpServer:
    """A server whose 2026-07-28 listings may be cached for an hour (`ttlMs`): the bridge's own TTL governs."""
    return TestMcpServer(*args, cache_ttl_s=KEEP_S, **options)


class Clock:
    """A monotonic clock that moves only when the test says so."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    """The cache's clock for this test (the root conftest resets the cache to its defaults afterwards)."""
    held = Clock()
    ToolCache.configure(clock=held)
    return held


def _methods(server: TestMcpServer, since: int = 0) -> list[str]:
    """The requests since record `since`, but the handshake GET stream a cached pool opens beside them (its own test
    is in test_listen.py)."""
    return [record.rpc_method or record.http_method for record in server.journal.records[since:]
            if record.http_method != "GET"]


async def _names(config: ServerConfig, **options: Any) -> list[str]:
    """The tools a new pool over ``config`` loads."""
    async with ToolPool([config], **options) as pool:
        return [tool.bare_name for tool in pool.tools()]


async def test_bridge_b_tool_cache_hit_connects_only_when_a_tool_is_called() -> None:
    """A miss connects and lists; a hit loads the same tools with no request, and connects at the first call."""
    server = script_tools(_cacheable(page_size=2))
    with anyio.fail_after(LIMIT_S):
        async with server:
            config = config_for(server, era="handshake")  # its sessions show when it connects
            assert await _names(config) == ["search", "create", "upsert"]
            assert _methods(server) == ["initialize", "notifications/initialized", "tools/list", "tools/list", "DELETE"]
            before = len(server.journal)
            async with ToolPool([config]) as pool:
                assert [tool.bare_name for tool in pool.tools()] == ["search", "create", "upsert"]
                assert len(server.journal) == before, "a hit sends nothing at entry"
                assert pool.session_id("t") is None
                assert await pool.call("t.search") == "found"
                assert pool.session_id("t") == server.session().id
            async with ToolPool([config]):
                pass
    assert _methods(server, before) == ["initialize", "notifications/initialized", "tools/call", "DELETE"]


async def test_bridge_b_tool_cache_keeps_only_schemas_never_results() -> None:
    """A hit loads each tool's description, schema and classification; every call still goes to the server."""
    server = script_tools(_cacheable())
    server.tool("peek", description="Peek.", input_schema={"type": "object", "properties": {"q": {"type": "string"}}})
    with anyio.fail_after(LIMIT_S):
        async with server:
            config = config_for(server, overrides={"peek": "read"})
            async with ToolPool([config]) as pool:
                listed, described = pool.tools(), [str(d) for d in describe_tools(pool)]
                assert await pool.call("t.search") == "found"
            async with ToolPool([config]) as cached:
                assert cached.tools() == listed
                assert [str(d) for d in describe_tools(cached)] == described
                assert await cached.call("t.search") == "found"
    assert _methods(server).count("tools/list") == 1
    assert server.executions("search") == 2


async def test_bridge_b_tool_cache_entries_are_isolated_by_credential(monkeypatch: pytest.MonkeyPatch) -> None:
    """One credential's cached listing is never served to another: a new credential lists for itself."""
    server = script_tools(_cacheable())
    config_token = BearerToken(env="CACHE_TEST_TOKEN")
    with anyio.fail_after(LIMIT_S):
        async with server:
            config = config_for(server, auth=config_token)
            monkeypatch.setenv("CACHE_TEST_TOKEN", "alice")
            assert await _names(config) == ["search", "create", "upsert"]
            server.tool("delete")
            monkeypatch.setenv("CACHE_TEST_TOKEN", "bob")
            assert await _names(config) == ["search", "create", "upsert", "delete"]
            monkeypatch.setenv("CACHE_TEST_TOKEN", "alice")
            assert await _names(config) == ["search", "create", "upsert"], "alice's entry is still fresh"
    listings = server.journal.requests("tools/list")
    assert [record.headers["authorization"] for record in listings] == ["Bearer alice", "Bearer bob"]
    assert len(ToolCache.keys()) == 2


async def test_bridge_b_tool_cache_entries_are_isolated_by_endpoint_and_tool_lists() -> None:
    """Another URL, another allow list or another deny list is another entry, listed for itself."""
    server = script_tools(_cacheable())
    with anyio.fail_after(LIMIT_S):
        async with server:
            configs = [
                config_for(server),
                ServerConfig(name="t", url=server.url + "?tenant=2", connect_backoff_s=0.0),
                config_for(server, allow={"search", "create"}),
                config_for(server, allow={"search"}),
                config_for(server, deny={"search"}),
            ]
            names = [await _names(config) for config in configs]
            again = [await _names(config) for config in configs]
    assert (
        names
        == again
        == [
            ["search", "create", "upsert"],
            ["search", "create", "upsert"],
            ["search", "create"],
            ["search"],
            ["create", "upsert"],
        ]
    )
    assert _methods(server).count("tools/list") == 5, "each entry was listed once"


async def test_bridge_b_tool_cache_entries_are_isolated_by_era() -> None:
    """A listing kept by a pool of one era is not served to a pool of another: a tool whose x-mcp-header mark is
    invalid is listed in the handshake era and left out in the 2026-07-28 era, each era listing for itself."""
    server = script_tools(_cacheable())
    bad_mark = {"type": "object", "properties": {"n": {"type": "number", "x-mcp-header": "N"}}}
    server.tool("measure", read_only=True, input_schema=bad_mark, returns="measured")
    with anyio.fail_after(LIMIT_S):
        async with server:
            names = {era: await _names(config_for(server, era=era)) for era in ("handshake", "stateless", "auto")}
            again = {era: await _names(config_for(server, era=era)) for era in ("handshake", "stateless", "auto")}
    assert names == again
    assert "measure" in names["handshake"]
    assert "measure" not in names["stateless"]
    assert "measure" not in names["auto"]  # auto speaks 2026-07-28 to a server of both eras
    assert _methods(server).count("tools/list") == 3, "each era's entry was listed once"


async def test_bridge_b_tool_cache_never_hides_a_change_past_its_ttl(clock: Clock) -> None:
    """Within ttl_s a hit serves the listing it kept; at ttl_s the entry is gone and the server is listed again."""
    server = script_tools(_cacheable())
    with anyio.fail_after(LIMIT_S):
        async with server:
            config = config_for(server)
            assert await _names(config) == ["search", "create", "upsert"]
            server.remove_tool("create")
            clock.now += 299.9
            assert await _names(config) == ["search", "create", "upsert"]
            clock.now += 0.1
            assert await _names(config) == ["search", "upsert"]
    assert _methods(server).count("tools/list") == 2


async def test_bridge_b_tool_cache_configure_ttl_and_max_entries(clock: Clock) -> None:
    """configure(ttl_s=...) shortens the life of entries; max_entries drops the least recently used."""
    servers = [script_tools(_cacheable(f"s{n}")) for n in range(3)]
    ToolCache.configure(ttl_s=10, max_entries=2)
    with anyio.fail_after(LIMIT_S):
        async with servers[0], servers[1], servers[2]:
            configs = [config_for(server) for server in servers]
            for config in configs[:2]:
                await _names(config)
            await _names(configs[0])  # a hit: s0 is now the most recently used
            await _names(configs[2])  # a third entry: s1, the least recently used, is dropped
            await _names(configs[0])
            await _names(configs[1])
            assert [len(server.journal.requests("tools/list")) for server in servers] == [1, 2, 1]
            clock.now += 9.9
            await _names(configs[1])
            clock.now += 0.1
            await _names(configs[1])
    assert [len(server.journal.requests("tools/list")) for server in servers] == [1, 3, 1]
    assert len(ToolCache.keys()) == 1


async def test_bridge_b_tool_cache_clear_and_disabled_per_pool() -> None:
    """clear() forgets every listing; a pool built with cache=False lists at entry and keeps nothing."""
    server = script_tools(_cacheable())
    with anyio.fail_after(LIMIT_S):
        async with server:
            config = config_for(server)
            await _names(config, cache=False)
            await _names(config, cache=False)
            assert ToolCache.keys() == []
            await _names(config)
            await _names(config)
            ToolCache.clear()
            assert ToolCache.keys() == []
            await _names(config)
    assert _methods(server).count("tools/list") == 4


async def test_bridge_b_tool_cache_keeps_no_failed_listing() -> None:
    """A listing that failed is not kept: the next pool lists again and loads the whole catalogue."""
    server = script_tools(_cacheable(page_size=1))
    with anyio.fail_after(LIMIT_S):
        async with server:
            config = config_for(server)
            server.inject(faults.PageError(2), method="tools/list")
            with pytest.raises(MCPConnectionError):
                await _names(config)
            assert ToolCache.keys() == []
            assert await _names(config) == ["search", "create", "upsert"]


async def test_bridge_b_tool_cache_hit_still_reads_credentials_at_connect(monkeypatch: pytest.MonkeyPatch) -> None:
    """On a hit a missing credential variable still fails start-up, naming it, before anything is sent."""
    server = script_tools(_cacheable())
    with anyio.fail_after(LIMIT_S):
        async with server:
            config = config_for(server, auth=BearerToken(env="CACHE_TEST_TOKEN"))
            monkeypatch.setenv("CACHE_TEST_TOKEN", "alice")
            await _names(config)
            before = len(server.journal)
            monkeypatch.delenv("CACHE_TEST_TOKEN")
            with pytest.raises(MCPAuthError, match="environment variable 'CACHE_TEST_TOKEN' is not set"):
                await _names(config)
    assert len(server.journal) == before


async def test_bridge_b_tool_cache_hit_checks_approval_names_against_the_kept_listing() -> None:
    """require_approval naming a tool absent from a cached listing still fails at connect, with no request."""
    server = script_tools(_cacheable())
    with anyio.fail_after(LIMIT_S):
        async with server:
            await _names(config_for(server))
            before = len(server.journal)
            with pytest.raises(MCPConnectionError, match="require_approval names 'nope'"):
                await _names(config_for(server, require_approval={"always": ["nope"]}))
    assert len(server.journal) == before


async def test_bridge_b_tool_cache_in_process_transport_is_part_of_the_endpoint() -> None:
    """Through a transport of its own the URL names no endpoint: each transport has its entries, reused by it."""
    first, second = script_tools(_cacheable("one")), _cacheable("two")
    second.tool("other")
    to_first, to_second = httpx2.ASGITransport(app=first.asgi_app), httpx2.ASGITransport(app=second.asgi_app)
    config = ServerConfig(name="t", url="http://127.0.0.1/mcp")
    with anyio.fail_after(LIMIT_S):
        assert await _names(config, transport=to_first) == ["search", "create", "upsert"]
        assert await _names(config, transport=to_second) == ["other"]
        assert await _names(config, transport=to_first) == ["search", "create", "upsert"]
    assert len(first.journal.requests("tools/list")) == 1


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"ttl_s": 0}, "ttl_s must be a positive, finite number"),
        ({"ttl_s": math.inf}, "ttl_s must be a positive, finite number"),
        ({"ttl_s": math.nan}, "ttl_s must be a positive, finite number"),
        ({"max_entries": 0}, "max_entries must be a positive int"),
        ({"max_entries": 1.5}, "max_entries must be a positive int"),
        ({"max_entries": True}, "max_entries must be a positive int"),
    ],
)
def test_bridge_b_tool_cache_refuses_impossible_settings(settings: dict[str, Any], message: str) -> None:
    """configure() refuses a TTL or size that cannot work, naming it, and changes nothing."""
    with pytest.raises(ValueError, match=message):
        ToolCache.configure(**settings)
    assert (ToolCache.ttl_s, ToolCache.max_entries) == (300.0, 100)


def test_bridge_b_tool_cache_is_process_level() -> None:
    """ToolCache is the one cache of the process: it is not instantiated, and a pool takes cache=True or False."""
    with pytest.raises(TypeError, match="use its class methods"):
        ToolCache()
    with pytest.raises(TypeError, match="cache takes True"):
        ToolPool([], cache="yes")  # type: ignore[arg-type]


@pytest.mark.parametrize(("ttl_ms", "kept_s"), [(0, 0.0), (20_000, 20.0), (3_600_000, 300.0)])
async def test_a_listing_is_cached_no_longer_than_the_server_s_ttl_ms(clock: Clock, ttl_ms: int, kept_s: float) -> None:
    """2026-07-28: a listing is kept for the shorter of the cache's TTL and the server's `ttlMs`; `ttlMs: 0` is never
    kept. The handshake era's listings carry no `ttlMs`: there the cache's TTL alone governs."""
    server = script_tools(TestMcpServer(cache_ttl_s=ttl_ms / 1000))
    with anyio.fail_after(LIMIT_S):
        async with server:
            stateless, handshake = config_for(server, era="stateless"), config_for(server, era="handshake")
            await _names(stateless)
            await _names(handshake)
            server.remove_tool("create")
            if kept_s:
                clock.now += kept_s - 0.1
                assert await _names(stateless) == ["search", "create", "upsert"], "kept within its ttlMs"
            clock.now += 0.1
            assert await _names(stateless) == ["search", "upsert"], "not kept past the server's ttlMs"
            assert await _names(handshake) == ["search", "create", "upsert"] if kept_s < 300 else ["search", "upsert"]
