"""TestMcpServer(auth=...) as an OAuth protected resource, over a real socket: RFC 9728 metadata, the 401 challenge,
the audience (RFC 8707) and scope checks, per-tool scopes, and which token each request carried."""

from __future__ import annotations

import anyio
import httpx2
import pytest

from mcp_testkit import TestMcpServer
from mcp_testkit.auth import AuthServer

from ._support import INITIALIZE, LIMIT_S, challenge_of, mcp_post

pytestmark = pytest.mark.anyio

CALL_CREATE = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "create", "arguments": {}}}


def _server(**settings: object) -> TestMcpServer:
    server = TestMcpServer(auth=AuthServer(), scopes=["tickets:read"], **settings)  # type: ignore[arg-type]
    server.tool("create", returns="opened", scopes=["tickets:write"])
    return server


async def test_protected_resource_metadata_is_served_path_based_and_at_the_root() -> None:
    """Both RFC 9728 paths give the resource, its authorization server and the endpoint's scopes."""
    server = _server()
    with anyio.fail_after(LIMIT_S):
        async with server, httpx2.AsyncClient() as http:
            base = server.base_url
            path_based = await http.get(base + "/.well-known/oauth-protected-resource/mcp")
            root = await http.get(base + "/.well-known/oauth-protected-resource")
            issuer = path_based.json()["authorization_servers"][0]
            metadata = await http.get(base + "/.well-known/oauth-authorization-server/oauth")
            openid = await http.get(base + "/.well-known/openid-configuration/oauth")
            appended = await http.get(base + "/oauth/.well-known/openid-configuration")
    assert (
        path_based.json()
        == root.json()
        == {
            "resource": base + "/mcp",
            "authorization_servers": [base + "/oauth"],
            "bearer_methods_supported": ["header"],
            "scopes_supported": ["tickets:read"],
        }
    )
    assert metadata.json() == openid.json() == appended.json()
    document = metadata.json()
    assert document["issuer"] == issuer
    assert document["code_challenge_methods_supported"] == ["S256"]
    assert document["authorization_response_iss_parameter_supported"] is True
    assert document["token_endpoint_auth_methods_supported"] == ["client_secret_basic", "client_secret_post", "none"]
    assert document["registration_endpoint"] == base + "/oauth/register"
    assert [e.endpoint for e in server.journal.auth] == ["resource metadata"] * 2 + ["metadata"] * 3
    assert len(server.journal) == 0  # the MCP journal holds MCP requests only


async def test_a_request_without_a_token_gets_401_with_the_resource_metadata_and_scope() -> None:
    """The challenge names the path-based metadata and the endpoint's scopes; the request never reaches the era."""
    server = _server()
    with anyio.fail_after(LIMIT_S):
        async with server, httpx2.AsyncClient() as http:
            base = server.base_url
            response = await mcp_post(http, server.url, INITIALIZE)
    assert response.status_code == 401
    assert challenge_of(response) == {
        "resource_metadata": base + "/.well-known/oauth-protected-resource/mcp",
        "scope": "tickets:read",
    }
    assert "error=" not in response.headers["www-authenticate"]  # RFC 6750 3.1: no error code without a token
    assert len(server.sessions) == 0
    assert server.journal.last.rpc_method == "initialize"


async def test_a_token_for_another_resource_is_refused_with_401() -> None:
    """RFC 8707: a token the authorization server issued for another resource is invalid_token here."""
    server = _server()
    with anyio.fail_after(LIMIT_S):
        async with server, httpx2.AsyncClient() as http:
            base, url = server.base_url, server.url
            other = server.auth.issue_token(resource=server.base_url + "/other", scopes=["tickets:read"])  # type: ignore[union-attr]
            mine = server.auth.issue_token(resource=server.url, scopes=["tickets:read"])  # type: ignore[union-attr]
            refused = await mcp_post(http, server.url, INITIALIZE, other.access_token)
            accepted = await mcp_post(http, server.url, INITIALIZE, mine.access_token)
    assert (refused.status_code, accepted.status_code) == (401, 200)
    challenge = challenge_of(refused)
    assert challenge["error"] == "invalid_token"
    assert challenge["error_description"] == f"token 1 was issued for {base}/other, not for {url} (RFC 8707)"
    assert [server.journal.tokens[r.seq] for r in server.journal] == ["token 1", "token 2"]
    assert other.access_token not in refused.text


