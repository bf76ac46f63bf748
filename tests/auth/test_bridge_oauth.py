"""The reference bridge's OAuth (`ServerConfig(auth=OAuth(...))`) against the fake authorization server, over a real
socket in both eras: the code flow without a browser, a token that expires mid-session, a step-up, a revoked
grant, pre-registration, a token file, client credentials, two servers whose tokens stay apart, and a failed flow
named as the server's auth error."""

from __future__ import annotations

import json
import os
import stat
from typing import TYPE_CHECKING

import anyio
import pytest

from mcp_testkit import TestMcpServer, faults
from mcp_testkit.auth import AuthServer, Browserless
from mcp_testkit.bridge import MCPAuthError, OAuth, ServerConfig, ToolPool

from ._support import LIMIT_S

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.anyio

ERAS = ["handshake", "stateless"]
FIRST = {"handshake": "initialize", "stateless": "server/discover"}


def _server(**auth: object) -> TestMcpServer:
    server = TestMcpServer(auth=AuthServer(scopes=["tickets:read", "tickets:write"], **auth), scopes=["tickets:read"])  # type: ignore[arg-type]
    server.tool("list_tickets", returns="none open")
    server.tool("create", returns="opened")
    return server


def _config(server: TestMcpServer, era: str, browser: Browserless, **oauth: object) -> ServerConfig:
    auth = OAuth(redirect_handler=browser.redirect_handler, callback_handler=browser.callback_handler, **oauth)  # type: ignore[arg-type]
    return ServerConfig(name="tickets", url=server.url, era=era, auth=auth)  # type: ignore[arg-type]


@pytest.mark.parametrize("era", ERAS)
async def test_the_bridge_completes_the_code_flow_without_a_browser_and_calls_a_tool(era: str) -> None:
    server = _server()
    browser = Browserless()
    with anyio.fail_after(LIMIT_S):
        async with server, ToolPool([_config(server, era, browser)], cache=False) as pool:
            url = server.url
            names = [tool.name for tool in pool.tools()]
            text = await pool.call("tickets.list_tickets", {})
    assert names == ["tickets.list_tickets", "tickets.create"]
    assert text == "none open"
    auth = server.journal.auth
    assert [(e.endpoint, e.status) for e in auth] == [
        ("resource metadata", 200),
        ("metadata", 200),
        ("register", 201),
        ("authorize", 302),
        ("token", 200),
    ]
    authorize = auth.at_endpoint("authorize")[0]
    assert (authorize.parameters["code_challenge_method"], authorize.scope, authorize.resource) == (
        "S256",
        "tickets:read",
        url,
    )
    first = server.journal[0]
    assert (first.rpc_method, first.status) == (FIRST[era], 401)
    assert server.journal.tokens.labels() == ["token 1"]
    assert {r.era for r in server.journal.requests(status=200)} == {era}
    assert server.executions("list_tickets") == 1


@pytest.mark.parametrize("era", ERAS)
async def test_a_token_that_expires_mid_session_is_replaced_once_and_the_refused_call_sent_once_more(era: str) -> None:
    """ExpireToken on the second call: a 401 proves it did not run; the bridge's OAuth gets a new token once and the
    write is sent once more, and runs once."""
    server = _server()
    server.inject(faults.ExpireToken(), tool="create", nth=2)
    browser = Browserless()
    with anyio.fail_after(LIMIT_S):
        async with server, ToolPool([_config(server, era, browser)], cache=False) as pool:
            await pool.call("tickets.create", {})
            assert await pool.call("tickets.create", {}) == "opened"
    calls = server.calls("create")
    assert [(c.status, server.journal.tokens[c.seq]) for c in calls] == [
        (200, "token 1"),
        (401, "token 1"),
        (200, "token 2"),
    ]
    assert server.executions("create") == 2
    assert len(server.journal.auth.at_endpoint("token")) == 2  # one more token, not a loop


async def test_a_token_past_its_lifetime_is_refreshed_before_the_call_with_the_refresh_token() -> None:
    """A token whose expires_in has passed is refreshed before the next request is sent: one refresh grant, and the
    call is sent once, with the new token."""
    server = _server(token_ttl_s=1)
    browser = Browserless()
    with anyio.fail_after(LIMIT_S):
        async with server, ToolPool([_config(server, "handshake", browser)], cache=False) as pool:
            await pool.call("tickets.create", {})
            await anyio.sleep(1.1)  # the SDK's provider judges expiry by the wall clock
            await pool.call("tickets.create", {})
    grants = [e.grant_type for e in server.journal.auth.at_endpoint("token")]
    assert grants == ["authorization_code", "refresh_token"]
    calls = server.calls("create")
    assert [(c.status, server.journal.tokens[c.seq]) for c in calls] == [(200, "token 1"), (200, "token 2")]


