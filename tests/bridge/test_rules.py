"""The rules of the reference bridge, one test (or a few) per rule, over a real socket, in both protocol eras.

Each test takes `era`: the bridge speaks the handshake era or the stateless era (2026-07-28) to a
server that offers both. Where a rule has no meaning in the stateless era (sessions), the test
names the stateless rule that replaces it.
"""

from __future__ import annotations

import json
import re
import socket
from typing import Any

import anyio
import mcp_types
import pytest

from mcp_testkit import Record, TestMcpServer, ToolError, faults
from mcp_testkit.bridge import (
    BearerToken,
    Headers,
    MCPAuthError,
    MCPCallOutcomeUnknown,
    MCPConnectionError,
    MCPToolError,
    ServerConfig,
    ToolPool,
    describe_tools,
)
from mcp_testkit.bridge._link import backoff_delays

from .conftest import CONNECT, LIMIT_S, OPENING, CountingTransport, config_for, is_change_stream, script_tools

pytestmark = pytest.mark.anyio


def _method(record: Record) -> str:
    """The record's JSON-RPC method, read from the body when the server refused it before decoding."""
    if record.rpc_method is None and record.body:
        return str(json.loads(record.body).get("method", record.http_method))
    return record.rpc_method or record.http_method


def _methods(server: TestMcpServer) -> list[str]:
    """The journal as a list of JSON-RPC methods (or HTTP methods for bodiless requests), without the pool's change
    stream (`subscriptions/listen`, the handshake's GET), which opens beside the other requests at no fixed place."""
    return [_method(record) for record in server.journal if not _change_stream(record)]


def _change_stream(record: Record) -> bool:
    return record.rpc_method == "subscriptions/listen" or is_change_stream(record.http_method, record.headers)


