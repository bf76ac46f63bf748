"""The official SDK client's OAuth provider against the fake authorization server, over a real socket, both eras:
the whole authorization-code flow without a browser, and a step-up for a tool's scope."""

from __future__ import annotations

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from mcp_testkit import TestMcpServer
from mcp_testkit.auth import AuthServer, Browserless

from ._support import LIMIT_S, sdk_provider, secrets_of

pytestmark = pytest.mark.anyio

MODES = [("legacy", "handshake"), ("auto", "stateless")]
FIRST = {"legacy": "initialize", "auto": "server/discover"}


def _server() -> TestMcpServer:
    server = TestMcpServer(auth=AuthServer(scopes=["tickets:read", "tickets:write"]), scopes=["tickets:read"])
    server.tool("list_tickets", returns="none open")
    server.tool("create", returns="opened", scopes=["tickets:write"])
    return server


@pytest.mark.parametrize(("mode", "era"), MODES)
async def test_sdk_provider_completes_the_code_flow_without_a_browser_and_lists_tools(mode: str, era: str) -> None:
    """Discovery, registration, authorization with PKCE and the token exchange all happen, then tools are listed."""
    server = _server()
    browser = Browserless()
    with anyio.fail_after(LIMIT_S):
        async with server:
            url = server.url
            provider, storage = sdk_provider(url, browser)
            async with httpx2.AsyncClient(auth=provider) as http:
                async with Client(streamable_http_client(server.url, http_client=http), mode=mode) as client:
                    tools = await client.list_tools()
                    result = await client.call_tool("list_tickets", {})
    assert [tool.name for tool in tools.tools] == ["list_tickets", "create"]
    assert result.content[0].text == "none open"  # type: ignore[union-attr]
    auth = server.journal.auth
    assert [(e.endpoint, e.status) for e in auth] == [
        ("resource metadata", 200),
        ("metadata", 200),
        ("register", 201),
        ("authorize", 302),
        ("token", 200),
    ]
    authorize, token = auth.at_endpoint("authorize")[0], auth.at_endpoint("token")[0]
    assert authorize.parameters["code_challenge_method"] == "S256"
    assert (authorize.scope, authorize.resource, token.resource) == ("tickets:read", url, url)
    assert (token.grant_type, token.client_auth, token.issued) == (
        "authorization_code",
        "client_secret_basic",
        ("token 1", "refresh 1"),
    )
    assert token.parameters["code"] == token.parameters["code_verifier"] == "***"
    first = server.journal[0]
    assert (first.rpc_method, first.status, first.era) == (FIRST[mode], 401, None)
    assert server.journal.tokens[first.seq] is None
    assert server.journal.tokens.labels() == ["token 1"]
    assert {r.era for r in server.journal.requests(status=200)} == {era}
    assert server.auth is not None
    everything = "\n".join(
        [
            server.journal.to_jsonl(redact=False),
            server.journal.format(),
            auth.format(),
            repr(list(auth)),
            repr(server.journal.records),
            repr(server.auth.grants),
            repr(server.auth.clients),
        ]
    )
    leaked = [name for name, value in secrets_of(storage).items() if value in everything]
    assert leaked == []


@pytest.mark.parametrize(("mode", "era"), MODES)
async def test_sdk_provider_steps_up_to_the_union_of_scopes_for_a_tool_that_needs_more(mode: str, era: str) -> None:
    """A 403 insufficient_scope for tickets:write makes the SDK authorize again for both scopes; the call runs once."""
    server = _server()
    browser = Browserless()
    with anyio.fail_after(LIMIT_S):
        async with server:
            provider, _ = sdk_provider(server.url, browser)
            async with httpx2.AsyncClient(auth=provider) as http:
                async with Client(streamable_http_client(server.url, http_client=http), mode=mode) as client:
                    result = await client.call_tool("create", {})
    assert result.content[0].text == "opened"  # type: ignore[union-attr]
    calls = server.calls("create")
    assert [c.status for c in calls] == [403, 200]
    assert calls[0].error == "token 1 lacks the scope 'tickets:write' that tool 'create' needs"
    assert [server.journal.tokens[c.seq] for c in calls] == ["token 1", "token 2"]
    assert server.executions("create") == 1
    scopes = [e.scope for e in server.journal.auth.at_endpoint("authorize")]
    assert scopes == ["tickets:read", "tickets:read tickets:write"]
    assert server.auth is not None
    assert server.auth.grant("token 2").scopes == ("tickets:read", "tickets:write")


async def test_the_flow_also_runs_in_process_through_the_asgi_app() -> None:
    """With httpx2's ASGI transport for the client and the browser, the same flow needs no socket."""
    server = _server()
    transport = httpx2.ASGITransport(app=server.asgi_app)
    url = "http://127.0.0.1/mcp"
    with anyio.fail_after(LIMIT_S):
        async with httpx2.AsyncClient(transport=transport) as browser_http:
            provider, _ = sdk_provider(url, Browserless(browser_http))
            async with httpx2.AsyncClient(auth=provider, transport=transport) as http:
                async with Client(streamable_http_client(url, http_client=http), mode="legacy") as client:
                    tools = await client.list_tools()
    assert [tool.name for tool in tools.tools] == ["list_tickets", "create"]
    assert server.auth is not None
    assert server.auth.grant("token 1").resource == url
