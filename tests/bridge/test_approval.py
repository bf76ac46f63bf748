"""Approval gates (bridge-b "Approving tool calls", bridge-a "Approval", bridge-c `needs_approval`,
bridge-d "Approval for a whole server"), over a real socket, asserted on the server's journal and ledger."""

from __future__ import annotations

import re
from typing import Any

import anyio
import pytest

from mcp_testkit import TestMcpServer, faults
from mcp_testkit.bridge import (
    ApprovalRequired,
    MCPCallOutcomeUnknown,
    MCPConnectionError,
    MCPToolError,
    ServerConfig,
    ToolPool,
)

from .conftest import LIMIT_S, config_for, script_tools

pytestmark = pytest.mark.anyio

TOOLS = ("search", "create", "upsert")


async def _gated(pool: ToolPool, tool: str) -> ApprovalRequired | None:
    """The ApprovalRequired a call of ``t.<tool>`` raises, or None if it ran."""
    try:
        await pool.call(f"t.{tool}", {"name": "x"})
    except ApprovalRequired as paused:
        return paused
    return None


async def _paused(pool: ToolPool, tool: str = "create") -> ApprovalRequired:
    """The ApprovalRequired a call of ``t.<tool>`` must raise."""
    paused = await _gated(pool, tool)
    assert paused is not None, f"a call of t.{tool} ran without approval"
    return paused


async def test_bridge_b_approving_tool_calls_always_pauses_every_call_and_sends_nothing() -> None:
    """With "always", each call raises ApprovalRequired carrying token, server, tool and arguments; no request."""
    server = script_tools(TestMcpServer())
    with anyio.fail_after(LIMIT_S):
        async with server, ToolPool([config_for(server, require_approval="always")]) as pool:
            before = len(server.journal)
            paused = [await _gated(pool, tool) for tool in TOOLS]
            assert len(server.journal) == before
    assert all(p is not None for p in paused)
    first = paused[0]
    assert first is not None
    assert (first.server, first.tool, first.arguments) == ("t", "t.search", {"name": "x"})
    assert len({p.token for p in paused if p is not None}) == 3
    assert str(first) == (
        "server 't': call to 't.search' waits for approval; "
        "approve it with pool.approve(token) or decline it with pool.decline(token)"
    )
    assert first.token not in str(first)
    assert server.journal.calls() == []
    assert server.executions() == 0


async def test_bridge_b_approving_tool_calls_approve_runs_the_call_exactly_once() -> None:
    """approve(token) sends the paused call once and returns its text; the spent token runs nothing more."""
    server = script_tools(TestMcpServer())
    with anyio.fail_after(LIMIT_S):
        async with server, ToolPool([config_for(server, require_approval="always")]) as pool:
            paused = await _paused(pool)
            assert await pool.approve(paused.token) == "created"
            with pytest.raises(KeyError, match="single-use"):
                await pool.approve(paused.token)
            with pytest.raises(KeyError, match="single-use"):
                await pool.decline(paused.token)
    assert server.executions("create") == 1
    assert [call.arguments for call in server.journal.calls("create")] == [{"name": "x"}]


async def test_bridge_b_approving_tool_calls_decline_never_calls() -> None:
    """decline(token) returns None and sends nothing, ever: the ledger stays at 0 and the token is spent."""
    server = script_tools(TestMcpServer())
    with anyio.fail_after(LIMIT_S):
        async with server, ToolPool([config_for(server, require_approval="always")]) as pool:
            paused = await _paused(pool)
            assert await pool.decline(paused.token) is None
            with pytest.raises(KeyError, match="already approved or declined"):
                await pool.approve(paused.token)
    assert server.journal.calls() == []
    assert server.executions() == 0


async def test_bridge_b_approving_tool_calls_unanswered_approval_never_reaches_the_server() -> None:
    """A paused call nobody answers is never sent, not even when the pool closes."""
    server = script_tools(TestMcpServer())
    with anyio.fail_after(LIMIT_S):
        async with server:
            config = config_for(server, require_approval="always", era="handshake")  # its DELETE shows the close
            async with ToolPool([config]) as pool:
                assert await _gated(pool, "create") is not None
            assert server.journal.last.http_method == "DELETE"
    assert server.journal.calls() == []
    assert server.executions() == 0


RULES = [
    pytest.param("never", set(), id="never"),
    pytest.param(False, set(), id="false"),
    pytest.param(True, set(TOOLS), id="true"),
    pytest.param({"always": ["create"]}, {"create"}, id="always-list"),
    pytest.param({"always": {"tool_names": ["create"]}}, {"create"}, id="always-tool_names"),
    pytest.param({"never": ["search"]}, {"create", "upsert"}, id="never-list"),
    pytest.param({"always": ["search"], "never": ["search", "upsert"]}, {"search", "create"}, id="both-lists"),
]


