"""The discovery variants a protected server may have (issue 38's metadata variants), over a real socket: the
resource metadata path-inserted, at the root or both, named by the challenge or not; the scopes in the challenge,
in the resource metadata, or in neither. Each is checked on the wire, then through the reference bridge's OAuth,
which must find its way in every one."""

from __future__ import annotations

import anyio
import httpx2
import pytest

from mcp_testkit import TestMcpServer
from mcp_testkit.auth import PRM_PATH, AuthServer, Browserless
from mcp_testkit.bridge import OAuth, ServerConfig, ToolPool

from ._support import LIMIT_S

pytestmark = pytest.mark.anyio

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}},
}


async def _bridge_calls(server: TestMcpServer) -> str:
    browser = Browserless()
    oauth = OAuth(redirect_handler=browser.redirect_handler, callback_handler=browser.callback_handler)
    async with ToolPool([ServerConfig(name="t", url=server.url, era="handshake", auth=oauth)], cache=False) as pool:
        text: str = await pool.call("t.list_tickets", {})
    return text


@pytest.mark.parametrize(
    ("where", "named", "served", "challenge"),
    [
        ("both", True, {"/mcp": 200, "": 200}, 'resource_metadata="{base}/.well-known/oauth-protected-resource/mcp"'),
        ("path", False, {"/mcp": 200, "": 404}, None),
        ("root", True, {"/mcp": 404, "": 200}, 'resource_metadata="{base}/.well-known/oauth-protected-resource"'),
        ("root", False, {"/mcp": 404, "": 200}, None),
    ],
)
async def test_the_resource_metadata_is_where_the_settings_put_it_and_the_bridge_finds_it(
    where: str, named: bool, served: dict[str, int], challenge: str | None
) -> None:
    server = TestMcpServer(auth=AuthServer(resource_metadata=where, challenge_metadata=named), scopes=["tickets:read"])
    server.tool("list_tickets", returns="none open")
    with anyio.fail_after(LIMIT_S):
        async with server:
            base = server.base_url
            async with httpx2.AsyncClient() as http:
                refused = await http.post(server.url, json=INITIALIZE, headers={"Accept": "application/json"})
                found = {suffix: (await http.get(base + PRM_PATH + suffix)).status_code for suffix in served}
            text = await _bridge_calls(server)
    header = refused.headers["www-authenticate"]
    assert refused.status_code == 401
    if challenge is None:
        assert "resource_metadata" not in header
    else:
        assert challenge.format(base=base) in header
    assert found == served
    assert text == "none open"
    fetched = [e.path for e in server.journal.auth.at_endpoint("resource metadata") if e.status == 200]
    assert fetched[-1] == PRM_PATH + ("/mcp" if where != "root" else "")


@pytest.mark.parametrize(
    ("in_challenge", "in_metadata", "asked"),
    [(True, False, "tickets:read"), (False, True, "tickets:read"), (False, False, None)],
)
async def test_the_scopes_are_named_where_the_settings_say_and_the_bridge_asks_for_what_is_named(
    in_challenge: bool, in_metadata: bool, asked: str | None
) -> None:
    """The spec's scope selection: the challenge's scope, else the resource metadata's `scopes_supported`, else no
    scope at all (the authorization server here lists none either). With no scope named anywhere the server needs
    none, so that the token got without one is served."""
    auth = AuthServer(challenge_scope=in_challenge, metadata_scopes=in_metadata)
    server = TestMcpServer(auth=auth, scopes=["tickets:read"] if asked else [])
    server.tool("list_tickets", returns="none open")
    with anyio.fail_after(LIMIT_S):
        async with server:
            async with httpx2.AsyncClient() as http:
                refused = await http.post(server.url, json=INITIALIZE, headers={"Accept": "application/json"})
                document = (await http.get(server.base_url + PRM_PATH + "/mcp")).json()
            assert await _bridge_calls(server) == "none open"
    assert ('scope="tickets:read"' in refused.headers["www-authenticate"]) is (in_challenge and asked is not None)
    assert ("scopes_supported" in document) is (in_metadata and asked is not None)
    assert [e.scope for e in server.journal.auth.at_endpoint("authorize")] == [asked]


async def test_a_step_up_names_its_scope_even_where_401s_name_none() -> None:
    """challenge_scope=False is about the 401: a 403 insufficient_scope still names the scopes a step-up needs."""
    server = TestMcpServer(auth=AuthServer(challenge_scope=False), scopes=["tickets:read"])
    server.tool("create", returns="opened", scopes=["tickets:write"])
    with anyio.fail_after(LIMIT_S):
        async with server:
            assert server.auth is not None
            token = server.auth.issue_token(resource=server.url, scopes=["tickets:read"])
            headers = {"Accept": "application/json, text/event-stream", "Authorization": f"Bearer {token.access_token}"}
            async with httpx2.AsyncClient() as http:
                answer = await http.post(server.url, json=INITIALIZE, headers=headers)
                session = {"Mcp-Session-Id": answer.headers["mcp-session-id"], "MCP-Protocol-Version": "2025-11-25"}
                params = {"name": "create", "arguments": {}}
                call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": params}
                refused = await http.post(server.url, json=call, headers=headers | session)
    assert refused.status_code == 403
    assert 'scope="tickets:read tickets:write"' in refused.headers["www-authenticate"]


def test_resource_metadata_names_its_choices() -> None:
    with pytest.raises(ValueError, match="'both', 'path'"):
        AuthServer(resource_metadata="nowhere")
