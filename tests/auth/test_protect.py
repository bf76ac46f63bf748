"""`TestMcpServer.protect`: a server built open is a protected resource from the call until its next reset, over a
real socket, with the SDK's OAuth provider completing the flow against it; and what protect() refuses."""

from __future__ import annotations

import anyio
import httpx2
import pytest

from mcp_testkit import TestMcpServer
from mcp_testkit.auth import AuthServer, Browserless

from ._support import LIMIT_S, sdk_provider

pytestmark = pytest.mark.anyio

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}
ACCEPT = {"accept": "application/json, text/event-stream"}


async def test_a_protected_server_refuses_a_request_without_a_token_until_its_reset() -> None:
    server = TestMcpServer()
    with anyio.fail_after(LIMIT_S):
        async with server, httpx2.AsyncClient() as http:
            assert (await http.post(server.url, json=INITIALIZE, headers=ACCEPT)).status_code == 200
            auth = server.protect(scopes=["tickets:read"])
            assert isinstance(auth, AuthServer)
            assert server.auth is auth
            refused = await http.post(server.url, json=INITIALIZE, headers=ACCEPT)
            metadata = await http.get(server.url.replace("/mcp", "/.well-known/oauth-protected-resource/mcp"))
            server.reset()
            reopened = await http.post(server.url, json=INITIALIZE, headers=ACCEPT)
            url = server.url
    assert refused.status_code == 401
    assert 'scope="tickets:read"' in refused.headers["www-authenticate"]
    assert "resource_metadata=" in refused.headers["www-authenticate"]
    assert (metadata.status_code, metadata.json()["resource"]) == (200, url)
    assert (reopened.status_code, server.auth) == (200, None)


async def test_the_sdk_provider_authorizes_against_a_server_protected_for_a_while() -> None:
    """The SDK's OAuth provider, consenting without a browser, gets a token from the authorization server protect()
    serves, and its request is answered with it."""
    server = TestMcpServer()
    with anyio.fail_after(LIMIT_S):
        async with server:
            server.protect(AuthServer())
            browser = Browserless()
            provider, storage = sdk_provider(server.url, browser)
            async with httpx2.AsyncClient(auth=provider) as http:
                answered = await http.post(server.url, json=INITIALIZE, headers=ACCEPT)
    assert answered.status_code == 200
    assert [e.endpoint for e in server.journal.auth][-2:] == ["authorize", "token"]
    assert server.journal.tokens.labels() == ["token 1"]
    assert storage.tokens is not None


def test_protect_checks_what_it_is_given() -> None:
    server = TestMcpServer()
    with pytest.raises(ValueError, match="auth must be an AuthServer"):
        server.protect("yes")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="scopes= needs auth="):
        server.protect(False, scopes=["tickets:read"])
    with pytest.raises(ValueError, match="scopes must be a list of scope names"):
        server.protect(scopes="tickets:read")
    assert server.auth is None  # nothing refused changed the server
    server.protect()
    assert server.protect(False) is None
    assert server.auth is None


def test_browserless_takes_a_client_or_a_transport_not_both() -> None:
    transport = httpx2.ASGITransport(app=TestMcpServer().asgi_app)
    with pytest.raises(ValueError, match="not both"):
        Browserless(httpx2.AsyncClient(), transport=transport)
