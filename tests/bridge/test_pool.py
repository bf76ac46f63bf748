"""The pool's API around the rules: configuration checks, the in-process transport, the public names."""

from __future__ import annotations

import anyio
import httpx2
import pytest

import mcp_testkit.bridge
from mcp_testkit import TestMcpServer
from mcp_testkit.bridge import BearerToken, Headers, MCPAuthError, ServerConfig, ToolPool

from .conftest import CONNECT, LIMIT_S, config_for, script_tools


def test_all_is_sorted_and_complete() -> None:
    """``__all__`` lists every public name of the package, sorted."""
    public = {name for name in vars(mcp_testkit.bridge) if name[0] not in "_@"}
    assert mcp_testkit.bridge.__all__ == sorted(mcp_testkit.bridge.__all__)
    assert set(mcp_testkit.bridge.__all__) == public - {"annotations"}


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"name": ""}, "name must not be empty"),
        ({"timeout_s": 0}, "timeout_s must be positive"),
        ({"retry": -1}, "retry must not be negative"),
        ({"max_tool_pages": 0}, "max_tool_pages must be at least 1"),
        ({"overrides": {"x": "readonly"}}, "overrides must be 'read' or 'write'"),
        ({"era": "modern"}, "era must be 'auto', 'handshake' or 'stateless'"),
    ],
)
def test_config_refuses_bad_options(options: dict[str, object], message: str) -> None:
    """A config with an impossible option fails when it is built, naming the option."""
    with pytest.raises(ValueError, match=message):
        ServerConfig(**{"name": "t", "url": "http://127.0.0.1:1/mcp", **options})  # type: ignore[arg-type]


def test_config_values_compare_and_hash() -> None:
    """Configs and credentials are values: equal when their fields are, and hashable."""
    one = ServerConfig(name="t", url="http://127.0.0.1/mcp", allow=["a"], auth=Headers(env={"X": "V"}))
    two = ServerConfig(name="t", url="http://127.0.0.1/mcp", allow={"a"}, auth=Headers(env={"X": "V"}))
    assert one == two
    assert len({one, two, BearerToken(env="V"), BearerToken(env="V")}) == 2


def test_server_names_must_be_unique() -> None:
    """Two configs with one server name are refused before anything connects."""
    config = ServerConfig(name="t", url="http://127.0.0.1:1/mcp")
    with pytest.raises(ValueError, match="repeated: 't'"):
        ToolPool([config, config])


@pytest.mark.anyio
async def test_in_process_transport_is_used_and_left_open() -> None:
    """With transport=ASGITransport the pool runs without a socket and does not close the transport."""
    server = script_tools(TestMcpServer(response_mode="sse"))
    closed = []

    class Transport(httpx2.ASGITransport):
        async def aclose(self) -> None:
            closed.append(True)

    pool = ToolPool([ServerConfig(name="t", url="http://127.0.0.1:9/mcp")], transport=Transport(server.asgi_app))
    with anyio.fail_after(LIMIT_S):
        async with pool:
            assert await pool.call("t.search") == "found"
            with pytest.raises(KeyError, match=r"no tool named 't\.nope'"):
                await pool.call("t.nope")
            with pytest.raises(RuntimeError, match="already open"):
                await pool.__aenter__()
    assert server.executions("search") == 1
    assert server.sessions.alive == []
    assert closed == []


@pytest.mark.anyio
async def test_pool_can_be_opened_again_after_exit(era: str) -> None:
    """A pool that exited can be entered again: a fresh session, or a fresh probe in the stateless era."""
    server = script_tools(TestMcpServer())
    with anyio.fail_after(LIMIT_S):
        async with server:
            pool = ToolPool([config_for(server, era=era)])
            async with pool:
                first = pool.session_id("t")
            async with pool:
                assert pool.session_id("t") != first or era == "stateless"
                assert await pool.call("t.create") == "created"
    assert len(server.journal.requests(CONNECT[era])) == 2


@pytest.mark.anyio
async def test_environ_mapping_replaces_os_environ(era: str) -> None:
    """With environ=, credentials are read from that mapping, again at every connect."""
    server = script_tools(TestMcpServer())
    server.require_header("Authorization", "Bearer one")
    environ = {"POOL_TOKEN": "one"}
    with anyio.fail_after(LIMIT_S):
        async with server:
            config = config_for(server, auth=BearerToken(env="POOL_TOKEN"), era=era)
            async with ToolPool([config], environ=environ) as pool:
                server.rotate_header("Authorization", "Bearer two")
                environ["POOL_TOKEN"] = "two"
                with pytest.raises(MCPAuthError):
                    await pool.call("t.search")
                assert await pool.call("t.search") == "found"
    assert server.journal.requests(CONNECT[era])[-1].headers["authorization"] == "Bearer two"
