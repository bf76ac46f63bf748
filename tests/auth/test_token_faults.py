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


async def test_expire_token_after_n_calls_refuses_that_call_and_every_later_one_with_the_token() -> None:
    """nth=3: two calls run, the third is 401 invalid_token without running, and the token stays expired."""
    server = TestMcpServer(auth=AuthServer())
    server.tool("create", returns="opened")
    server.inject(faults.ExpireToken(), tool="create", nth=3)
    with anyio.fail_after(LIMIT_S):
        async with server, httpx2.AsyncClient() as http:
            token = server.auth.issue_token(resource=server.url).access_token  # type: ignore[union-attr]
            session = (await mcp_post(http, server.url, INITIALIZE, token)).headers["mcp-session-id"]
            statuses = []
            for _ in range(4):
                response = await http.post(
                    server.url,
                    json=CALL,
                    headers={
                        "authorization": f"Bearer {token}",
                        "accept": "application/json, text/event-stream",
                        "mcp-session-id": session,
                        "mcp-protocol-version": "2025-11-25",
                    },
                )
                statuses.append(response.status_code)
    assert statuses == [200, 200, 401, 401]
    assert challenge_of(response)["error_description"] == "token 1 expired"
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
