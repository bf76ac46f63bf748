"""Deferred servers (bridge-c "Deferring large servers"), over a real socket, asserted on the journal and ledger."""

from __future__ import annotations

import json
from typing import Any

import anyio
import mcp_types
import pytest

from mcp_testkit import TestMcpServer, faults
from mcp_testkit.bridge import (
    ApprovalRequired,
    MCPCallOutcomeUnknown,
    MCPConnectionError,
    MCPResultWithheld,
    ToolPool,
    describe_tools,
)

from .conftest import LIMIT_S, config_for, script_tools

pytestmark = pytest.mark.anyio

SEARCH, CALL = "search_mcp_tools", "call_mcp_tool"


def _large() -> TestMcpServer:
    """A server with more tools than a prompt should carry: the three kinds, and two about issues."""
    server = script_tools(TestMcpServer("gh"))
    server.tool("search_issues", description="Search the issues of a repository.", read_only=True, returns="2 issues")
    server.tool("close_issue", description="Close one issue.", returns="closed")
    return server


def _small() -> TestMcpServer:
    server = TestMcpServer("fs")
    server.tool("read_file", description="Read a file.", read_only=True, returns="contents")
    return server


async def test_bridge_c_deferring_large_servers_keeps_their_tools_out_of_the_list() -> None:
    """defer=True leaves the server's tools out of tools(), offering the shared search/call pair instead."""
    gh, fs = _large(), _small()
    with anyio.fail_after(LIMIT_S):
        async with gh, fs:
            configs = [config_for(gh, "gh", defer=True), config_for(fs, "fs")]
            async with ToolPool(configs) as pool:
                offered = [tool.name for tool in pool.tools()]
                deferred = [tool.name for tool in pool.deferred_tools()]
                search_tool = pool.tool(SEARCH)
                with pytest.raises(KeyError, match=f"'gh.create' is deferred: find it with {SEARCH}"):
                    pool.tool("gh.create")
                with pytest.raises(KeyError, match="is deferred"):
                    await pool.call("gh.create")
                lines = [str(d) for d in describe_tools(pool)]
    assert offered == ["fs.read_file", SEARCH, CALL]
    assert deferred == ["gh.search", "gh.create", "gh.upsert", "gh.search_issues", "gh.close_issue"]
    assert pool.tools("gh") == []
    assert search_tool.server == ""
    assert all(name in search_tool.description for name in deferred), "the search names every deferred tool"
    assert lines[1:] == [
        f"{SEARCH}: read, may be resent (pool tool: searches the deferred tools, sends nothing)",
        f"{CALL}: write, never resent (pool tool: each call follows the rules of the deferred tool it names)",
    ]
    assert gh.journal.calls() == []


async def test_bridge_c_deferring_search_finds_tools_by_keyword_without_a_request() -> None:
    """search_mcp_tools ranks deferred tools by the query's words and gives name, description and inputSchema."""
    gh = _large()
    with anyio.fail_after(LIMIT_S):
        async with gh, ToolPool([config_for(gh, "gh", defer=True)]) as pool:
            before = len(gh.journal)
            found = json.loads(await pool.call(SEARCH, {"query": "search issues"}))
            one = json.loads(await pool.call(SEARCH, {"query": "issue", "limit": 1}))
            none = json.loads(await pool.call(SEARCH, {"query": "weather"}))
            every = json.loads(await pool.call(SEARCH, {"query": ""}))
            schema = pool.deferred_tools()[3].input_schema
            assert len(gh.journal) == before, "searching sends nothing to the server"
    assert [tool["name"] for tool in found] == ["gh.search_issues", "gh.search"]
    assert found[0] == {
        "name": "gh.search_issues",
        "description": "Search the issues of a repository.",
        "inputSchema": dict(schema),
    }
    assert [tool["name"] for tool in one] == ["gh.search_issues"]
    assert none == []
    assert len(every) == 5


async def test_bridge_c_deferring_call_runs_the_tool_by_its_exact_name() -> None:
    """call_mcp_tool sends the named tool its arguments, once, and returns what calling it directly would."""
    gh, fs = _large(), _small()
    with anyio.fail_after(LIMIT_S):
        async with gh, fs:
            async with ToolPool([config_for(gh, "gh", defer=True), config_for(fs, "fs")]) as pool:
                text = await pool.call(CALL, {"name": "gh.close_issue", "arguments": {"number": 7}})
                bare = await pool.call(CALL, {"name": "search_issues"})
    assert (text, bare) == ("closed", "2 issues")
    assert [(call.tool, call.arguments) for call in gh.journal.calls()] == [
        ("close_issue", {"number": 7}),
        ("search_issues", {}),
    ]
    assert gh.executions() == 2