@pytest.mark.parametrize("era", ERAS)
async def test_a_step_up_asks_for_the_union_of_the_scopes_and_sends_the_call_once_more(era: str) -> None:
    server = _server()
    server.inject(faults.InsufficientScope(scope="tickets:write"), tool="create")
    browser = Browserless()
    with anyio.fail_after(LIMIT_S):
        async with server, ToolPool([_config(server, era, browser)], cache=False) as pool:
            assert await pool.call("tickets.create", {}) == "opened"
    asked = [e.scope for e in server.journal.auth.at_endpoint("authorize")]
    assert asked == ["tickets:read", "tickets:read tickets:write"]
    calls = server.calls("create")
    assert [(c.status, server.journal.tokens[c.seq]) for c in calls] == [(403, "token 1"), (200, "token 2")]
    assert server.executions("create") == 1


async def test_a_grant_revoked_twice_in_a_row_is_an_auth_error_naming_the_server_not_a_loop() -> None:
    """Every token is refused (RevokeToken on every call): the bridge authorizes again once per call it is asked
    for, and raises MCPAuthError naming the server; the write never runs."""
    server = _server()
    server.inject(faults.RevokeToken(), tool="create", times=None)
    browser = Browserless()
    with anyio.fail_after(LIMIT_S):
        async with server, ToolPool([_config(server, "handshake", browser)], cache=False) as pool:
            with pytest.raises(MCPAuthError) as refused:
                await pool.call("tickets.create", {})
    assert refused.value.server == "tickets"
    assert refused.value.status == 401
    assert server.executions("create") == 0
    assert [c.status for c in server.calls("create")] == [401, 401]  # the first try, and one after authorizing again


async def test_two_servers_never_see_each_others_tokens() -> None:
    """Two protected servers, each with its authorization server: each gets a token issued for it (its own
    resource), and every token it is sent is one its own authorization server issued."""
    one, two = _server(), _server()
    browser = Browserless()
    with anyio.fail_after(LIMIT_S):
        async with one, two:
            configs = [
                ServerConfig(
                    name=name,
                    url=server.url,
                    auth=OAuth(redirect_handler=browser.redirect_handler, callback_handler=browser.callback_handler),
                )
                for name, server in (("one", one), ("two", two))
            ]
            async with ToolPool(configs, cache=False) as pool:
                await pool.call("one.create", {})
                await pool.call("two.create", {})
            urls = {one: one.url, two: two.url}
    assert urls[one] != urls[two]
    for server in (one, two):
        assert server.journal.tokens.labels() == ["token 1"]  # never 'unknown token': another server's
        assert [e.resource for e in server.journal.auth.at_endpoint("token")] == [urls[server]]
        assert server.executions("create") == 1


async def test_a_pre_registered_client_skips_registration_and_sends_its_secret_from_the_environment() -> None:
    server = _server()
    assert server.auth is not None
    client = server.auth.register_client(redirect_uris=["http://127.0.0.1:33418/callback"])
    browser = Browserless()
    auth = OAuth(
        redirect_handler=browser.redirect_handler,
        callback_handler=browser.callback_handler,
        client_id=client.client_id,
        client_secret_env="TICKETS_SECRET",
    )
    with anyio.fail_after(LIMIT_S):
        async with server:
            config = ServerConfig(name="tickets", url=server.url, auth=auth)
            async with ToolPool([config], cache=False, environ={"TICKETS_SECRET": client.client_secret or ""}) as pool:
                await pool.call("tickets.list_tickets", {})
    endpoints = [e.endpoint for e in server.journal.auth]
    assert "register" not in endpoints
    token = server.journal.auth.at_endpoint("token")[0]
    assert (token.client_auth, token.status) == ("client_secret_basic", 200)
    assert client.client_secret is not None
    assert client.client_secret not in repr(auth)