async def test_a_tool_with_a_scope_the_token_lacks_gets_403_insufficient_scope_naming_it() -> None:
    """The call is refused before the tool runs; the challenge names every scope the call needs."""
    server = _server()
    with anyio.fail_after(LIMIT_S):
        async with server, httpx2.AsyncClient() as http:
            token = server.auth.issue_token(resource=server.url, scopes=["tickets:read"]).access_token  # type: ignore[union-attr]
            await mcp_post(http, server.url, INITIALIZE, token)
            refused = await mcp_post(http, server.url, {**CALL_CREATE}, token)
    assert refused.status_code == 403
    challenge = challenge_of(refused)
    assert (challenge["error"], challenge["scope"]) == ("insufficient_scope", "tickets:read tickets:write")
    assert challenge["resource_metadata"].endswith("/.well-known/oauth-protected-resource/mcp")
    assert refused.json()["error_description"] == "token 1 lacks the scope 'tickets:write' that tool 'create' needs"
    assert server.executions("create") == 0
    assert server.calls("create")[0].status == 403


@pytest.mark.parametrize(("how", "description"), [("revoke", "token 1 was revoked"), ("expire", "token 1 expired")])
async def test_a_revoked_or_expired_token_is_refused_with_401(how: str, description: str) -> None:
    """A token that worked stops working once the authorization server revokes it or it expires."""
    server = _server()
    with anyio.fail_after(LIMIT_S):
        async with server, httpx2.AsyncClient() as http:
            token = server.auth.issue_token(resource=server.url, scopes=["tickets:read"]).access_token  # type: ignore[union-attr]
            before = await mcp_post(http, server.url, INITIALIZE, token)
            getattr(server.auth, how)("token 1")
            after = await mcp_post(http, server.url, INITIALIZE, token)
    assert (before.status_code, after.status_code) == (200, 401)
    assert challenge_of(after)["error_description"] == description


async def test_no_journal_holds_the_token_a_request_carried() -> None:
    """The record's Authorization header reads 'Bearer ***' even unredacted; journal.tokens names the label."""
    server = _server()
    with anyio.fail_after(LIMIT_S):
        async with server, httpx2.AsyncClient() as http:
            token = server.auth.issue_token(resource=server.url, scopes=["tickets:read"]).access_token  # type: ignore[union-attr]
            await mcp_post(http, server.url, INITIALIZE, token)
            await mcp_post(http, server.url, INITIALIZE, "made-up")
    first, second = server.journal.records
    assert first.headers["authorization"] == second.headers["authorization"] == "Bearer ***"
    assert token not in server.journal.to_jsonl(redact=False)
    assert (server.journal.tokens[first.seq], server.journal.tokens[second.seq]) == ("token 1", "unknown token")
    assert second.error == "the access token is not one the authorization server issued"


def test_scopes_need_auth_and_are_a_list() -> None:
    """scopes= without auth= and a tool's scopes given as one string are refused, naming the fix."""
    with pytest.raises(ValueError, match="scopes= needs auth="):
        TestMcpServer(scopes=["a"])
    with pytest.raises(ValueError, match="scopes= is a list of OAuth scope names"):
        TestMcpServer(auth=True).tool("t", scopes="a")
    with pytest.raises(ValueError, match="auth must be an AuthServer"):
        TestMcpServer(auth="yes")  # type: ignore[arg-type]


async def test_jwt_access_tokens_carry_issuer_audience_scope_and_expiry_and_open_the_endpoint() -> None:
    """AuthServer(tokens="jwt"): the token endpoint issues an at+jwt whose claims say what the grant says."""
    import base64
    import json

    server = TestMcpServer(auth=AuthServer(tokens="jwt"), scopes=["tickets:read"])
    assert server.auth is not None
    client = server.auth.register_client(auth_method="client_secret_post")
    with anyio.fail_after(LIMIT_S):
        async with server, httpx2.AsyncClient() as http:
            url, base = server.url, server.base_url
            form = {
                "grant_type": "client_credentials",
                "scope": "tickets:read",
                "resource": url,
                "client_id": client.client_id,
                "client_secret": client.client_secret or "",
            }
            token = (await http.post(base + "/oauth/token", data=form)).json()["access_token"]
            opened = await mcp_post(http, url, INITIALIZE, token)
    head, body, _signature = token.split(".")
    header = json.loads(base64.urlsafe_b64decode(head + "=" * (-len(head) % 4)))
    claims = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    assert header == {"alg": "HS256", "typ": "at+jwt"}
    assert (claims["iss"], claims["aud"], claims["sub"], claims["scope"]) == (
        base + "/oauth",
        url,
        client.client_id,
        "tickets:read",
    )
    assert claims["exp"] - claims["iat"] == 3600
    assert opened.status_code == 200
    assert server.journal.tokens.labels() == ["token 1"]
    assert token not in server.journal.to_jsonl(redact=False)
