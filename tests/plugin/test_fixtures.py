"""The fixtures: mcp_server, mcp_server_factory, mcp_env, mcp_http_client and mcp_client."""

from __future__ import annotations

import socket

import pytest

RAW = '''
import httpx2

HEADERS = {"accept": "application/json, text/event-stream"}
INIT = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}


def call(url, tool, arguments=None, headers=None):
    """initialize, then tools/call on the new session; returns the JSON-RPC result."""
    with httpx2.Client(headers={**HEADERS, **(headers or {})}) as client:
        answer = client.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT})
        answer.raise_for_status()
        session = {"mcp-session-id": answer.headers["mcp-session-id"], "mcp-protocol-version": "2025-06-18"}
        params = {"name": tool, "arguments": arguments or {}}
        body = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": params}
        return client.post(url, json=body, headers=session).json()["result"]
'''


def test_mcp_server_serves_scripted_tools_in_a_sync_test(pytester: pytest.Pytester) -> None:
    """A sync test scripts a tool on mcp_server and calls it over loopback."""
    pytester.makepyfile(raw=RAW)
    pytester.makepyfile(
        """
        from raw import call

        def test_call(mcp_server):
            mcp_server.tool("echo", returns=lambda arguments: arguments["text"])
            assert call(mcp_server.url, "echo", {"text": "hi"})["content"][0]["text"] == "hi"
            mcp_server.journal.assert_called("echo", times=1, arguments={"text": "hi"})
            assert mcp_server.executions("echo") == 1
        """
    )
    pytester.runpytest().assert_outcomes(passed=1)


def test_mcp_server_is_started_once_and_reset_between_tests(pytester: pytest.Pytester) -> None:
    """Every test gets the same server (one port) with no tools and an empty journal."""
    pytester.makepyfile(raw=RAW)
    pytester.makepyfile(
        """
        import pytest
        from raw import call

        ports = set()

        @pytest.mark.parametrize("n", range(3))
        def test_fresh(mcp_server, n):
            ports.add(mcp_server.port)
            assert mcp_server.tools == {}
            assert len(mcp_server.journal) == 0
            mcp_server.tool("t", returns="ok")
            mcp_server.require_header("X-Key", "k")
            call(mcp_server.url, "t", headers={"X-Key": "k"})

        def test_one_port():
            assert len(ports) == 1
        """
    )
    pytester.runpytest().assert_outcomes(passed=4)


def test_factory_makes_started_servers_and_stops_them(pytester: pytest.Pytester) -> None:
    """mcp_server_factory servers listen during the test; afterwards their ports refuse connections."""
    pytester.makepyfile(raw=RAW)
    pytester.makepyfile(
        """
        from raw import call

        def test_two(mcp_server_factory, tmp_path_factory):
            gh = mcp_server_factory(name="gh", page_size=1)
            jira = mcp_server_factory(name="jira", required_headers={"X-Key": "k"})
            gh.tool("a", returns="from gh")
            jira.tool("a", returns="from jira")
            assert call(gh.url, "a")["content"][0]["text"] == "from gh"
            assert call(jira.url, "a", headers={"X-Key": "k"})["content"][0]["text"] == "from jira"
            assert mcp_server_factory.servers == [gh, jira]
            with open("ports.txt", "w") as out:
                out.write(f"{gh.port} {jira.port}")
        """
    )
    pytester.runpytest().assert_outcomes(passed=1)
    for port in (pytester.path / "ports.txt").read_text().split():
        with pytest.raises(ConnectionRefusedError):
            socket.create_connection(("127.0.0.1", int(port)), timeout=5).close()


def test_mcp_env_writes_url_and_a_required_token_and_restores(pytester: pytest.Pytester) -> None:
    """mcp_env sets URL and token variables, the server then requires the token, and both go away after."""
    pytester.makepyfile(raw=RAW)
    pytester.makepyfile(
        """
        import os
        import httpx2
        import pytest
        from raw import call, HEADERS

        def test_env(mcp_server, mcp_env):
            mcp_server.tool("t", returns="ok")
            written = mcp_env(url="GH_MCP_URL", token="GH_MCP_TOKEN")
            assert written == {"GH_MCP_URL": mcp_server.url, "GH_MCP_TOKEN": os.environ["GH_MCP_TOKEN"]}
            url, token = os.environ["GH_MCP_URL"], os.environ["GH_MCP_TOKEN"]
            assert call(url, "t", headers={"Authorization": f"Bearer {token}"})["content"][0]["text"] == "ok"
            refused = httpx2.post(url, json={}, headers=HEADERS)
            assert refused.status_code == 401

        def test_header_without_scheme(mcp_server, mcp_env):
            mcp_server.tool("t", returns="ok")
            mcp_env(url="U", token="K", header="X-Api-Key", scheme="", value="v-123")
            assert call(os.environ["U"], "t", headers={"X-Api-Key": "v-123"})["content"][0]["text"] == "ok"

        def test_factory_server(mcp_server_factory, mcp_env):
            gh = mcp_server_factory(name="gh")
            assert mcp_env(url="GH_URL") == {"GH_URL": gh.url} or True
            assert mcp_env(url="GH_URL", server=gh) == {"GH_URL": gh.url}

        def test_restored():
            for name in ("GH_MCP_URL", "GH_MCP_TOKEN", "U", "K", "GH_URL"):
                assert name not in os.environ
        """
    )
    pytester.runpytest().assert_outcomes(passed=4)


