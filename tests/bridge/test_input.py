"""The reference bridge answers a tool's input requests through `ToolPool(input_handler=...)` in both eras and over
stdio, fails a call that needs input it cannot give with `MCPInputRequired`, and never runs a write twice while
answering rounds (the server's ledger says so)."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcp_testkit import TestMcpServer, ToolContext
from mcp_testkit.bridge import InputRequested, MCPInputRequired, MCPToolError, ServerConfig, ToolPool

from .conftest import LIMIT_S, config_for

pytestmark = pytest.mark.anyio

DATE = {"type": "object", "properties": {"date": {"type": "string"}}, "required": ["date"]}


def _booking() -> TestMcpServer:
    server = TestMcpServer()

    @server.tool("book", description="Books a room: a write.")
    async def book(arguments: dict[str, Any], ctx: ToolContext) -> str:
        date = await ctx.elicit("Which date?", DATE)
        summary = await ctx.sample("Summarize the booking", max_tokens=20)
        roots = await ctx.list_roots()
        return f"booked {date['content']['date']}: {summary['content']['text']} ({roots[0]['uri']})"

    return server


class Answers:
    """An input handler that answers each kind of request and remembers what it was asked."""

    def __init__(self) -> None:
        self.asked: list[InputRequested] = []

    async def __call__(self, request: InputRequested) -> Mapping[str, Any]:
        self.asked.append(request)
        if request.kind == "elicit":
            return {"action": "accept", "content": {"date": "2026-08-01"}}
        if request.kind == "sample":
            return {"role": "assistant", "content": {"type": "text", "text": "a quiet room"}, "model": "m"}
        return {"roots": [{"uri": "file:///rooms", "name": "rooms"}]}


@pytest.mark.parametrize("era", ["handshake", "stateless"])
async def test_the_pool_answers_input_requests_in_both_eras(era: str) -> None:
    """The handler answers an elicitation, a sampling and a roots request; the write ran once; journaled."""
    server = _booking()
    answers = Answers()
    with anyio.fail_after(LIMIT_S):
        async with server, ToolPool([config_for(server, era=era)], input_handler=answers) as pool:
            text = await pool.call("t.book")
    assert text == "booked 2026-08-01: a quiet room (file:///rooms)"
    assert [(a.server, a.tool, a.kind) for a in answers.asked] == [
        ("t", "book", "elicit"),
        ("t", "book", "sample"),
        ("t", "book", "roots"),
    ]
    assert answers.asked[0].params["message"] == "Which date?"
    assert [a.key for a in answers.asked] == (
        [None, None, None] if era == "handshake" else ["elicit-1", "sample-1", "roots-1"]
    )
    assert server.executions("book") == 1
    server.journal.assert_input("book", kind="elicit", answer={"action": "accept", "content": {"date": "2026-08-01"}})
    assert {e.era for e in server.journal.inputs} == {era}


@pytest.mark.parametrize("era", ["handshake", "stateless"])
async def test_a_call_that_needs_input_without_a_handler_fails_clearly(era: str) -> None:
    """Without an input handler the bridge declares no capability; the call fails with MCPInputRequired, unrun."""
    server = _booking()
    server.tool("search", read_only=True, returns="found")
    with anyio.fail_after(LIMIT_S):
        async with server, ToolPool([config_for(server, era=era)]) as pool:
            with pytest.raises(MCPInputRequired, match="give ToolPool an input_handler") as raised:
                await pool.call("t.book")
            assert await pool.call("t.search") == "found"
    assert isinstance(raised.value, MCPToolError)
    assert raised.value.needs == ["elicitation"]
    assert server.executions("book") == 0
    assert not server.journal.inputs


async def test_a_failing_handler_fails_the_call_not_the_pool() -> None:
    """A handler that raises is answered to the server as an error, which fails the call with MCPToolError."""

    async def broken(request: InputRequested) -> Mapping[str, Any]:
        raise RuntimeError("no user at the keyboard")

    server = _booking()
    with anyio.fail_after(LIMIT_S):
        async with server, ToolPool([config_for(server, era="handshake")], input_handler=broken) as pool:
            with pytest.raises(MCPToolError, match="input handler failed"):
                await pool.call("t.book")
    assert server.journal.inputs[0].error is not None
    assert server.executions("book") == 0  # it stopped at its input request


SCENARIO = '''
def scenario(server):
    @server.tool("book")
    async def book(arguments, ctx):
        date = await ctx.elicit("Which date?", {"type": "object", "properties": {"date": {"type": "string"}}})
        return "booked " + date["content"]["date"]
'''


async def test_a_command_server_asks_on_its_lines(tmp_path: Path) -> None:
    """Over stdio the bridge answers the server's input request on its stdin."""
    scenario = tmp_path / "asking.py"
    scenario.write_text(SCENARIO)
    args = ["-m", "mcp_testkit", "serve", "--stdio", "--scenario", str(scenario)]
    config = ServerConfig(name="local", command=sys.executable, args=args)
    with anyio.fail_after(LIMIT_S):
        async with ToolPool([config], input_handler=Answers()) as pool:
            assert await pool.call("local.book") == "booked 2026-08-01"