def _closed_port() -> int:
    """A loopback port nothing listens on: bound, then released."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


# -- rule 1: start-up ---------------------------------------------------------------------------------


async def test_rule_01_startup_connects_then_reads_the_listing(era: str) -> None:
    """Start-up connects each server (a session: initialize, initialized; stateless: server/discover), then lists."""
    one = script_tools(TestMcpServer("one", page_size=1))
    two = script_tools(TestMcpServer("two", page_size=2))
    with anyio.fail_after(LIMIT_S):
        async with one, two, ToolPool([config_for(one, "one", era=era), config_for(two, "two", era=era)]) as pool:
            assert [tool.name for tool in pool.tools("one")] == ["one.search", "one.create", "one.upsert"]
            assert len(pool.tools()) == 6
            for server, pages in ((one, 3), (two, 2)):
                assert _methods(server) == [*OPENING[era], *["tools/list"] * pages]
                assert "mcp-session-id" not in server.journal.records[0].headers
                assert {record.era for record in server.journal} == {era}
                assert pool.era(server.name) == era
                session_ids = {record.session_id for record in server.journal}
                if era == "handshake":
                    assert session_ids == {server.session().id} == {pool.session_id(server.name)}
                else:
                    assert session_ids == {None} == {pool.session_id(server.name)}
                    assert len(server.sessions) == 0


async def test_rule_01_unreachable_server_is_retried_then_startup_fails(era: str) -> None:
    """A connect (handshake or probe) that fails is retried connect_retries times; then start-up fails."""
    server = script_tools(TestMcpServer())
    with anyio.fail_after(LIMIT_S):
        async with server:
            server.inject(faults.Drop(), method=CONNECT[era], times=None)
            with pytest.raises(MCPConnectionError, match=r"server 't': could not connect after 3 attempts"):
                async with ToolPool([config_for(server, connect_retries=2, era=era)]):
                    pass
    assert _methods(server) == [CONNECT[era]] * 3


async def test_rule_01_handshake_succeeds_within_its_retries(era: str) -> None:
    """Two dropped connects and connect_retries=2: the third attempt connects and lists."""
    server = script_tools(TestMcpServer())
    with anyio.fail_after(LIMIT_S):
        async with server:
            server.inject(faults.Drop(), method=CONNECT[era], times=2)
            async with ToolPool([config_for(server, connect_retries=2, era=era)]) as pool:
                assert len(pool.tools()) == 3
    assert _methods(server)[:4] == [CONNECT[era]] * 3 + [*OPENING[era][1:], "tools/list"][:1]


async def test_rule_01_closed_port_fails_startup_after_retries(era: str) -> None:
    """Nothing listening: every attempt is refused and start-up fails with MCPConnectionError."""
    config = ServerConfig(
        name="gone",
        url=f"http://127.0.0.1:{_closed_port()}/mcp",
        connect_retries=1,
        connect_backoff_s=0.0,
        era=era,  # type: ignore[arg-type]
    )
    with (
        anyio.fail_after(LIMIT_S),
        pytest.raises(
            MCPConnectionError,
            match=r"server 'gone': could not connect after 2 attempts.*could not be reached",
        ),
    ):
        async with ToolPool([config]):
            pass


async def test_rule_01_handshake_bounded_by_connect_timeout(era: str) -> None:
    """A connect slower than connect_timeout_s counts as a failed attempt."""
    server = script_tools(TestMcpServer())
    with anyio.fail_after(LIMIT_S):
        async with server:
            server.inject(faults.Delay(1.0), method=CONNECT[era], times=None)
            config = config_for(server, connect_timeout_s=0.2, connect_retries=0, era=era)
            with pytest.raises(MCPConnectionError, match=r"did not answer within 0.2s"):
                async with ToolPool([config]):
                    pass


def test_rule_01_backoff_doubles_from_connect_backoff() -> None:
    """The waits between connect attempts double from connect_backoff_s, one per retry."""
    config = ServerConfig(name="t", url="http://127.0.0.1:1/mcp", connect_retries=3, connect_backoff_s=0.5)
    assert backoff_delays(config) == [0.5, 1.0, 2.0]


# -- rule 2: the listing ------------------------------------------------------------------------------

LISTING_FAULTS = [
    pytest.param(faults.RepeatCursor(2), {}, 2, "repeated cursor", id="repeat-cursor"),
    pytest.param(faults.StuckCursor(2), {}, 3, "repeated cursor", id="stuck-cursor"),
    pytest.param(faults.DuplicateTool(1), {}, 1, "listed tool .* twice", id="duplicate-same-page"),
    pytest.param(faults.DuplicateTool(3), {}, 3, "listed tool .* twice", id="duplicate-later-page"),
    pytest.param(faults.PageError(2), {}, 1, "JSON-RPC error -32603 for page 2", id="page-error"),
    pytest.param(faults.MalformedPage(2), {}, 1, "failed on page 2", id="malformed-page"),
    pytest.param(faults.InvalidCursor(2), {}, 1, "JSON-RPC error -32602 for page 2", id="invalid-cursor"),
    pytest.param(faults.ListChanged(2), {}, 2, "interrupted by notifications/tools/list_changed", id="list-changed"),
    pytest.param(faults.EndlessPages(), {"max_tool_pages": 4}, 4, "more than max_tool_pages=4", id="endless"),
    pytest.param(faults.SlowPage(2, 1.0), {"connect_timeout_s": 0.3}, 1, "did not finish", id="slow-page"),
]


@pytest.mark.parametrize(("fault", "options", "pages", "why"), LISTING_FAULTS)
async def test_rule_02_listing_fails_whole(era: str, fault: Any, options: dict[str, Any], pages: int, why: str) -> None:
    """A listing that cannot be read to its end fails whole, naming the server and the pages read."""
    server = script_tools(TestMcpServer(page_size=1))
    server.tool("delete", description="Delete a thing.", destructive=True)
    with anyio.fail_after(LIMIT_S):
        async with server:
            server.inject(fault, method="tools/list")
            pool = ToolPool([config_for(server, era=era, **options)])
            with pytest.raises(MCPConnectionError) as caught:
                async with pool:
                    pass
    message = str(caught.value)
    assert message.startswith("server 't': tool listing ")
    assert re.search(why, message), message
    assert f"after {pages} page{'s' if pages != 1 else ''};" in message
    assert pool.tools() == []
    assert _methods(server).count(CONNECT[era]) == 1, "a failed listing is not retried"


async def test_rule_02_an_empty_cursor_ends_a_listing_only_in_the_handshake_era(era: str) -> None:
    """nextCursor "" fails a handshake-era listing; in the stateless era it is a cursor, followed to the end."""
    server = script_tools(TestMcpServer(page_size=1))
    with anyio.fail_after(LIMIT_S):
        async with server:
            server.inject(faults.EmptyCursor(1))
            pool = ToolPool([config_for(server, era=era)])
            if era == "handshake":
                with pytest.raises(MCPConnectionError, match=r"got an empty nextCursor after 1 page;"):
                    async with pool:
                        pass
            else:
                async with pool:
                    assert [tool.bare_name for tool in pool.tools()] == ["search", "create", "upsert"]
    cursors = [(r.params or {}).get("cursor") for r in server.journal.requests("tools/list")]
    assert cursors[: 1 + (era == "stateless")] == [None, ""][: 1 + (era == "stateless")]


async def test_rule_02_catalogue_change_announced_mid_walk_fails_listing(era: str) -> None:
    """A catalogue that changes while it is paged, announced on the page's SSE stream, fails the listing."""
    server = script_tools(TestMcpServer(page_size=1, response_mode="sse"))
    server.tool("delete")
    with anyio.fail_after(LIMIT_S):
        async with server:
            # the server announces the change on the stream of the page after the change
            server.inject(faults.CatalogueChange(2, remove=("search",)))
            with pytest.raises(MCPConnectionError, match=r"interrupted by notifications/tools/list_changed"):
                async with ToolPool([config_for(server, era=era)]):
                    pass
    assert _methods(server).count(CONNECT[era]) == 1