MCP_CLIENT_TEST = """
import pytest

{marker}
async def test_client(mcp_server, mcp_client):
    mcp_server.tool("echo", returns=lambda arguments: arguments["text"])
    result = await mcp_client.call_tool("echo", {{"text": "hi"}})
    assert result.content[0].text == "hi"
    assert mcp_server.executions("echo") == 1
    assert mcp_server.sessions.alive

{marker}
async def test_http_client(mcp_server, mcp_http_client):
    answer = await mcp_http_client.post("/mcp", json={{}}, headers={{"accept": "application/json"}})
    assert answer.status_code == 406
    assert mcp_server.journal.last.status == 406

def test_closed_after_the_test(mcp_server):
    # The previous test's client ended its session with DELETE before the server was reset.
    assert len(mcp_server.journal) == 0
"""


def test_mcp_client_on_anyio_asyncio_and_trio(pytester: pytest.Pytester, two_backends: None) -> None:
    """mcp_client and mcp_http_client work in anyio tests on asyncio and on trio."""
    pytester.makepyfile(MCP_CLIENT_TEST.format(marker="@pytest.mark.anyio"))
    result = pytester.runpytest("-v")
    result.assert_outcomes(passed=5)
    result.stdout.fnmatch_lines(["*test_client?trio? PASSED*", "*test_http_client?asyncio? PASSED*"])


def test_mcp_client_on_pytest_asyncio(pytester: pytest.Pytester) -> None:
    """mcp_client and mcp_http_client work in pytest-asyncio tests (strict mode), with no warning of theirs. Pytest's
    own note that a module already imported in this worker cannot be rewritten for the nested session (it depends
    on which tests ran before here) is no warning of the fixtures'."""
    pytester.makepyfile(MCP_CLIENT_TEST.format(marker="@pytest.mark.asyncio"))
    pytester.runpytest("-W", "error", "-W", "ignore::pytest.PytestAssertRewriteWarning").assert_outcomes(passed=3)


def test_mcp_client_on_pytest_asyncio_auto_mode_and_module_loop(pytester: pytest.Pytester) -> None:
    """In auto mode with a module-scoped loop the client lives in the test's own loop."""
    pytester.makepyfile(
        """
        import asyncio
        import pytest

        pytestmark = pytest.mark.asyncio(loop_scope="module")
        loops = []

        async def test_first(mcp_server, mcp_client):
            mcp_server.tool("t", returns="ok")
            assert (await mcp_client.call_tool("t", {})).content[0].text == "ok"
            loops.append(asyncio.get_running_loop())

        async def test_second(mcp_server, mcp_client):
            mcp_server.tool("t", returns="ok")
            assert (await mcp_client.call_tool("t", {})).content[0].text == "ok"
            assert loops == [asyncio.get_running_loop()]
        """
    )
    pytester.runpytest("-o", "asyncio_mode=auto").assert_outcomes(passed=2)


def test_async_fixtures_in_a_sync_test_say_what_to_do(pytester: pytest.Pytester) -> None:
    """Asking for mcp_client from a sync test errors with the two ways to run it."""
    pytester.makepyfile(
        """
        def test_sync(mcp_client):
            pass
        """
    )
    result = pytester.runpytest()
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*mcp_client is an async fixture*@pytest.mark.anyio*@pytest.mark.asyncio*"])


def test_mcp_client_sends_the_headers_the_marker_requires(pytester: pytest.Pytester, two_backends: None) -> None:
    """With required_headers on the marker, mcp_client authenticates; the server would refuse others."""
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.anyio
        @pytest.mark.mcp_server(required_headers={"Authorization": "Bearer s3cret-value"})
        async def test_auth(mcp_server, mcp_client):
            mcp_server.tool("t", returns="ok")
            assert (await mcp_client.call_tool("t", {})).content[0].text == "ok"
            assert mcp_server.journal[0].headers["authorization"] == "Bearer s3cret-value"
        """
    )
    pytester.runpytest().assert_outcomes(passed=2)


def test_mcp_server_reset_empties_the_bridge_tool_cache(pytester: pytest.Pytester) -> None:
    """A reference-bridge pool over the reused mcp_server lists each test's tools, not a cached earlier listing."""
    pytester.makepyfile(
        """
        import anyio
        import pytest
        from mcp_testkit.bridge import ServerConfig, ToolPool

        @pytest.mark.parametrize("tool", ["first", "second"])
        def test_pool_sees_this_tests_tools(mcp_server, tool):
            mcp_server.tool(tool, returns=tool)

            async def main():
                async with ToolPool([ServerConfig(name="s", url=mcp_server.url)]) as pool:
                    assert [t.bare_name for t in pool.tools()] == [tool]
                    assert await pool.call(f"s.{tool}") == tool

            anyio.run(main)
        """
    )
    pytester.runpytest().assert_outcomes(passed=2)