@pytest.mark.parametrize(("rule", "gated"), RULES)
async def test_bridge_b_approving_tool_calls_lists_choose_the_calls_that_wait(rule: Any, gated: set[str]) -> None:
    """ "never", "always" and the always/never lists (plain or as tool_names) gate exactly the tools they say."""
    server = script_tools(TestMcpServer())
    with anyio.fail_after(LIMIT_S):
        async with server, ToolPool([config_for(server, require_approval=rule)]) as pool:
            paused = {tool for tool in TOOLS if await _gated(pool, tool) is not None}
    assert paused == gated
    assert {call.tool for call in server.journal.calls()} == set(TOOLS) - gated
    assert server.executions() == len(TOOLS) - len(gated)


@pytest.mark.parametrize("rule", [{"always": ["create", "delete_all"]}, {"never": ["serch"]}], ids=["always", "never"])
async def test_bridge_a_approval_name_the_server_does_not_expose_fails_at_connect(rule: Any) -> None:
    """A list naming a tool the server does not list fails start-up, naming it, and leaves nothing open."""
    server = script_tools(TestMcpServer())
    with anyio.fail_after(LIMIT_S):
        async with server:
            with pytest.raises(MCPConnectionError, match=r"^server 't': require_approval names '(delete_all|serch)'"):
                async with ToolPool([config_for(server, require_approval=rule)]):
                    pass
            assert server.sessions.alive == []
    assert server.executions() == 0


async def test_bridge_c_needs_approval_predicate_decides_per_call() -> None:
    """A predicate sees the bare tool name and the arguments, and gates only the calls it answers True for."""
    seen: list[tuple[str, dict[str, Any]]] = []

    def large_creates(tool: str, arguments: Any) -> bool:
        seen.append((tool, dict(arguments)))
        return tool == "create" and arguments.get("count", 0) > 10

    server = script_tools(TestMcpServer())
    with anyio.fail_after(LIMIT_S):
        async with server, ToolPool([config_for(server, require_approval=large_creates)]) as pool:
            assert await pool.call("t.create", {"count": 1}) == "created"
            with pytest.raises(ApprovalRequired) as caught:
                await pool.call("t.create", {"count": 50})
            assert await pool.call("t.search", {"count": 50}) == "found"
            assert caught.value.arguments == {"count": 50}
    assert seen == [("create", {"count": 1}), ("create", {"count": 50}), ("search", {"count": 50})]
    assert [call.arguments for call in server.journal.calls("create")] == [{"count": 1}]


async def test_bridge_c_needs_approval_predicate_that_does_not_answer_a_bool_sends_nothing() -> None:
    """A predicate answering something other than a bool fails the call loudly, before anything is sent."""
    server = script_tools(TestMcpServer())

    def sloppy(tool: str, arguments: Any) -> bool:
        return arguments.get("flag")  # type: ignore[no-any-return]

    with anyio.fail_after(LIMIT_S):
        async with server, ToolPool([config_for(server, require_approval=sloppy)]) as pool:
            with pytest.raises(TypeError, match=r"must return a bool, and returned NoneType for 'create'"):
                await pool.call("t.create")
    assert server.journal.calls() == []


@pytest.mark.parametrize("reenter", [False, True], ids=["pool-open", "pool-reentered"])
async def test_bridge_b_pauses_call_to_a_tool_no_longer_listed_is_not_sent(reenter: bool) -> None:
    """Approving a call to a tool the server dropped meanwhile raises "no longer offered" and sends nothing."""
    server = script_tools(TestMcpServer())
    with anyio.fail_after(LIMIT_S):
        async with server:
            pool = ToolPool([config_for(server, require_approval="always", era="handshake")], cache=False)
            async with pool:
                paused = await _paused(pool)
                server.remove_tool("create")
                removed_at = len(server.journal)
                if not reenter:
                    with pytest.raises(MCPToolError) as caught:
                        await pool.approve(paused.token)
            if reenter:
                async with pool:
                    with pytest.raises(MCPToolError) as caught:
                        await pool.approve(paused.token)
    assert str(caught.value) == "server 't': t.create is no longer offered by its MCP server"
    assert server.journal.calls() == []
    assert server.executions() == 0
    # the tool was looked up in a listing read after it was removed, on a new session, and nothing else was sent
    # (in the handshake era, whose sessions show the new connection)
    relist = ["DELETE", "initialize", "notifications/initialized", "tools/list"]
    expected = [*relist, "DELETE"] if not reenter else [*relist, *relist, "DELETE"]
    assert [r.rpc_method or r.http_method for r in server.journal.records[removed_at:]] == expected