async def test_rule_02_listing_needs_more_pages_than_allowed(era: str) -> None:
    """A catalogue of four one-tool pages fails with max_tool_pages=3, after reading exactly three."""
    server = script_tools(TestMcpServer(page_size=1))
    server.tool("delete")
    with anyio.fail_after(LIMIT_S):
        async with server:
            with pytest.raises(MCPConnectionError, match=r"more than max_tool_pages=3 pages after 3 pages"):
                async with ToolPool([config_for(server, max_tool_pages=3, era=era)]):
                    pass
    assert _methods(server).count("tools/list") == 3


# -- rule 3: names ------------------------------------------------------------------------------------


async def test_rule_03_names_allow_deny_and_collisions(era: str) -> None:
    """Tools are named server.tool, filtered by bare name, and a name two tools share fails start-up."""
    server = script_tools(TestMcpServer())
    server.tool("b.c")
    other = TestMcpServer("other")
    other.tool("c")
    with anyio.fail_after(LIMIT_S):
        async with server, other:
            configs = [
                config_for(server, "a", allow={"search", "create", "b.c"}, deny={"create"}, era=era),
                config_for(other, "a.b", era=era),
            ]
            with pytest.raises(MCPConnectionError, match=r"tool name 'a.b.c' is also the name of a tool"):
                async with ToolPool(configs):
                    pass
            configs[1] = config_for(other, "o", era=era)
            async with ToolPool(configs) as pool:
                assert [tool.name for tool in pool.tools()] == ["a.search", "a.b.c", "o.c"]
                assert [tool.bare_name for tool in pool.tools()] == ["search", "b.c", "c"]
                assert await pool.call("a.search") == "found"
    assert server.journal.calls("search")[0].tool == "search"


# -- rule 4: read or write ----------------------------------------------------------------------------


async def test_rule_04_read_write_classification_and_overrides(era: str) -> None:
    """readOnlyHint makes a read; anything else a write; overrides beat the hint; idempotentHint resends."""
    server = script_tools(TestMcpServer())
    server.tool("peek", read_only=True)
    server.tool("look", read_only=False)
    overrides = {"peek": "write", "create": "read"}
    with anyio.fail_after(LIMIT_S):
        async with server, ToolPool([config_for(server, overrides=overrides, era=era)]) as pool:
            kinds = {t.bare_name: (t.kind, t.idempotent, t.classified_by) for t in pool.tools()}
            lines = [str(description) for description in describe_tools(pool)]
    assert kinds == {
        "search": ("read", False, "hint"),
        "create": ("read", False, "override"),
        "upsert": ("write", True, "default"),
        "peek": ("write", False, "override"),
        "look": ("write", False, "hint"),
    }
    assert lines == [
        "t.search: read, may be resent (readOnlyHint: true)",
        "t.create: read, may be resent (overrides say 'read')",
        "t.upsert: write, may be resent (default: no readOnlyHint, idempotentHint: true)",
        "t.peek: write, never resent (overrides say 'write')",
        "t.look: write, never resent (readOnlyHint: false)",
    ]


