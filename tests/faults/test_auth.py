"""Credential rotation: rotate_header refuses the old value from then on, by hand and with the SDK client."""

from __future__ import annotations

import anyio
import httpx2
import pytest
from mcp import Client, MCPError
from mcp.client.streamable_http import streamable_http_client

from ._support import LIMIT_S, Serve, Wire, rpc, socket_client, tools

pytestmark = pytest.mark.anyio

PING = rpc("ping", request_id=5)


@pytest.mark.parametrize("status", [401, 403])
async def test_rotate_header_refuses_the_old_value_and_accepts_the_new(serve: Serve, status: int) -> None:
    """After rotate_header the old credential gets the required header's status (401 or 403); the new one works."""
    server = serve()
    server.require_header("Authorization", "Bearer old", status=status)
    with anyio.fail_after(LIMIT_S):
        async with socket_client(server) as client:
            client.headers["authorization"] = "Bearer old"
            wire = Wire(client)
            await wire.initialize()
            before = await wire.post(PING)
            server.rotate_header("Authorization", "Bearer new")
            refused = await wire.post(PING)
            client.headers["authorization"] = "Bearer new"
            accepted = await wire.post(PING)
    assert (before.status_code, refused.status_code, accepted.status_code) == (200, status, 200)
    if status == 401:
        assert refused.json() == {"error": "invalid_token", "error_description": "wrong Authorization header"}
        challenge = f'Bearer resource_metadata="http://{server.base_url[7:]}/.well-known/oauth-protected-resource"'
        assert refused.headers["www-authenticate"] == challenge
    else:
        assert refused.json()["error"] == "insufficient_scope"
        assert refused.headers["www-authenticate"] == 'Bearer error="insufficient_scope"'
    assert "Bearer old" not in refused.text
    reason = "wrong Authorization header" if status == 401 else "the Authorization header does not grant access"
    assert server.journal.requests("ping", status=status)[0].error.startswith(reason)  # type: ignore[union-attr]
    assert "Bearer old" not in server.journal.to_jsonl()


def test_rotate_header_needs_a_required_header(serve: Serve) -> None:
    """rotate_header on a header that is not required raises KeyError saying to call require_header first."""
    with pytest.raises(KeyError, match="call require_header first"):
        serve().rotate_header("X-Api-Key", "new")


async def test_sdk_client_gets_mcp_error_after_rotation_and_keeps_sending_the_old_value(serve: Serve) -> None:
    """After a rotation the SDK raises MCPError -32603 for the 401; it has no way to pick up a new credential."""
    server = tools(serve(), "create")
    server.require_header("Authorization", "Bearer old")
    with anyio.fail_after(LIMIT_S):
        async with httpx2.AsyncClient(headers={"Authorization": "Bearer old"}) as http:
            async with Client(streamable_http_client(server.url, http_client=http), mode="legacy") as client:
                assert (await client.call_tool("create", {})).is_error is False
                server.rotate_header("Authorization", "Bearer new")
                with pytest.raises(MCPError) as caught:
                    await client.call_tool("create", {})
    assert caught.value.code == -32603  # the SDK's one generic error for any bare HTTP failure
    assert [r.status for r in server.calls("create")] == [200, 401]
    assert server.calls("create")[1].headers["authorization"] == "Bearer old"
    assert server.executions("create") == 1
