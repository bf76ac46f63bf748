"""`TestMcpServer.asgi_app` mounted in a user's Starlette app, reached in-process and over a real socket."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import httpx2
import pytest
import uvicorn
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Mount, Route

from mcp_testkit import TestMcpServer

from ._support import ACCEPT, LIMIT_S, Stateless, Wire

pytestmark = pytest.mark.anyio


def _parent(server: TestMcpServer) -> Starlette:
    """A user's app: a route of its own, and the fake server mounted at /tickets."""

    async def home(request: Request) -> PlainTextResponse:
        return PlainTextResponse("the parent app")

    return Starlette(routes=[Route("/", home), Mount("/tickets", app=server.asgi_app)])


@asynccontextmanager
async def _reach(app: Starlette, via: str) -> AsyncIterator[httpx2.AsyncClient]:
    """An httpx2 client on `app`: in-process, or over uvicorn on 127.0.0.1:0 as a task of this loop."""
    if via == "asgi":
        async with httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app), base_url="http://127.0.0.1") as client:
            yield client
        return
    listening = socket.socket()
    listening.bind(("127.0.0.1", 0))
    listening.listen()  # connections wait in the backlog until uvicorn accepts them: no start-up to wait for
    port = listening.getsockname()[1]
    served = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(served.serve, [listening])
            try:
                async with httpx2.AsyncClient(base_url=f"http://127.0.0.1:{port}") as client:
                    yield client
            finally:
                served.should_exit = True
    finally:
        listening.close()


@pytest.mark.parametrize(("mode", "era"), [("legacy", "handshake"), ("auto", "stateless")])
async def test_a_call_through_the_parent_reaches_the_tool_and_the_journal(via: str, mode: str, era: str) -> None:
    """An SDK client on /tickets/mcp calls the tool; the journal records the call at /mcp in the client's era."""
    server = TestMcpServer("tickets")
    server.tool("create_ticket", returns=lambda arguments: f"opened {arguments['title']}")
    with anyio.fail_after(LIMIT_S):
        async with _reach(_parent(server), via) as http:
            url = str(http.base_url).rstrip("/") + "/tickets/mcp"
            async with Client(streamable_http_client(url, http_client=http), mode=mode) as client:
                result = await client.call_tool("create_ticket", {"title": "leak"})
    assert result.content[0].text == "opened leak"  # type: ignore[union-attr]
    call = server.journal.calls("create_ticket")[0]
    assert (call.path, call.era, call.status, call.executed) == ("/mcp", era, 200, True)
    assert server.executions("create_ticket") == 1
    server.check()


async def test_the_parent_keeps_its_routes_and_the_mount_answers_only_its_endpoint(via: str) -> None:
    """The parent's own route still answers; another path under the mount gets the MCP 404 naming /mcp."""
    server = TestMcpServer()
    with anyio.fail_after(LIMIT_S):
        async with _reach(_parent(server), via) as http:
            home = await http.get("/")
            astray = await http.post("/tickets/other", json={}, headers={"accept": ACCEPT})
    assert (home.status_code, home.text) == (200, "the parent app")
    assert astray.status_code == 404
    assert astray.json()["error"]["message"] == "no MCP endpoint at /other: the endpoint is /mcp"
    assert [(r.path, r.status) for r in server.journal] == [("/other", 404)]


async def test_both_eras_by_hand_under_the_mount(via: str) -> None:
    """A handshake session and a 2026-07-28 request both work under the mount, and both are journaled."""
    server = TestMcpServer()
    server.tool("echo", returns=lambda arguments: arguments["text"])
    with anyio.fail_after(LIMIT_S):
        async with _reach(_parent(server), via) as http:
            wire = Wire(http, server, path="/tickets/mcp")
            await wire.initialize()
            assert (await wire.call("echo", {"text": "old"}))["content"][0]["text"] == "old"
            modern = Stateless(Wire(http, server, path="/tickets/mcp"))
            result = await modern.result("tools/call", {"name": "echo", "arguments": {"text": "new"}})
    assert result["content"][0]["text"] == "new"
    assert [(r.era, r.arguments) for r in server.journal.calls("echo")] == [
        ("handshake", {"text": "old"}),
        ("stateless", {"text": "new"}),
    ]