async def test_rule_04_override_write_is_never_resent(era: str) -> None:
    """A read-only tool overridden to 'write' is not sent again after a drop: outcome unknown."""
    server = script_tools(TestMcpServer())
    with anyio.fail_after(LIMIT_S):
        async with server, ToolPool([config_for(server, overrides={"search": "write"}, era=era)]) as pool:
            server.inject(faults.Drop(after_execution=True), method="tools/call", tool="search")
            with pytest.raises(MCPCallOutcomeUnknown):
                await pool.call("t.search")
    assert server.executions("search") == 1
    assert len(server.journal.calls("search")) == 1


# -- rule 5: credentials ------------------------------------------------------------------------------


async def test_rule_05_missing_variable_fails_startup_naming_it(monkeypatch: pytest.MonkeyPatch, era: str) -> None:
    """A credential variable that is not set fails start-up, naming the variable, before any request."""
    monkeypatch.delenv("BRIDGE_TEST_TOKEN", raising=False)
    server = script_tools(TestMcpServer())
    with anyio.fail_after(LIMIT_S):
        async with server:
            config = config_for(server, auth=BearerToken(env="BRIDGE_TEST_TOKEN"), era=era)
            with pytest.raises(MCPAuthError, match=r"environment variable 'BRIDGE_TEST_TOKEN' is not set"):
                async with ToolPool([config]):
                    pass
    assert len(server.journal) == 0


@pytest.mark.parametrize("status", [401, 403])
@pytest.mark.parametrize("method", ["connect", "tools/list"])
async def test_rule_05_auth_refused_at_startup_is_not_retried(
    monkeypatch: pytest.MonkeyPatch, status: int, method: str, era: str
) -> None:
    """401 or 403 at the connect (handshake or probe) or the listing raises MCPAuthError once: no retry."""
    monkeypatch.setenv("BRIDGE_TEST_KEY", "key-1")
    method = CONNECT[era] if method == "connect" else method
    server = script_tools(TestMcpServer())
    with anyio.fail_after(LIMIT_S):
        async with server:
            server.require_header("X-Api-Key", "key-1")
            server.inject(faults.HttpStatus(status), method=method)
            config = config_for(server, auth=Headers(env={"X-Api-Key": "BRIDGE_TEST_KEY"}), era=era)
            with pytest.raises(MCPAuthError) as caught:
                async with ToolPool([config]):
                    pass
    assert str(caught.value) == f"server 't': refused the credentials (HTTP {status})"
    assert caught.value.status == status
    assert _methods(server).count(CONNECT[era]) == 1
    assert _methods(server).count(method) == 1


async def test_rule_05_refused_call_then_rotated_token_is_read_again(monkeypatch: pytest.MonkeyPatch, era: str) -> None:
    """A refused call raises MCPAuthError, no reconnect; the next call reconnects with the new token."""
    monkeypatch.setenv("BRIDGE_TEST_TOKEN", "old-token")
    server = script_tools(TestMcpServer())
    server.require_header("Authorization", "Bearer old-token")
    auth = BearerToken(env="BRIDGE_TEST_TOKEN")
    with anyio.fail_after(LIMIT_S):
        async with server, ToolPool([config_for(server, auth=auth, era=era)]) as pool:
            server.rotate_header("Authorization", "Bearer new-token")
            with pytest.raises(MCPAuthError, match=r"^server 't': refused the credentials \(HTTP 401\)$"):
                await pool.call("t.search")
            assert _methods(server)[-1] == "tools/call", "a refused call is neither retried nor reconnected"
            before = len(server.journal)
            monkeypatch.setenv("BRIDGE_TEST_TOKEN", "new-token")
            assert await pool.call("t.search") == "found"
    after = [r for r in server.journal.records[before:] if not _change_stream(r)]
    # a session of the handshake era is ended first (with DELETE); the stateless era has none to end
    ended = ["DELETE"] if era == "handshake" else []
    assert [_method(r) for r in after][: len(ended) + len(OPENING[era]) + 1] == [*ended, *OPENING[era], "tools/call"]
    reconnect = after[len(ended)]
    assert reconnect.headers["authorization"] == "Bearer new-token"
    assert "mcp-session-id" not in reconnect.headers
    assert server.calls("search")[-1].status == 200
    assert server.executions("search") == 1


