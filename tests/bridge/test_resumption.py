"""SSE resumption in the reference bridge (the spec's transports, "Resumability and Redelivery" and the polling
of SEP-1699), over a real socket: a response stream broken after an event with an id is resumed with GET and
`Last-Event-ID`, after the server's `retry:`; a write whose stream cannot be resumed is outcome-unknown, never
resent."""

from __future__ import annotations

import logging
from typing import Any

import anyio
import pytest

from mcp_testkit import TestMcpServer, ToolContext, faults
from mcp_testkit.bridge import MCPCallOutcomeUnknown, ToolPool

from .conftest import LIMIT_S, config_for, script_tools

pytestmark = pytest.mark.anyio


def _resumes(server: TestMcpServer) -> list[Any]:
    return [r for r in server.journal if r.http_method == "GET" and "last-event-id" in r.headers]


async def test_spec_resumability_broken_write_stream_is_resumed_and_the_write_runs_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A write whose stream breaks after the priming event gets its answer by GET with Last-Event-ID, after
    the `retry:` the server gave; it ran once and was never sent again."""
    server = script_tools(TestMcpServer(response_mode="sse", resumable=True, retry_s=0.04))
    caplog.set_level(logging.INFO, logger="mcp_testkit.bridge")
    with anyio.fail_after(LIMIT_S):
        async with server, ToolPool([config_for(server, era="handshake")], cache=False) as pool:
            server.inject(faults.BreakStream(after_events=1, retry_s=0.06), tool="create")
            assert await pool.call("t.create", {"title": "x"}) == "created"
            [post] = server.calls("create")
            [resume] = _resumes(server)
    assert server.executions("create") == 1
    assert resume.headers["last-event-id"].isdigit()  # the priming event's id
    assert resume.status == 200
    assert resume.response == {
        "jsonrpc": "2.0",
        "id": post.rpc_id,
        "result": {"content": [{"type": "text", "text": "created"}]},
    }
    waited = [r.getMessage() for r in caplog.records if "resuming it with GET and Last-Event-ID" in r.getMessage()]
    assert len(waited) == 1
    assert "in 60 ms (the server's retry:)" in waited[0]


async def test_spec_resumability_a_stream_broken_before_any_event_id_is_outcome_unknown_for_a_write() -> None:
    """A write whose stream broke before any event id cannot be resumed: it may have run, and is not resent."""
    server = script_tools(TestMcpServer(response_mode="sse", resumable=True))
    with anyio.fail_after(LIMIT_S):
        async with server, ToolPool([config_for(server, era="handshake")], cache=False) as pool:
            server.inject(faults.BreakStream(after_events=0), tool="create")
            with pytest.raises(MCPCallOutcomeUnknown, match="ended the SSE stream before the answer; it may have run"):
                await pool.call("t.create")
    assert server.executions("create") == 1
    assert len(server.calls("create")) == 1
    assert _resumes(server) == []


async def _notify_then(answer: str, arguments: dict[str, Any], context: ToolContext) -> str:
    await context.log("info", "working")
    return answer


@pytest.mark.parametrize(("tool", "read"), [("create", False), ("search", True)])
async def test_spec_resumability_a_stream_the_server_cannot_replay_is_outcome_unknown_or_resent(
    tool: str, read: bool
) -> None:
    """A stream ended after a notification's id, on a server that keeps no events: the GET is refused, so a
    write is outcome-unknown (not resent) and a read is sent again and answered."""
    server = TestMcpServer(response_mode="sse")
    server.tool("create", returns=lambda arguments, context: _notify_then("created", arguments, context))
    server.tool("search", read_only=True, returns=lambda arguments, context: _notify_then("found", arguments, context))
    with anyio.fail_after(LIMIT_S):
        async with server, ToolPool([config_for(server, era="handshake")], cache=False) as pool:
            server.inject(faults.EndStream(), tool=tool)
            if read:
                assert await pool.call("t.search") == "found"
            else:
                with pytest.raises(MCPCallOutcomeUnknown, match="answered the GET to resume it with HTTP 400"):
                    await pool.call("t.create")
    assert [r.status for r in _resumes(server)] == [400]
    assert server.executions(tool) == (2 if read else 1)


async def test_spec_resumability_a_replay_without_the_answer_is_given_up() -> None:
    """EndStream on a resumable server loses the answer for good: the GETs replay nothing, so after two fruitless
    resumptions the write is outcome-unknown."""
    server = script_tools(TestMcpServer(response_mode="sse", resumable=True, retry_s=0))
    with anyio.fail_after(LIMIT_S):
        async with server, ToolPool([config_for(server, era="handshake")], cache=False) as pool:
            server.inject(faults.EndStream(), tool="create")
            with pytest.raises(MCPCallOutcomeUnknown, match="resuming it brought no more events"):
                await pool.call("t.create")
    assert [r.status for r in _resumes(server)] == [200, 200]
    assert server.executions("create") == 1


async def test_spec_resumability_a_listing_page_whose_stream_breaks_is_resumed() -> None:
    """A tools/list page whose stream breaks after the priming event is resumed: the whole listing loads."""
    server = script_tools(TestMcpServer(response_mode="sse", resumable=True, retry_s=0, page_size=1))
    server.inject(faults.BreakStream(after_events=1), method="tools/list", page=2)
    with anyio.fail_after(LIMIT_S):
        async with server, ToolPool([config_for(server, era="handshake")], cache=False) as pool:
            assert [tool.bare_name for tool in pool.tools()] == ["search", "create", "upsert"]
    assert len(_resumes(server)) == 1


async def test_spec_resumability_does_not_apply_in_the_stateless_era() -> None:
    """The stateless era has no event ids: a write whose stream ends early is outcome-unknown with no GET."""
    server = script_tools(TestMcpServer(response_mode="sse"))
    with anyio.fail_after(LIMIT_S):
        async with server, ToolPool([config_for(server, era="stateless")], cache=False) as pool:
            server.inject(faults.EndStream(), tool="create", era="stateless")
            with pytest.raises(MCPCallOutcomeUnknown, match="ended the SSE stream before the answer"):
                await pool.call("t.create")
    assert not [r for r in server.journal if r.http_method == "GET"]
    assert server.executions("create") == 1
