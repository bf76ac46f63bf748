"""Options and ini keys: --mcp-transport (socket or in-process asgi) and --mcp-journal."""

from __future__ import annotations

import pytest

ASGI_TESTS = """
import pytest

@pytest.mark.anyio
async def test_client_in_process(mcp_server, mcp_client):
    mcp_server.tool("t", returns="ok")
    assert (await mcp_client.call_tool("t", {})).content[0].text == "ok"
    assert not mcp_server.started
    assert mcp_server.journal.calls("t")[0].headers["host"] == "127.0.0.1"

@pytest.mark.asyncio
async def test_http_client_in_process(mcp_server, mcp_http_client):
    answer = await mcp_http_client.delete("/mcp")
    assert answer.status_code == 400
    assert not mcp_server.started

@pytest.mark.anyio
async def test_factory_in_process(mcp_server_factory):
    gh = mcp_server_factory(name="gh")
    assert not gh.started
    async with mcp_server_factory.http_client(gh) as client:
        assert (await client.delete("/mcp")).status_code == 400
    assert gh.journal.last.status == 400

def test_env_starts_the_server(mcp_server, mcp_env):
    written = mcp_env(url="MCP_URL")
    assert mcp_server.started and written["MCP_URL"] == mcp_server.url
"""


@pytest.mark.parametrize("how", [["--mcp-transport=asgi"], ["-o", "mcp_transport=asgi"]])
def test_asgi_transport_hands_out_in_process_clients(
    pytester: pytest.Pytester, two_backends: None, how: list[str]
) -> None:
    """With asgi (option or ini key) the clients reach the server in-process (asyncio, trio); it does not listen."""
    pytester.makepyfile(ASGI_TESTS)
    pytester.runpytest(*how).assert_outcomes(passed=6)


def test_bad_ini_values_are_usage_errors(pytester: pytest.Pytester) -> None:
    """A wrong ini value stops the run naming the key and the choices."""
    result = pytester.runpytest("-o", "mcp_transport=tcp")
    result.stderr.fnmatch_lines(["*mcp_transport must be one of socket, asgi, not 'tcp'*"])
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result = pytester.runpytest("-o", "mcp_journal_limit=0")
    result.stderr.fnmatch_lines(["*mcp_journal_limit must be a positive integer*"])


def test_help_shows_the_option_group(pytester: pytest.Pytester) -> None:
    """`pytest --help` lists the mcp-testkit group with both options and the ini keys."""
    result = pytester.runpytest("--help")
    result.stdout.fnmatch_lines(
        ["*fake MCP servers (mcp-testkit)*", "*--mcp-transport=*", "*--mcp-journal=*", "*mcp_journal_limit*"]
    )


# Warnings are errors in the nested runs, but for pytest's own note that a module this worker imported before (it
# depends on which tests ran here first) cannot be rewritten for the nested session: that is no warning of the plugin's.
WARNINGS_ARE_ERRORS = ("-W", "error", "-W", "ignore::pytest.PytestAssertRewriteWarning")

LOOP_SCOPE = """
import pytest


@pytest.mark.asyncio
async def test_on_pytest_asyncio(mcp_server, mcp_client):
    mcp_server.tool("greet", returns="hello")
    assert (await mcp_client.call_tool("greet", {})).content[0].text == "hello"


def test_scope(pytestconfig):
    assert pytestconfig.getini("asyncio_default_fixture_loop_scope") == "EXPECTED"
"""


def test_a_plain_run_trips_no_pytest_asyncio_warning(pytester: pytest.Pytester) -> None:
    """With asyncio_default_fixture_loop_scope unset, a `-W error` run passes: the plugin keeps the present scope."""
    pytester.makeini("[pytest]\n")
    pytester.makepyfile(LOOP_SCOPE.replace("EXPECTED", "fixture-scope"))
    result = pytester.runpytest(*WARNINGS_ARE_ERRORS, "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)
    assert "warnings" not in result.parseoutcomes()


@pytest.mark.parametrize("how", [["-o", "asyncio_default_fixture_loop_scope=module"], []], ids=["option", "ini"])
def test_the_users_fixture_loop_scope_is_kept(pytester: pytest.Pytester, how: list[str]) -> None:
    """A loop scope the user set, on the command line or in the ini file, is the one pytest-asyncio gets."""
    if not how:
        pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = module\n")
    pytester.makepyfile(LOOP_SCOPE.replace("EXPECTED", "module"))
    pytester.runpytest(*WARNINGS_ARE_ERRORS, *how).assert_outcomes(passed=2)