# -- rule 6: serialized calls, reconnect before send --------------------------------------------------


async def test_rule_06_calls_to_one_server_are_serialized(era: str) -> None:
    """Concurrent calls to one server never have two requests in flight at once."""
    server = script_tools(TestMcpServer())
    transport = CountingTransport()
    with anyio.fail_after(LIMIT_S):
        async with transport, server, ToolPool([config_for(server, era=era)], transport=transport) as pool:
            # the first call is slow, so that unserialized calls would certainly overlap it
            server.inject(faults.Delay(0.2), method="tools/call")
            results: list[str] = []

            async def call() -> None:
                results.append(await pool.call("t.search", {"q": "x"}))

            async with anyio.create_task_group() as group:
                for _ in range(5):
                    group.start_soon(call)
    assert results == ["found"] * 5
    assert transport.peak == 1
    assert len(server.journal.calls("search")) == 5


async def test_rule_06_lost_session_reconnects_then_sends() -> None:
    """Handshake era: a call that finds its session gone (404) opens a new session, then sends the call there."""
    server = script_tools(TestMcpServer())
    with anyio.fail_after(LIMIT_S):
        async with server, ToolPool([config_for(server, era="handshake")]) as pool:
            first = pool.session_id("t")
            server.lose_session()
            assert await pool.call("t.create", {"name": "x"}) == "created"
            second = pool.session_id("t")
    assert first != second
    calls = server.journal.calls("create")
    assert [(c.session_id, c.status) for c in calls] == [(first, 404), (second, 200)]
    fresh = server.journal.requests("initialize")[-1]
    assert "mcp-session-id" not in fresh.headers
    assert fresh.seq < calls[1].seq
    assert server.executions("create") == 1


async def test_rule_06_stateless_a_32022_renegotiates_once() -> None:
    """Stateless era (no session to lose): a -32022 offering the version again sends the call once more, new id."""
    server = script_tools(TestMcpServer())
    with anyio.fail_after(LIMIT_S):
        async with server, ToolPool([config_for(server, era="stateless")]) as pool:
            server.inject(faults.UnsupportedVersion(), method="tools/call", tool="create")
            assert await pool.call("t.create") == "created"
            server.inject(faults.UnsupportedVersion(), method="tools/call", tool="create", times=2)
            with pytest.raises(MCPConnectionError, match=r"refused with -32022 after renegotiating .* once"):
                await pool.call("t.create")
    calls = server.calls("create")
    assert [(c.status, c.executed) for c in calls] == [(400, False), (200, True), (400, False), (400, False)]
    assert len({c.rpc_id for c in calls}) == 4, "each sending has a new id"
    assert server.executions("create") == 1


async def test_rule_06_stateless_a_32020_lists_again_and_sends_once_more() -> None:
    """Stateless era: a -32020 to a call (refused before it ran) lists the tools again and sends the call once
    more, which runs; a second -32020 is a connection error naming the header, and the write never ran."""
    server = script_tools(TestMcpServer())
    with anyio.fail_after(LIMIT_S):
        async with server, ToolPool([config_for(server, era="stateless")]) as pool:
            server.inject(faults.HeaderMismatch("Mcp-Name"), method="tools/call", tool="create")
            assert await pool.call("t.create") == "created"
            server.inject(faults.HeaderMismatch("Mcp-Name"), method="tools/call", tool="create", times=2)
            with pytest.raises(
                MCPConnectionError, match=r"HeaderMismatch \(-32020\): Mcp-Name did not match"
            ) as caught:
                await pool.call("t.create")
    assert "also after listing the tools again" in str(caught.value)
    assert "bug of the bridge" in str(caught.value)
    calls = [(r.rpc_method, r.status) for r in server.journal if r.rpc_method in ("tools/call", "tools/list")]
    assert calls[1:] == [
        ("tools/call", 400),
        ("tools/list", 200),
        ("tools/call", 200),
        ("tools/call", 400),
        ("tools/list", 200),
        ("tools/call", 400),
    ]
    assert server.executions("create") == 1