async def test_bridge_c_deferring_keeps_approval_retries_timeout_and_rendering() -> None:
    """A deferred call is fully delegated: its server's approval, resend rules, timeout and rendering apply."""
    gh = _large()
    gh.tool("shot", returns=[mcp_types.ImageContent(type="image", data="aGk=", mime_type="image/png")])
    with anyio.fail_after(LIMIT_S):
        async with gh:
            config = config_for(gh, "gh", defer=True, require_approval={"always": ["close_issue"]}, timeout_s=0.5)
            async with ToolPool([config]) as pool:
                with pytest.raises(ApprovalRequired) as paused:
                    await pool.call(CALL, {"name": "gh.close_issue", "arguments": {"number": 7}})
                assert (paused.value.tool, paused.value.arguments) == ("gh.close_issue", {"number": 7})
                await pool.decline(paused.value.token)
                gh.inject(faults.Drop(after_execution=True), method="tools/call", tool="search")
                assert await pool.call(CALL, {"name": "gh.search"}) == "found"
                gh.inject(faults.Drop(after_execution=True), method="tools/call", tool="create")
                with pytest.raises(MCPCallOutcomeUnknown):
                    await pool.call(CALL, {"name": "gh.create"})
                gh.inject(faults.Delay(2.0), method="tools/call", tool="upsert", times=None)
                with pytest.raises(MCPConnectionError, match=r"did not answer within 0.5s"):
                    await pool.call(CALL, {"name": "gh.upsert"})
                assert await pool.call(CALL, {"name": "gh.shot"}) == "[image: image/png]"
    assert gh.executions("close_issue") == 0
    assert gh.executions("search") == 2, "a read is resent"
    assert len(gh.journal.calls("create")) == 1, "a write is not"
    assert len(gh.journal.calls("upsert")) == 3, "an idempotent tool spends its retry budget"


async def test_bridge_c_deferring_results_pass_the_pool_guardrails() -> None:
    """A deferred tool's result is checked by the pool's result guardrails like any other."""
    gh = _large()
    guardrails = {"no-issues": lambda tool, text: f"{tool} talks about issues" if "issue" in text else None}
    with anyio.fail_after(LIMIT_S):
        async with gh, ToolPool([config_for(gh, "gh", defer=True)], result_guardrails=guardrails) as pool:
            with pytest.raises(MCPResultWithheld, match=r"withheld by no-issues: gh\.search_issues talks about issues"):
                await pool.call(CALL, {"name": "gh.search_issues"})
            assert json.loads(await pool.call(SEARCH, {"query": "issues"})), "the local search is not screened"


async def test_bridge_c_deferring_ambiguous_names_are_refused() -> None:
    """A bare name two deferred servers offer is refused naming both, and nothing is sent; full names work."""
    gh, other = _large(), script_tools(TestMcpServer("other"))
    with anyio.fail_after(LIMIT_S):
        async with gh, other:
            configs = [config_for(gh, "gh", defer=True), config_for(other, "other", defer=True)]
            async with ToolPool(configs) as pool:
                with pytest.raises(KeyError, match=r"'search' is ambiguous \(gh.search, other.search\)"):
                    await pool.call(CALL, {"name": "search"})
                with pytest.raises(KeyError, match=f"no deferred tool named 'nope'; {SEARCH} finds them"):
                    await pool.call(CALL, {"name": "nope"})
                assert gh.journal.calls() == other.journal.calls() == []
                assert await pool.call(CALL, {"name": "other.search"}) == "found"
                assert await pool.call(CALL, {"name": "close_issue"}) == "closed"
    assert (gh.executions(), other.executions()) == (1, 1)


async def test_bridge_c_deferring_a_name_two_servers_share_fails_at_connect() -> None:
    """A deferred tool whose final name is also another tool's fails start-up, as any clash does."""
    gh = TestMcpServer("gh")
    gh.tool("b.c")
    other = TestMcpServer("other")
    other.tool("c")
    with anyio.fail_after(LIMIT_S):
        async with gh, other:
            configs = [config_for(gh, "a", defer=True), config_for(other, "a.b")]
            with pytest.raises(MCPConnectionError, match=r"tool name 'a.b.c' is also the name of a tool"):
                async with ToolPool(configs):
                    pass


@pytest.mark.parametrize(
    ("tool", "arguments", "message"),
    [
        (SEARCH, {}, "takes a 'query' string"),
        (SEARCH, {"query": "x", "limit": 0}, "'limit' must be a positive integer"),
        (CALL, {"arguments": {}}, "takes the tool's 'name' as a non-empty string"),
        (CALL, {"name": "gh.search", "arguments": [1]}, "'arguments' must be an object, not list"),
        (CALL, {"name": "gh.search", "args": {}}, "takes 'name' and 'arguments' only, not 'args'"),
    ],
)
async def test_bridge_c_deferring_pool_tools_refuse_bad_arguments(
    tool: str, arguments: dict[str, Any], message: str
) -> None:
    """The pair refuses arguments it cannot use, naming the problem, and sends nothing."""
    gh = _large()
    with anyio.fail_after(LIMIT_S):
        async with gh, ToolPool([config_for(gh, "gh", defer=True)]) as pool:
            with pytest.raises(ValueError, match=message):
                await pool.call(tool, arguments)
    assert gh.journal.calls() == []


async def test_bridge_c_deferring_nothing_offers_no_pair() -> None:
    """Without a deferred server the pool offers no search/call pair."""
    fs = _small()
    with anyio.fail_after(LIMIT_S):
        async with fs, ToolPool([config_for(fs, "fs")]) as pool:
            assert [tool.name for tool in pool.tools()] == ["fs.read_file"]
            assert pool.deferred_tools() == []
            with pytest.raises(KeyError, match=f"no tool named '{SEARCH}'"):
                await pool.call(SEARCH, {"query": "x"})


def test_bridge_c_deferring_defer_must_be_a_bool() -> None:
    """defer takes True or False, so that a typo like defer="no" does not defer a server."""
    from mcp_testkit.bridge import ServerConfig

    with pytest.raises(TypeError, match="defer must be True or False"):
        ServerConfig(name="t", url="http://127.0.0.1/mcp", defer="no")  # type: ignore[arg-type]