async def test_a_pre_registered_client_whose_secret_variable_is_unset_is_an_auth_error_naming_it() -> None:
    server = _server()
    auth = OAuth(client_id="app", client_secret_env="TICKETS_SECRET")
    with anyio.fail_after(LIMIT_S):
        async with server:
            with pytest.raises(MCPAuthError, match="'TICKETS_SECRET' is not set"):
                async with ToolPool([ServerConfig(name="tickets", url=server.url, auth=auth)], environ={}):
                    pass


async def test_tokens_kept_in_a_file_let_a_second_pool_call_without_authorizing_again(tmp_path: Path) -> None:
    server = _server()
    browser = Browserless()
    tokens = tmp_path / "tokens.json"
    with anyio.fail_after(LIMIT_S):
        async with server:
            for _ in range(2):
                async with ToolPool([_config(server, "handshake", browser, token_file=tokens)], cache=False) as pool:
                    await pool.call("tickets.list_tickets", {})
            url = server.url
    assert len(server.journal.auth.at_endpoint("authorize")) == 1
    assert stat.S_IMODE(os.stat(tokens).st_mode) == 0o600
    held = json.loads(tokens.read_text())
    assert list(held) == [url]
    assert set(held[url]) == {"tokens", "client_info"}
    assert {server.journal.tokens[c.seq] for c in server.calls("list_tickets")} == {"token 1"}


async def test_client_credentials_get_a_token_without_a_user() -> None:
    server = _server()
    assert server.auth is not None
    client = server.auth.register_client(grant_types=["client_credentials"])
    with anyio.fail_after(LIMIT_S):
        async with server:
            auth = OAuth(
                grant="client_credentials",
                client_id=client.client_id,
                client_secret_env="APP_SECRET",
                issuer=server.auth.issuer(server.base_url),
            )
            config = ServerConfig(name="tickets", url=server.url, auth=auth)
            async with ToolPool([config], cache=False, environ={"APP_SECRET": client.client_secret or ""}) as pool:
                assert await pool.call("tickets.list_tickets", {}) == "none open"
    token = server.journal.auth.at_endpoint("token")[0]
    assert (token.grant_type, token.status) == ("client_credentials", 200)
    assert not server.journal.auth.at_endpoint("authorize")


async def test_a_failed_flow_is_an_auth_error_naming_the_server_and_never_its_secret() -> None:
    """The user does not consent (AuthServer consent=False): the redirect handler raises, and the pool raises
    MCPAuthError naming the server and what the authorization endpoint said, free of the client's secret."""
    server = _server(consent=False)
    browser = Browserless()
    with anyio.fail_after(LIMIT_S):
        async with server:
            with pytest.raises(MCPAuthError) as failed:
                async with ToolPool([_config(server, "handshake", browser)], cache=False):
                    pass
            assert server.auth is not None
            secrets = [client.client_secret for client in server.auth.clients.values() if client.client_secret]
    assert failed.value.server == "tickets"
    assert "access_denied" in str(failed.value)
    assert secrets
    assert not [secret for secret in secrets if secret in str(failed.value)]
    assert server.executions("list_tickets") == 0


def test_oauth_refuses_options_that_do_not_go_together() -> None:
    with pytest.raises(ValueError, match="needs client_id= and client_secret_env="):
        OAuth(grant="client_credentials")
    with pytest.raises(ValueError, match="give client_id= too"):
        OAuth(client_secret_env="X")
    with pytest.raises(ValueError, match="not both"):
        OAuth(client_id="a", client_metadata_url="https://app.example/client.json")
    with pytest.raises(ValueError, match="a command server has none of"):
        ServerConfig(name="x", command="srv", auth=OAuth())


async def test_ending_a_session_whose_token_was_revoked_asks_for_no_new_authorization() -> None:
    """The session is ended with the token the bridge holds: a DELETE refused with 401 (the grant was revoked
    meanwhile) is left so, the pool closes without raising, and no user is sent to authorize again for it."""
    server = _server()
    browser = Browserless()
    with anyio.fail_after(LIMIT_S):
        async with server:
            async with ToolPool([_config(server, "handshake", browser)], cache=False) as pool:
                await pool.call("tickets.list_tickets", {})
                server.auth.revoke("token 1")  # type: ignore[union-attr]
            ended = server.journal[-1]
    assert (ended.http_method, ended.status, server.journal.tokens[ended.seq]) == ("DELETE", 401, "token 1")
    assert len(browser.visited) == 1
    assert len(server.journal.auth.at_endpoint("authorize")) == 1