# -- rule 7: resend only when safe --------------------------------------------------------------------


async def test_rule_07_write_not_resent_after_drop(era: str) -> None:
    """A write whose connection (or response stream) breaks after it ran is not resent: outcome unknown, ledger 1."""
    server = script_tools(TestMcpServer())
    with anyio.fail_after(LIMIT_S):
        async with server, ToolPool([config_for(server, era=era)]) as pool:
            server.inject(faults.Drop(after_execution=True), method="tools/call", tool="create")
            with pytest.raises(MCPCallOutcomeUnknown, match=r"may have run, so check its effect"):
                await pool.call("t.create", {"name": "x"})
    assert server.executions("create") == 1
    assert len(server.journal.calls("create")) == 1


@pytest.mark.parametrize("tool", ["search", "upsert"])
@pytest.mark.parametrize("fault", [faults.Drop(after_execution=True), faults.EndStream()], ids=repr)
async def test_rule_07_read_or_idempotent_resent_after_drop(tool: str, fault: faults.Fault, era: str) -> None:
    """A read or an idempotent write whose answer was lost is re-issued with a new id (on the same session)."""
    server = script_tools(TestMcpServer())
    with anyio.fail_after(LIMIT_S):
        async with server, ToolPool([config_for(server, era=era)]) as pool:
            server.inject(fault, method="tools/call", tool=tool)
            assert await pool.call(f"t.{tool}") in ("found", "upserted")
            session_id = pool.session_id("t")
    assert server.executions(tool) == 2
    calls = server.journal.calls(tool)
    assert [c.session_id for c in calls] == [session_id, session_id]
    assert calls[0].rpc_id != calls[1].rpc_id


async def test_rule_07_write_resent_after_404_restart() -> None:
    """Handshake era: after a restart answered with 404 the server ran nothing, so even a write is sent once more."""
    server = script_tools(TestMcpServer())
    with anyio.fail_after(LIMIT_S):
        async with server, ToolPool([config_for(server, era="handshake")]) as pool:
            server.restart(unknown_session_status=404)
            assert await pool.call("t.create") == "created"
    assert [c.status for c in server.journal.calls("create")] == [404, 200]
    assert server.executions("create") == 1


async def test_rule_07_400_counts_as_a_drop() -> None:
    """Handshake era: after a restart answered 400, a read reconnects and is resent, a write is outcome-unknown."""
    server = script_tools(TestMcpServer())
    with anyio.fail_after(LIMIT_S):
        async with server, ToolPool([config_for(server, era="handshake")]) as pool:
            server.restart(unknown_session_status=400)
            assert await pool.call("t.search") == "found"
            assert _methods(server).count("initialize") == 2
            server.restart(unknown_session_status=400)
            with pytest.raises(MCPCallOutcomeUnknown, match=r"HTTP 400"):
                await pool.call("t.create")
            assert _methods(server).count("initialize") == 2, "the write is neither resent nor reconnected"
    assert [c.status for c in server.journal.calls("search")] == [400, 200]
    assert [c.status for c in server.journal.calls("create")] == [400]
    assert server.executions("search") == 1
    assert server.executions("create") == 0


