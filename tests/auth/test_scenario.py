"""A JSON scenario protects its server with OAuth (`auth`, `scopes`, a tool's `scopes`), as `mcp-testkit serve
--scenario` serves it to a bridge in any language."""

from __future__ import annotations

import anyio
import httpx2
import pytest

from mcp_testkit import TestMcpServer
from mcp_testkit.auth import AuthServer
from mcp_testkit.scenario import ScenarioError, from_json

from ._support import INITIALIZE, LIMIT_S, challenge_of, mcp_post

pytestmark = pytest.mark.anyio

SCENARIO = {
    "auth": {"scopes": ["tickets:read", "tickets:write"], "refresh_tokens": False},
    "scopes": ["tickets:read"],
    "tools": [{"name": "create", "returns": "opened", "scopes": ["tickets:write"]}],
}
CALL = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "create", "arguments": {}}}


async def test_a_scenario_with_auth_serves_a_protected_endpoint_with_per_tool_scopes() -> None:
    """Each server built from the scenario has its own authorization server; the tool's scope is enforced."""
    scenario = from_json(SCENARIO)
    server, other = TestMcpServer(**scenario.options), TestMcpServer(**scenario.options)
    scenario.apply(server)
    assert isinstance(server.auth, AuthServer)
    assert server.auth is not other.auth
    with anyio.fail_after(LIMIT_S):
        async with server, httpx2.AsyncClient() as http:
            token = server.auth.issue_token(resource=server.url, scopes=["tickets:read"]).access_token
            opened = await mcp_post(http, server.url, INITIALIZE, token)
            refused = await mcp_post(http, server.url, CALL, token)
    assert opened.status_code == 200
    assert (refused.status_code, challenge_of(refused)["scope"]) == (403, "tickets:read tickets:write")


def test_a_scenario_refuses_scopes_given_as_one_string() -> None:
    """The schema says where: a tool's scopes must be a list."""
    with pytest.raises(ScenarioError, match="tools/0/scopes"):
        from_json({"auth": True, "tools": [{"name": "t", "scopes": "a"}]})


async def test_a_scenario_names_the_discovery_variant_its_server_serves() -> None:
    """`resource_metadata`, `challenge_metadata`, `challenge_scope` (and `tokens`) reach the authorization server: the
    metadata is served at the root only, and a 401's challenge names neither it nor the scopes."""
    scenario = from_json(
        {
            "auth": {
                "resource_metadata": "root",
                "challenge_metadata": False,
                "challenge_scope": False,
                "tokens": "jwt",
            },
            "scopes": ["tickets:read"],
            "tools": [{"name": "create", "returns": "opened"}],
        }
    )
    server = TestMcpServer(**scenario.options)
    scenario.apply(server)
    with anyio.fail_after(LIMIT_S):
        async with server, httpx2.AsyncClient() as http:
            refused = await mcp_post(http, server.url, INITIALIZE, None)
            root = await http.get(server.base_url + "/.well-known/oauth-protected-resource")
            inserted = await http.get(server.base_url + "/.well-known/oauth-protected-resource/mcp")
            assert server.auth is not None
            token = server.auth.issue_token(resource=server.url).access_token
    assert refused.status_code == 401
    assert refused.headers["www-authenticate"] == "Bearer"
    assert (root.status_code, inserted.status_code) == (200, 404)
    assert token.count(".") == 2  # a JWT


def test_a_scenario_refuses_an_unknown_resource_metadata_place() -> None:
    with pytest.raises(ScenarioError, match="resource_metadata"):
        from_json({"auth": {"resource_metadata": "nowhere"}})
