"""Failure reports: the "mcp journal" section, its redaction and cap, and handler errors failing a test."""

from __future__ import annotations

import pytest

FAILING = """
import os

import httpx2
import pytest

HEADERS = {"accept": "application/json, text/event-stream"}
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}}

def call(url, headers, tool):
    with httpx2.Client(headers={**HEADERS, **headers}) as client:
        answer = client.post(url, json=INIT)
        client.headers["mcp-session-id"] = answer.headers["mcp-session-id"]
        client.headers["mcp-protocol-version"] = "2025-06-18"
        client.post(url, json={"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": tool}})
        client.delete(url)

@pytest.mark.mcp_server(required_headers={"Authorization": "Bearer marker-secret-1"})
def test_fails(mcp_server, mcp_env):
    mcp_env(url="MCP_URL", token="MCP_TOKEN", header="X-Api-Key", scheme="", value="env-secret-2")

    @mcp_server.tool("leaky")
    def leaky(arguments):
        raise ValueError(f"saw {os.environ['MCP_TOKEN']}")

    headers = {"Authorization": "Bearer marker-secret-1", "X-Api-Key": "env-secret-2", "Cookie": "sid=cookie-secret-3"}
    call(mcp_server.url, headers, "leaky")
    httpx2.post(mcp_server.url, json=INIT, headers={**HEADERS, "Authorization": "Bearer wrong-secret-4"})
    assert False, "the bridge did something wrong"

def test_passes(mcp_server):
    mcp_server.tool("quiet", returns="ok")
    call(mcp_server.url, {}, "quiet")
"""


def test_failing_test_report_has_the_journal_without_credentials(pytester: pytest.Pytester) -> None:
    """A failing test's report lists each request on one line; no credential appears; a passing test has none."""
    pytester.makepyfile(FAILING)
    result = pytester.runpytest("-rA")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*- mcp journal -*",
            "server 'test' http://127.0.0.1:*/mcp: 4 requests",
            "#1 POST session=* initialize -> 200",
            "#2 POST session=* tools/call leaky -> 200 isError",
            "#3 DELETE session=* DELETE -> 200",
            "#4 POST session=- initialize -> 401 (wrong Authorization header)",
            "tool handlers raised 1 exception:",
            "  ValueError: saw ***",
        ]
    )
    section = result.stdout.str().split("- mcp journal -")[1].split("=====")[0]
    for secret in ("marker-secret-1", "env-secret-2", "cookie-secret-3", "wrong-secret-4"):
        assert secret not in section
    assert "quiet" not in result.stdout.str()


def test_journal_always_and_never(pytester: pytest.Pytester) -> None:
    """--mcp-journal=always adds the section to passing tests too; never leaves it out of failures."""
    pytester.makepyfile(FAILING)
    always = pytester.runpytest("-rA", "--mcp-journal=always")
    always.stdout.fnmatch_lines(["*PASSES*", "*- mcp journal -*", "*tools/call quiet -> 200*"])
    never = pytester.runpytest("-rA", "-o", "mcp_journal=never")
    never.assert_outcomes(passed=1, failed=1)
    assert "mcp journal" not in never.stdout.str()


def test_journal_is_capped_with_a_count_of_the_rest(pytester: pytest.Pytester) -> None:
    """Past mcp_journal_limit lines the section says how many requests it left out."""
    pytester.makepyfile(
        """
        import httpx2

        def test_many(mcp_server):
            with httpx2.Client() as client:
                for _ in range(7):
                    client.get(mcp_server.url)
            assert False
        """
    )
    result = pytester.runpytest("-o", "mcp_journal_limit=3")
    result.stdout.fnmatch_lines(["*: 7 requests", "#1 GET*", "#2 GET*", "#3 GET*", "... and 4 more requests"])
    assert "#4 GET" not in result.stdout.str()