@pytest.mark.parametrize("tool", ["search", "create"])
async def test_rule_07_stateless_a_refusal_of_the_handshake_era_falls_back(tool: str) -> None:
    """Auto mode: a stateless call refused as a handshake-era server would (EraDowngrade) moves the bridge to the
    handshake; a read is resent there, a write is outcome-unknown, and the next call goes through a session."""
    server = script_tools(TestMcpServer())
    with anyio.fail_after(LIMIT_S):
        async with server, ToolPool([config_for(server)]) as pool:
            assert pool.era("t") == "stateless"
            server.inject(faults.EraDowngrade())
            if tool == "search":
                assert await pool.call("t.search") == "found"
            else:
                with pytest.raises(MCPCallOutcomeUnknown, match=r"as a server of the handshake era does"):
                    await pool.call("t.create")
            assert pool.era("t") == "handshake"
            assert await pool.call(f"t.{tool}") in ("found", "created")
    calls = [(c.era, c.status) for c in server.calls(tool)]
    if tool == "search":
        assert calls == [("stateless", 400), ("handshake", 200), ("handshake", 200)]
    else:
        assert calls == [("stateless", 400), ("handshake", 200)]
    assert server.executions(tool) == len(calls) - 1
    assert len(server.sessions) == 1


# -- rule 8: the retry budget -------------------------------------------------------------------------


async def test_rule_08_retry_budget_bounds_reads_and_writes_get_none(era: str) -> None:
    """A read is sent at most 1 + retry times; a write with a large budget is still sent once."""
    server = script_tools(TestMcpServer())
    with anyio.fail_after(LIMIT_S):
        async with server, ToolPool([config_for(server, retry=2, era=era)]) as pool:
            server.inject(faults.Drop(after_execution=True), method="tools/call", tool="search", times=None)
            with pytest.raises(MCPConnectionError, match=r"call to 't.search' failed after 3 attempts"):
                await pool.call("t.search")
    assert server.executions("search") == 3
    writer = script_tools(TestMcpServer())
    with anyio.fail_after(LIMIT_S):
        async with writer, ToolPool([config_for(writer, retry=5, era=era)]) as pool:
            writer.inject(faults.Drop(), method="tools/call", tool="create")
            with pytest.raises(MCPCallOutcomeUnknown):
                await pool.call("t.create")
    assert len(writer.journal.calls("create")) == 1


async def test_rule_08_timed_out_write_is_never_resent(era: str) -> None:
    """A write that times out raises MCPCallOutcomeUnknown and is not sent again; a slow read is resent."""
    server = script_tools(TestMcpServer())
    with anyio.fail_after(LIMIT_S):
        async with server, ToolPool([config_for(server, timeout_s=0.2, retry=2, era=era)]) as pool:
            server.inject(faults.Delay(1.0), method="tools/call", tool="create")
            with pytest.raises(MCPCallOutcomeUnknown, match=r"did not answer within 0.2s; it may have run"):
                await pool.call("t.create")
            server.inject(faults.Delay(1.0), method="tools/call", tool="search")
            assert await pool.call("t.search") == "found"
    assert len(server.journal.calls("create")) == 1
    assert len(server.journal.calls("search")) == 2
    assert server.executions("create") == 1, "the server finished the slow write after the bridge gave up"


# -- rule 9: tool errors ------------------------------------------------------------------------------


async def test_rule_09_error_result_and_protocol_error_raise_tool_error(era: str) -> None:
    """isError raises MCPToolError with the server's text; a JSON-RPC error with its code; neither retried."""
    server = script_tools(TestMcpServer())
    server.tool("fail", read_only=True, returns=ToolError("no such thing"))
    with anyio.fail_after(LIMIT_S):
        async with server, ToolPool([config_for(server, era=era)]) as pool:
            with pytest.raises(MCPToolError, match=r"^server 't': tool 'fail' returned an error: no such thing$"):
                await pool.call("t.fail")
            server.inject(faults.ErrorResult("quota exceeded"), method="tools/call", tool="search")
            with pytest.raises(MCPToolError, match=r"returned an error: quota exceeded$"):
                await pool.call("t.search")
            server.inject(faults.ProtocolError(-32001, "backend down"), method="tools/call", tool="search")
            with pytest.raises(MCPToolError, match=r"JSON-RPC error -32001: backend down$") as caught:
                await pool.call("t.search")
    assert caught.value.code == -32001
    assert len(server.journal.calls("fail")) == 1
    assert len(server.journal.calls("search")) == 2


