"""Token faults in the fault plan (`faults.ExpireToken`), over a real socket: scripted per call like any fault."""

from __future__ import annotations

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from mcp_testkit import TestMcpServer, faults
from mcp_testkit.auth import AuthServer, Browserless

from ._support import INITIALIZE, LIMIT_S, challenge_of, mcp_post, sdk_provider

pytestmark = pytest.mark.anyio

CALL = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "create", "arguments": {}}}


async def _calls(server: TestMcpServer, token: str, count: int) -> list[httpx2.Response]:
    """`count` tools/call requests on one session, each with `token`."""
    async with httpx2.AsyncClient() as http:
        session = (await mcp_post(http, server.url, INITIALIZE, token)).headers["mcp-session-id"]
        headers = {
            "authorization": f"Bearer {token}",
            "accept": "application/json, text/event-stream",
            "mcp-session-id": session,
            "mcp-protocol-version": "2025-11-25",
        }
        return [await http.post(server.url, json=CALL, headers=headers) for _ in range(count)]


async def test_expire_token_after_n_calls_refuses_that_call_and_every_later_one_with_the_token() -> None:
    """nth=3: two calls run, the third is 401 invalid_token without running, and the token stays expired."""
    server = TestMcpServer(auth=AuthServer())
    server.tool("create", returns="opened")
    server.inject(faults.ExpireToken(), tool="create", nth=3)
    with anyio.fail_after(LIMIT_S):
        async with server:
            token = server.auth.issue_token(resource=server.url).access_token  # type: ignore[union-attr]
            responses = await _calls(server, token, 4)
    assert [r.status_code for r in responses] == [200, 200, 401, 401]
    assert challenge_of(responses[-1])["error_description"] == "token 1 expired"
    assert server.executions("create") == 2
    assert server.auth.grant("token 1").expired  # type: ignore[union-attr]
    assert [c.fault for c in server.calls("create")] == [None, None, faults.ExpireToken(), None]
    server.check(unused_faults=True)


async def test_expire_token_on_a_server_without_auth_is_misplaced() -> None:
    """Fail closed: a token fault on an open server is reported by check(), and the call is served."""
    server = TestMcpServer()
    server.tool("create", returns="opened")
    server.inject(faults.ExpireToken(), tool="create")
    with anyio.fail_after(LIMIT_S):
        async with server, Client(server.url, mode="legacy") as client:
            result = await client.call_tool("create", {})
    assert result.is_error is False
    with pytest.raises(AssertionError, match="has no meaning for a server without auth="):
        server.check()


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_the_sdk_provider_authorizes_again_when_its_token_expires_mid_session(mode: str) -> None:
    """The SDK answers a 401 by a whole new authorization (not its refresh token), then sends the call once more."""
    server = TestMcpServer(auth=AuthServer())
    server.tool("create", returns="opened")
    server.inject(faults.ExpireToken(), tool="create", nth=2)
    browser = Browserless()
    with anyio.fail_after(LIMIT_S):
        async with server:
            provider, _ = sdk_provider(server.url, browser)
            async with httpx2.AsyncClient(auth=provider) as http:
                async with Client(streamable_http_client(server.url, http_client=http), mode=mode) as client:
                    await client.call_tool("create", {})
                    await client.call_tool("create", {})
    calls = server.calls("create")
    assert [c.status for c in calls] == [200, 401, 200]
    assert [server.journal.tokens[c.seq] for c in calls] == ["token 1", "token 1", "token 2"]
    assert server.executions("create") == 2
    grants = [e.grant_type for e in server.journal.auth.at_endpoint("token")]
    assert grants == ["authorization_code", "authorization_code"]  # refresh 1 was never used
    assert len(server.journal.auth.at_endpoint("authorize")) == 2


def test_the_chaos_proxy_refuses_a_token_fault_naming_why() -> None:
    """The proxy holds no authorization server, so inject refuses ExpireToken at once."""
    from mcp_testkit import ChaosProxy

    proxy = ChaosProxy("http://127.0.0.1:8000/mcp")  # not started: inject checks the fault at once
    with pytest.raises(ValueError, match="cannot apply ExpireToken: the proxy holds no authorization server"):
        proxy.inject(faults.ExpireToken())


async def test_revoke_token_refuses_that_call_and_every_later_one_and_its_refresh_token_no_longer_refreshes() -> None:
    """nth=2: one call runs, the second is 401 `token 1 was revoked` without running, and so is the third; the
    refresh token issued with token 1 is refused at the token endpoint (invalid_grant)."""
    server = TestMcpServer(auth=AuthServer())
    server.tool("create", returns="opened")
    server.inject(faults.RevokeToken(), tool="create", nth=2)
    browser = Browserless()
    with anyio.fail_after(LIMIT_S):
        async with server:
            provider, storage = sdk_provider(server.url, browser)
            async with httpx2.AsyncClient(auth=provider) as http:
                async with Client(streamable_http_client(server.url, http_client=http), mode="legacy") as client:
                    await client.call_tool("create", {})
                    assert storage.tokens is not None
                    assert storage.client_info is not None
                    old_refresh, registered = storage.tokens.refresh_token, storage.client_info
                    await client.call_tool("create", {})  # the SDK authorizes again and sends it once more
            async with httpx2.AsyncClient() as http:
                refreshed = await http.post(
                    f"{server.base_url}/oauth/token",
                    data={"grant_type": "refresh_token", "refresh_token": old_refresh},
                    auth=(registered.client_id or "", registered.client_secret or ""),
                )
    calls = server.calls("create")
    assert [c.status for c in calls] == [200, 401, 200]
    assert [server.journal.tokens[c.seq] for c in calls] == ["token 1", "token 1", "token 2"]
    assert server.auth.grant("token 1").revoked  # type: ignore[union-attr]
    assert server.executions("create") == 2
    assert refreshed.status_code == 400
    assert refreshed.json()["error"] == "invalid_grant"
    assert [c.fault for c in calls] == [None, faults.RevokeToken(), None]