@pytest.mark.parametrize("reenter", [False, True], ids=["pool-open", "pool-reentered"])
async def test_an_approval_is_checked_against_the_current_listing_not_the_cached_one(era: str, reenter: bool) -> None:
    """With the tool cache on (the default) and a fresh cached listing that still has the tool, approving a call
    to a tool the server removed raises "no longer offered" and sends no call: the approval reads the server's
    listing now, and the cache keeps that listing."""
    server = script_tools(TestMcpServer())
    with anyio.fail_after(LIMIT_S):
        async with server:
            pool = ToolPool([config_for(server, require_approval="always", era=era)])
            async with pool:
                paused = await _paused(pool)
                server.remove_tool("create")
                listings = len(server.journal.requests("tools/list"))
                if not reenter:
                    with pytest.raises(MCPToolError) as caught:
                        await pool.approve(paused.token)
            if reenter:
                async with pool:  # its listing comes from the cache, which still has the tool
                    listings = len(server.journal.requests("tools/list"))
                    with pytest.raises(MCPToolError) as caught:
                        await pool.approve(paused.token)
            async with ToolPool([config_for(server, era=era)]) as later:  # the cache holds the listing read now
                offered = [tool.name for tool in later.tools()]
    assert str(caught.value) == "server 't': t.create is no longer offered by its MCP server"
    assert len(server.journal.requests("tools/list")) > listings, "the approval read the server's listing"
    assert server.journal.calls() == []
    assert server.executions() == 0
    assert "t.create" not in offered


async def test_bridge_b_approving_tool_calls_approved_write_is_never_resent() -> None:
    """An approved write follows the call rules: its answer lost, it is outcome-unknown and ran exactly once."""
    server = script_tools(TestMcpServer())
    with anyio.fail_after(LIMIT_S):
        async with server, ToolPool([config_for(server, require_approval="always")]) as pool:
            paused = await _paused(pool)
            server.inject(faults.Drop(after_execution=True), method="tools/call", tool="create")
            with pytest.raises(MCPCallOutcomeUnknown):
                await pool.approve(paused.token)
    assert server.executions("create") == 1
    assert len(server.journal.calls("create")) == 1


async def test_bridge_b_approving_tool_calls_sends_the_arguments_that_were_shown() -> None:
    """The approved call sends the arguments of the paused call, whatever the caller changed since."""
    server = script_tools(TestMcpServer())
    arguments = {"name": "x", "tags": ["a"]}
    with anyio.fail_after(LIMIT_S):
        async with server, ToolPool([config_for(server, require_approval="always")]) as pool:
            with pytest.raises(ApprovalRequired) as caught:
                await pool.call("t.create", arguments)
            arguments["tags"].append("b")
            caught.value.arguments["name"] = "changed"
            await pool.approve(caught.value.token)
    assert [call.arguments for call in server.journal.calls("create")] == [{"name": "x", "tags": ["a"]}]


async def test_bridge_d_approval_tokens_belong_to_their_pool_and_need_it_open() -> None:
    """A token is unknown to another pool; approving while the pool is closed fails and keeps the token usable."""
    server = script_tools(TestMcpServer())
    with anyio.fail_after(LIMIT_S):
        async with server:
            config = config_for(server, require_approval="always")
            pool, other = ToolPool([config]), ToolPool([config])
            async with pool:
                paused = await _paused(pool)
            with pytest.raises(RuntimeError, match="not open"):
                await pool.approve(paused.token)
            async with other:
                with pytest.raises(KeyError, match="never issued by this pool"):
                    await other.approve(paused.token)
            async with pool:
                assert await pool.approve(paused.token) == "created"
    assert server.executions("create") == 1


@pytest.mark.parametrize(
    ("rule", "error", "message"),
    [
        ("sometimes", ValueError, "require_approval must be 'always', 'never', {'always': [...]}"),
        ({"maybe": ["x"]}, ValueError, "require_approval takes the keys 'always' and 'never', got ['maybe']"),
        ({}, ValueError, "require_approval takes the keys 'always' and 'never', got an empty mapping"),
        ({"always": "create"}, TypeError, "require_approval['always'] takes a collection of tool names"),
        ({"always": {"names": ["x"]}}, ValueError, "require_approval['always'] takes tool names or {'tool_names'"),
        ({"never": [""]}, TypeError, "require_approval['never'] holds something that is not a tool name"),
        (3, ValueError, "require_approval must be"),
    ],
)
def test_bridge_b_approving_tool_calls_bad_rule_fails_when_the_config_is_built(
    rule: Any, error: type[Exception], message: str
) -> None:
    """A require_approval value the bridge cannot read fails at ServerConfig(), naming the server."""
    with pytest.raises(error, match="^" + re.escape(f"server 't': {message}")):
        ServerConfig(name="t", url="http://127.0.0.1:1/mcp", require_approval=rule)


def test_bridge_b_approving_tool_calls_rules_are_normalized_values() -> None:
    """Lists become frozensets and bools become words, so configs compare and print the same however written."""
    one = ServerConfig(
        name="t", url="http://127.0.0.1/mcp", require_approval={"always": ["b", "a"], "never": {"tool_names": ["c"]}}
    )
    two = ServerConfig(name="t", url="http://127.0.0.1/mcp", require_approval={"never": ("c",), "always": {"a", "b"}})
    assert one == two
    assert one.require_approval == {"always": frozenset({"a", "b"}), "never": frozenset({"c"})}
    assert "require_approval={'always': ['a', 'b'], 'never': ['c']}" in repr(one)
    assert ServerConfig(name="t", url="http://127.0.0.1/mcp", require_approval=True).require_approval == "always"
    assert ServerConfig(name="t", url="http://127.0.0.1/mcp").require_approval == "never"