def test_handler_exception_fails_the_test_that_caused_it(pytester: pytest.Pytester) -> None:
    """A tool handler that raised fails its test (call phase, with the handler's traceback); the next test passes."""
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.anyio
        async def test_raises(mcp_server, mcp_client):
            @mcp_server.tool("broken")
            def broken(arguments):
                raise KeyError("the handler's own bug")

            result = await mcp_client.call_tool("broken", {})
            assert result.is_error  # the client saw an error result; the test body passes

        def test_next(mcp_server):
            assert mcp_server.errors == []
        """
    )
    result = pytester.runpytest("-k", "not trio")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            '*raise KeyError("the handler\'s own bug")*',
            "*AssertionError: a tool handler of server 'test' raised KeyError*",
            "*- mcp journal -*",
            "*tools/call broken -> 200*",
            "tool handlers raised 1 exception:",
            '  KeyError: "the handler\'s own bug"',
            "FAILED *test_raises*",
        ]
    )
    assert "ERROR" not in result.stdout.str()


def test_factory_servers_get_sections_and_checks(pytester: pytest.Pytester) -> None:
    """Each factory server has its own titled section, and its handler errors fail the test too."""
    pytester.makepyfile(
        """
        import httpx2

        HEADERS = {"accept": "application/json, text/event-stream"}
        INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                           "clientInfo": {"name": "c", "version": "1"}}}

        def test_two(mcp_server_factory):
            gh = mcp_server_factory(name="gh")
            jira = mcp_server_factory(name="jira")
            jira.tool("boom", returns=lambda arguments: 1 / 0)
            with httpx2.Client(headers=HEADERS) as client:
                client.get(gh.url)
                answer = client.post(jira.url, json=INIT)
                client.headers["mcp-session-id"] = answer.headers["mcp-session-id"]
                client.headers["mcp-protocol-version"] = "2025-06-18"
                call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "boom"}}
                client.post(jira.url, json=call)
        """
    )
    result = pytester.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*a tool handler of server 'jira' raised ZeroDivisionError*",
            "*- mcp journal: gh -*",
            "#1 GET session=- GET -> *",
            "*- mcp journal: jira -*",
            "*tools/call boom -> 200*",
        ]
    )


STATELESS_FAILING = """
import anyio
import pytest
from mcp import Client


@pytest.mark.anyio
async def test_fails(mcp_server):
    mcp_server.tool("create", returns="created")
    async with Client(mcp_server.url, mode="auto") as client:
        await client.call_tool("create", {"title": "a"})
    mcp_server.journal.assert_called("create", times=2)


@pytest.fixture
def anyio_backend():
    return "asyncio"
"""


def test_a_stateless_clients_failure_report_shows_its_requests(pytester: pytest.Pytester) -> None:
    """A test whose client spoke 2026-07-28 gets the same report: each request on a line, marked stateless."""
    pytester.makepyfile(STATELESS_FAILING)
    result = pytester.runpytest("-p", "anyio")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*expected tool 'create' to be called 2 times, it was called 1 times*",
            "*- mcp journal -*",
            "#1 POST stateless server/discover -> 200",
            "#2 POST stateless tools/call create -> 200",
        ]
    )


PROTECTED = """
import httpx2
import pytest

@pytest.mark.mcp_server(auth=True)
def test_fails(mcp_server):
    token = mcp_server.auth.issue_token(resource=mcp_server.url)
    meta = httpx2.get(mcp_server.base_url + "/.well-known/oauth-protected-resource/mcp")
    headers = {"accept": "application/json, text/event-stream", "authorization": "Bearer " + token.access_token}
    httpx2.post(mcp_server.url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"}, headers=headers)
    assert meta.status_code == 500, "the bridge did something wrong"
"""


def test_a_protected_servers_report_has_its_auth_log_and_the_token_labels_only(pytester: pytest.Pytester) -> None:
    """The failure report of a test with a TestMcpServer(auth=...) adds its auth log after the requests."""
    pytester.makepyfile(PROTECTED)
    result = pytester.runpytest("-rA")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*- mcp journal -*",
            "#1 POST session=* ping -> *",
            "auth#1 GET /.well-known/oauth-protected-resource/mcp resource metadata -> 200",
        ]
    )