async def test_insufficient_scope_is_a_step_up_naming_the_union_of_the_scopes_held_and_demanded() -> None:
    """The call it hits is 403 insufficient_scope, its challenge's scope the token's scopes and the demanded one,
    and does not run; the fault fires once, so the next call is served."""
    server = TestMcpServer(auth=AuthServer(scopes=["tickets:read", "tickets:write"]))
    server.tool("create", returns="opened")
    server.inject(faults.InsufficientScope(scope="tickets:write"), tool="create", nth=2)
    with anyio.fail_after(LIMIT_S):
        async with server:
            token = server.auth.issue_token(resource=server.url, scopes=["tickets:read"])  # type: ignore[union-attr]
            responses = await _calls(server, token.access_token, 3)
    assert [r.status_code for r in responses] == [200, 403, 200]
    challenge = challenge_of(responses[1])
    assert challenge["error"] == "insufficient_scope"
    assert challenge["scope"] == "tickets:read tickets:write"
    assert challenge["error_description"] == "token 1 lacks the scope 'tickets:write' that this call needs (step-up)"
    assert challenge["resource_metadata"].startswith("http://127.0.0.1:")
    assert server.executions("create") == 2
    server.check(unused_faults=True)


async def test_insufficient_scope_on_a_token_that_holds_the_scope_changes_nothing_and_stays_due() -> None:
    """A fault that finds nothing to refuse fires on nothing: the call is served, no record names the fault, and
    check(unused_faults=True) names it as never fired."""
    server = TestMcpServer(auth=AuthServer(scopes=["tickets:write"]))
    server.tool("create", returns="opened")
    server.inject(faults.InsufficientScope(scope="tickets:write"), tool="create")
    with anyio.fail_after(LIMIT_S):
        async with server:
            token = server.auth.issue_token(resource=server.url, scopes=["tickets:write"])  # type: ignore[union-attr]
            responses = await _calls(server, token.access_token, 2)
    assert [r.status_code for r in responses] == [200, 200]
    assert [c.fault for c in server.calls("create")] == [None, None]
    with pytest.raises(AssertionError, match="never fired"):
        server.check(unused_faults=True)


@pytest.mark.parametrize("fault", [faults.RevokeToken(), faults.InsufficientScope(scope="x")])
async def test_the_other_token_faults_on_a_server_without_auth_are_misplaced(fault: faults.Fault) -> None:
    server = TestMcpServer()
    server.tool("create", returns="opened")
    server.inject(fault, tool="create")
    with anyio.fail_after(LIMIT_S):
        async with server, Client(server.url, mode="legacy") as client:
            result = await client.call_tool("create", {})
    assert result.is_error is False
    with pytest.raises(AssertionError, match="has no meaning for a server without auth="):
        server.check()


def test_insufficient_scope_names_a_scope() -> None:
    with pytest.raises(ValueError, match="names one or more scopes"):
        faults.InsufficientScope(scope=" ")


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_the_sdk_provider_steps_up_asking_for_the_union_of_scopes_and_sends_the_call_once_more(mode: str) -> None:
    """A 403 insufficient_scope mid-session: the SDK authorizes again asking for the scopes it held and the one
    demanded, gets a token with both, and sends the refused call (which did not run) once more."""
    server = TestMcpServer(auth=AuthServer(scopes=["tickets:read", "tickets:write"]), scopes=["tickets:read"])
    server.tool("create", returns="opened")
    server.inject(faults.InsufficientScope(scope="tickets:write"), tool="create", nth=2)
    browser = Browserless()
    with anyio.fail_after(LIMIT_S):
        async with server:
            provider, _ = sdk_provider(server.url, browser)
            async with httpx2.AsyncClient(auth=provider) as http:
                async with Client(streamable_http_client(server.url, http_client=http), mode=mode) as client:
                    await client.call_tool("create", {})
                    second = await client.call_tool("create", {})
    assert second.is_error is False
    calls = server.calls("create")
    assert [(c.status, server.journal.tokens[c.seq]) for c in calls] == [
        (200, "token 1"),
        (403, "token 1"),
        (200, "token 2"),
    ]
    assert server.executions("create") == 2
    asked = [e.parameters.get("scope") for e in server.journal.auth.at_endpoint("authorize")]
    assert asked == ["tickets:read", "tickets:read tickets:write"]
    assert server.auth.grant("token 2").scopes == ("tickets:read", "tickets:write")  # type: ignore[union-attr]
