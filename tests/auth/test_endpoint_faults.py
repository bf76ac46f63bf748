"""The faults of a protected server's authorization server (RejectRefresh, AuthServerError, SlowAuthServer,
WrongIssuer), placed on its endpoints by `oauth/...` methods, against the reference bridge's OAuth (the SDK's
provider) over a real socket."""

from __future__ import annotations

import anyio
import pytest

from mcp_testkit import ChaosProxy, TestMcpServer, faults
from mcp_testkit.auth import AuthServer, Browserless
from mcp_testkit.bridge import MCPAuthError, MCPBridgeError, OAuth, ServerConfig, ToolPool

from ._support import LIMIT_S

pytestmark = pytest.mark.anyio


def _server(**auth: object) -> TestMcpServer:
    server = TestMcpServer(auth=AuthServer(**auth))  # type: ignore[arg-type]
    server.tool("create", returns="opened")
    return server


def _config(server: TestMcpServer, **options: object) -> ServerConfig:
    browser = Browserless()
    oauth = OAuth(redirect_handler=browser.redirect_handler, callback_handler=browser.callback_handler)
    return ServerConfig(name="t", url=server.url, era="handshake", auth=oauth, **options)  # type: ignore[arg-type]


async def test_a_rejected_refresh_leads_to_one_new_authorization_and_the_call_sent_once() -> None:
    """The token's lifetime passes; the refresh the SDK asks for is rejected (invalid_grant): it authorizes again
    from the start, once, and the call runs once."""
    server = _server(token_ttl_s=1)
    server.inject(faults.RejectRefresh())
    with anyio.fail_after(LIMIT_S):
        async with server, ToolPool([_config(server)], cache=False) as pool:
            await pool.call("t.create", {})
            await anyio.sleep(1.1)  # the SDK's provider judges expiry by the wall clock
            assert await pool.call("t.create", {}) == "opened"
    tokens = server.journal.auth.at_endpoint("token")
    assert [(e.grant_type, e.status, e.fault) for e in tokens] == [
        ("authorization_code", 200, None),
        ("refresh_token", 400, "RejectRefresh()"),
        ("authorization_code", 200, None),
    ]
    assert tokens[1].error == "invalid_grant: the refresh token was rejected (RejectRefresh)"
    assert server.executions("create") == 2
    assert "fault=RejectRefresh()" in server.journal.auth.format()


async def test_a_reject_refresh_met_by_a_code_grant_changes_nothing_and_stays_due() -> None:
    server = _server()
    server.inject(faults.RejectRefresh())
    with anyio.fail_after(LIMIT_S):
        async with server, ToolPool([_config(server)], cache=False) as pool:
            await pool.call("t.create", {})
    assert [e.fault for e in server.journal.auth.at_endpoint("token")] == [None]
    with pytest.raises(AssertionError, match="never fired"):
        server.check(unused_faults=True)


async def test_a_failing_token_endpoint_is_an_auth_error_naming_the_server_and_nothing_runs() -> None:
    server = _server()
    server.inject(faults.AuthServerError(503))
    with anyio.fail_after(LIMIT_S):
        async with server:
            with pytest.raises(MCPAuthError) as failed:
                async with ToolPool([_config(server)], cache=False):
                    pass
            async with ToolPool([_config(server)], cache=False) as pool:  # it fired once: the next one works
                assert await pool.call("t.create", {}) == "opened"
    assert failed.value.server == "t"
    assert "could not be authorized with OAuth" in str(failed.value)
    first = server.journal.auth.at_endpoint("token")[0]
    expected = "temporarily_unavailable: the authorization server failed (AuthServerError(status=503))"
    assert (first.status, first.error) == (503, expected)
    assert server.executions("create") == 1


async def test_a_failing_metadata_endpoint_is_placed_by_its_method() -> None:
    server = _server()
    server.inject(faults.AuthServerError(500), method="oauth/metadata")
    with anyio.fail_after(LIMIT_S):
        async with server:
            with pytest.raises(MCPBridgeError):
                async with ToolPool([_config(server)], cache=False):
                    pass
    metadata = server.journal.auth.at_endpoint("metadata")
    assert metadata[0].status == 500
    assert metadata[0].fault == "AuthServerError(status=500)"
    assert not server.journal.auth.at_endpoint("token")


async def test_a_slow_token_endpoint_is_bounded_by_the_bridges_connect_timeout() -> None:
    """The token endpoint answers after 2 s; the bridge's connect (the OAuth flow included) gives up at 0.3 s."""
    server = _server()
    server.inject(faults.SlowAuthServer(delay_s=2))
    with anyio.fail_after(LIMIT_S):
        async with server:
            config = _config(server, connect_timeout_s=0.3, connect_retries=0)
            started = anyio.current_time()
            with pytest.raises(MCPBridgeError, match=r"0\.3"):
                async with ToolPool([config], cache=False):
                    pass
            waited = anyio.current_time() - started
    assert waited < 1.5  # it did not wait the token endpoint out
    assert server.executions("create") == 0


@pytest.mark.parametrize(("iss", "shown"), [("https://attacker.example/oauth", "attacker.example"), (None, "iss")])
async def test_a_wrong_or_missing_iss_stops_the_flow_before_the_code_is_exchanged(iss: str | None, shown: str) -> None:
    """RFC 9207: the metadata says the authorization response carries `iss`; the SDK refuses a code whose `iss` is
    another issuer's or missing, so no token is asked for."""
    server = _server()
    server.inject(faults.WrongIssuer(iss=iss))
    with anyio.fail_after(LIMIT_S):
        async with server:
            with pytest.raises(MCPAuthError) as failed:
                async with ToolPool([_config(server)], cache=False):
                    pass
    assert shown in str(failed.value)
    authorize = server.journal.auth.at_endpoint("authorize")
    assert [e.fault for e in authorize] == [repr(faults.WrongIssuer(iss=iss))]
    assert not server.journal.auth.at_endpoint("token")


def test_an_endpoint_fault_names_an_endpoint_and_no_other_fault_does() -> None:
    server = TestMcpServer(auth=AuthServer())
    with pytest.raises(ValueError, match="method must be one of oauth/token, oauth/authorize"):
        server.inject(faults.RejectRefresh(), method="tools/call")
    with pytest.raises(ValueError, match="only its faults"):
        server.inject(faults.Drop(), method="oauth/token")
    rule = server.inject(faults.AuthServerError(502), method="oauth/register")
    assert faults.Rule.from_json(rule.to_json()) == rule


@pytest.mark.parametrize(
    "fault", [faults.RejectRefresh(), faults.AuthServerError(), faults.SlowAuthServer(), faults.WrongIssuer(None)]
)
def test_endpoint_faults_round_trip_through_json_and_the_proxy_refuses_them(fault: faults.Fault) -> None:
    assert faults.from_json(fault.to_json()) == fault
    proxy = ChaosProxy("http://127.0.0.1:8000/mcp")
    with pytest.raises(ValueError, match="the proxy holds no authorization server"):
        proxy.inject(fault)


def test_endpoint_faults_check_their_values() -> None:
    with pytest.raises(ValueError, match="400 to 599"):
        faults.AuthServerError(200)
    with pytest.raises(ValueError, match="positive number of seconds"):
        faults.SlowAuthServer(delay_s=0)