async def test_rule_09_stateless_a_missing_capability_is_a_tool_error() -> None:
    """Stateless era: -32021 raises MCPToolError with its code, naming the capability; the call did not run."""
    server = script_tools(TestMcpServer())
    with anyio.fail_after(LIMIT_S):
        async with server, ToolPool([config_for(server, era="stateless")]) as pool:
            server.inject(faults.MissingCapability(), method="tools/call", tool="search")
            with pytest.raises(MCPToolError, match=r"Missing required client capability: elicitation") as caught:
                await pool.call("t.search")
    assert caught.value.code == -32021
    assert server.executions("search") == 0


# -- rule 10: rendering -------------------------------------------------------------------------------


async def test_rule_10_rendering_of_every_content_kind(era: str) -> None:
    """Text joins with newlines, other blocks become placeholders, no blocks gives sorted compact JSON."""
    server = TestMcpServer()
    server.tool(
        "mixed",
        returns=[
            mcp_types.TextContent(type="text", text="line one"),
            mcp_types.ImageContent(type="image", data="aGk=", mime_type="image/png"),
            mcp_types.AudioContent(type="audio", data="aGk=", mime_type="audio/wav"),
            mcp_types.ResourceLink(type="resource_link", name="r", uri="file:///report.pdf"),
            {
                "type": "resource",
                "resource": {"uri": "file:///a.txt", "mimeType": "text/plain", "text": "inside"},
            },
            {
                "type": "resource",
                "resource": {"uri": "file:///b.bin", "mimeType": "application/octet-stream", "blob": "aGk="},
            },
        ],
    )
    server.tool("structured", returns=mcp_types.CallToolResult(content=[], structured_content={"b": 1, "a": [2]}))
    with anyio.fail_after(LIMIT_S):
        async with server, ToolPool([config_for(server, era=era)]) as pool:
            mixed = await pool.call("t.mixed")
            structured = await pool.call("t.structured")
    assert mixed == (
        "line one\n[image: image/png]\n[audio: audio/wav]\n[resource link: file:///report.pdf]\n"
        "inside\n[resource: file:///b.bin (application/octet-stream)]"
    )
    assert structured == '{"a":[2],"b":1}'


# -- rule 11: framing and shutdown --------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["json", "sse"])
async def test_rule_11_both_framings_read_and_session_deleted(mode: str, era: str) -> None:
    """JSON and SSE answers are both read; a session ends with DELETE when the pool exits (stateless: none to end)."""
    server = script_tools(TestMcpServer(page_size=2, response_mode=mode))
    with anyio.fail_after(LIMIT_S):
        async with server:
            async with ToolPool([config_for(server, era=era)]) as pool:
                session_id = pool.session_id("t")
                assert await pool.call("t.search") == "found"
            assert server.sessions.alive == []
    last = [record for record in server.journal if not _change_stream(record)][-1]  # the cache's
    if era == "handshake":
        assert (last.http_method, last.session_id, last.status) == ("DELETE", session_id, 200)
    else:
        assert (last.rpc_method, session_id) == ("tools/call", None)
        assert server.journal.requests(http_method="DELETE") == []
    assert all(record.status in (200, 202) for record in server.journal if not _change_stream(record))


async def test_rule_11_nothing_left_open_when_startup_fails_half_way(era: str) -> None:
    """When one server's listing fails, every session already opened is ended and the pool holds nothing."""
    good = script_tools(TestMcpServer("good"))
    bad = script_tools(TestMcpServer("bad"))
    with anyio.fail_after(LIMIT_S):
        async with good, bad:
            bad.inject(faults.PageError(1), method="tools/list")
            pool = ToolPool([config_for(good, "good", era=era), config_for(bad, "bad", era=era)])
            with pytest.raises(MCPConnectionError, match=r"^server 'bad'"):
                async with pool:
                    pass
            assert good.sessions.alive == []
            assert bad.sessions.alive == []
    ends = ["DELETE"] if era == "handshake" else ["POST"]
    assert [good.journal.last.http_method, bad.journal.last.http_method] == ends * 2
    assert pool.tools() == []
    with pytest.raises(RuntimeError, match="not open"):
        await pool.call("good.search")
