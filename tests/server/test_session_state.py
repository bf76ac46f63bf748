"""State a tool keeps in its session (`ToolContext.session_state`): shared by the calls of one session, separate
between sessions, gone with a lost session or a restart, and None in 2026-07-28, which has no sessions."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_testkit import TestMcpServer, ToolContext, ToolError

from ._support import Stateless, Wire, serving

pytestmark = pytest.mark.anyio

USER = {"type": "object", "properties": {"user": {"type": "string"}}, "required": ["user"]}


def _server(*era: str) -> tuple[TestMcpServer, list[tuple[str | None, Any]]]:
    """A server whose `login` keeps a user in the session and whose `whoami` answers from it; `seen` holds each
    whoami's session id and the state it found."""
    server = TestMcpServer(*era)
    seen: list[tuple[str | None, Any]] = []

    @server.tool("login", input_schema=USER)
    def login(arguments: dict[str, Any], context: ToolContext) -> str:
        if context.session_state is None:
            raise ToolError("no session to keep a login in")
        context.session_state["user"] = arguments["user"]
        return "logged in"

    @server.tool("whoami")
    def whoami(arguments: dict[str, Any], context: ToolContext) -> str:
        state = context.session_state
        seen.append((context.session_id, None if state is None else dict(state)))
        return str((state or {}).get("user", "nobody"))

    return server, seen


def _text(result: dict[str, Any]) -> str:
    return str(result["content"][0]["text"])


async def test_the_calls_of_one_session_share_its_state_and_another_session_has_its_own(via: str) -> None:
    server, seen = _server()
    async with serving(server, via) as wire:
        await wire.initialize()
        other = Wire(wire.client, server)
        await other.initialize()
        assert _text(await wire.call("login", {"user": "ann"})) == "logged in"
        assert _text(await wire.call("whoami")) == "ann"
        assert _text(await other.call("whoami")) == "nobody"
        assert _text(await other.call("login", {"user": "bob"})) == "logged in"
        assert _text(await wire.call("whoami")) == "ann"  # bob logged in on the other session only
    assert seen == [
        (wire.session_id, {"user": "ann"}),
        (other.session_id, {}),
        (wire.session_id, {"user": "ann"}),
    ]


async def test_the_state_goes_with_a_lost_session_and_a_restart(via: str) -> None:
    server, _ = _server()
    async with serving(server, via) as wire:
        for forget in (server.lose_session, server.restart):
            await wire.initialize()
            await wire.call("login", {"user": "ann"})
            forget()
            await wire.initialize()  # the new session the 404 asks for
            assert _text(await wire.call("whoami")) == "nobody"


async def test_a_stateless_call_has_no_session_state(via: str) -> None:
    """2026-07-28 has no sessions: a handler gets None for both, and a login that needs one is a tool error."""
    server, seen = _server("modern")
    async with serving(server, via) as wire:
        stateless = Stateless(wire)
        login = await stateless.result("tools/call", {"name": "login", "arguments": {"user": "ann"}})
        assert login["isError"] is True
        await stateless.result("tools/call", {"name": "whoami", "arguments": {}})
    assert seen == [(None, None)]
