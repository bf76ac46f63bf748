"""`mcp-testkit client`: the reference bridge on the command line, and in the MCP conformance suite's client mode.

The suite (pinned in tests/conformance) starts a scenario server, runs `mcp-testkit client URL` with the
scenario named in MCP_CONFORMANCE_SCENARIO, and checks what the client did on the wire.
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from node_trees import NPM_CI_TIMEOUT_S, SCENARIO_TIMEOUT_S, ConformanceSuite

from mcp_testkit import TestMcpServer, faults
from mcp_testkit.bridge._cli import CONFORMANCE_SCENARIOS
from mcp_testkit.cli import main

COMMAND = f"{shlex.quote(sys.executable)} -m mcp_testkit client"


AUTH_SCENARIOS = [
    # the dated revisions' and the drafts' (the pinned suite lists 19)
    "auth/metadata-default",
    "auth/metadata-var1",
    "auth/metadata-var2",
    "auth/metadata-var3",
    "auth/basic-cimd",
    "auth/scope-from-www-authenticate",
    "auth/scope-from-scopes-supported",
    "auth/scope-omitted-when-undefined",
    "auth/scope-step-up",
    "auth/scope-retry-limit",
    "auth/token-endpoint-auth-basic",
    "auth/token-endpoint-auth-post",
    "auth/token-endpoint-auth-none",
    "auth/pre-registration",
    "auth/2025-03-26-oauth-metadata-backcompat",
    "auth/2025-03-26-oauth-endpoint-fallback",
    "auth/resource-mismatch",
    "auth/offline-access-scope",
    "auth/offline-access-not-supported",
    # the one extension the bridge implements (not client-credentials-jwt, cross-app-access-complete-flow)
    "auth/client-credentials-basic",
]
SCENARIOS = ["initialize", "tools_call", "sse-retry", *AUTH_SCENARIOS]
ISSUER_AT_ROOT = pytest.mark.xfail(
    strict=True,
    reason=(
        "the scenario serves, at the root /.well-known/oauth-authorization-server, metadata whose issuer is "
        "<origin>/oauth; the SDK's OAuth provider (which the bridge drives) refuses an issuer other than the one "
        "the metadata's URL stands for (RFC 8414 section 3.3), so the flow stops before registering"
    ),
)


@pytest.mark.timeout(NPM_CI_TIMEOUT_S + SCENARIO_TIMEOUT_S)
@pytest.mark.parametrize(
    "scenario",
    [
        pytest.param(name, marks=ISSUER_AT_ROOT) if name == "auth/2025-03-26-oauth-metadata-backcompat" else name
        for name in SCENARIOS
    ],
)
def test_conformance_client_scenario_passes(conformance: ConformanceSuite, scenario: str, tmp_path: Path) -> None:
    """The reference bridge as `mcp-testkit client` passes every check of the scenario, and the suite exits 0; in an
    auth scenario it authorizes with OAuth (consenting without a browser) with the client the suite's context names."""
    run = conformance.run_client(COMMAND, scenario, cwd=tmp_path)
    assert run.tally is not None, f"no result line from the conformance suite (exit {run.returncode}):\n{run.output}"
    assert run.all_passed, run.output


def test_the_client_plays_exactly_the_scenarios_the_suite_runs_here() -> None:
    """The scenarios the client knows are those this file runs through the suite."""
    assert sorted(CONFORMANCE_SCENARIOS) == sorted(SCENARIOS)


def test_every_auth_scenario_of_the_pinned_suite_is_run_here_or_named_as_not_implemented(
    conformance: ConformanceSuite,
) -> None:
    """A suite upgraded with a new auth scenario fails here until the client plays it (or it is named below)."""
    not_implemented = {"auth/client-credentials-jwt", "auth/cross-app-access-complete-flow"}
    listed = set(conformance.client_scenarios())
    assert {name for name in listed if name.startswith("auth/")} == set(AUTH_SCENARIOS) | not_implemented


@pytest.fixture
def server() -> Iterator[TestMcpServer]:
    """A server with a read and a write, served on 127.0.0.1."""
    server = TestMcpServer("cli")
    server.tool("search", description="Search things.\nMore.", read_only=True, returns="found")
    server.tool("add", returns=lambda arguments: str(arguments["a"] + arguments["b"]))
    with server:
        yield server


def test_client_lists_the_tools_and_calls_those_named(
    server: TestMcpServer, capsys: pytest.CaptureFixture[str]
) -> None:
    """It prints each tool with its kind and first description line, then each call's text; exit 0."""
    status = main(["client", server.url, "--era", "handshake", "--call", "add", "--arguments", '{"a": 2, "b": 3}'])
    out = capsys.readouterr().out
    assert status == 0
    assert out.splitlines() == [
        "2 tools (handshake era)",
        "  search [read]: Search things.",
        "  add [write]",
        "add: 5",
    ]
    assert [call.arguments for call in server.calls("add")] == [{"a": 2, "b": 3}]


def test_client_follows_the_scenario_named_in_the_environment(
    server: TestMcpServer, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """With MCP_CONFORMANCE_SCENARIO=initialize and no --call, it connects, lists, and calls nothing."""
    monkeypatch.setenv("MCP_CONFORMANCE_SCENARIO", "initialize")
    assert main(["client", server.url]) == 0
    assert server.calls() == []
    assert [r.rpc_method for r in server.journal][-1] == "tools/list"


def test_client_authorizes_with_oauth_against_the_fake_and_exits_1_naming_a_refused_consent(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """--oauth against a protected server: the code flow without a browser, then the call; with consent refused, the
    flow fails as the bridge's MCPAuthError (exit 1) and nothing runs."""
    from mcp_testkit.auth import AuthServer

    server = TestMcpServer("cli", auth=AuthServer())
    server.tool("add", returns=lambda arguments: str(arguments["a"] + arguments["b"]))
    with server:
        status = main(["client", server.url, "--oauth", "--call", "add", "--arguments", '{"a": 2, "b": 3}'])
        assert status == 0
        assert capsys.readouterr().out.splitlines()[-1] == "add: 5"
        assert [e.endpoint for e in server.journal.auth][-2:] == ["authorize", "token"]
        assert server.auth is not None
        server.auth.consent = False
        assert main(["client", server.url, "--oauth", "--call", "add"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("mcp-testkit client: MCPAuthError: server 'server': could not be authorized with OAuth")
    assert "access_denied" in err
    assert server.executions("add") == 1


def test_client_exits_1_with_the_bridge_error(server: TestMcpServer, capsys: pytest.CaptureFixture[str]) -> None:
    """A call the bridge cannot vouch for exits 1, printing the bridge's error; the write was not resent."""
    server.inject(faults.Drop(after_execution=True), tool="add")
    status = main(["client", server.url, "--call", "add", "--arguments", '{"a": 1, "b": 1}'])
    err = capsys.readouterr().err
    assert status == 1
    assert err.startswith("mcp-testkit client: MCPCallOutcomeUnknown: server 'server': call to 'server.add'")
    assert server.executions("add") == 1


@pytest.mark.parametrize(
    ("argv", "environment", "said"),
    [
        (["--call", "add", "--arguments", "[1]"], None, "--arguments must be a JSON object"),
        (["--call", "add", "--arguments", "{a"], None, "--arguments is not JSON"),
        ([], "elicitation-sep1034-client-defaults", "is not a scenario this client plays"),
    ],
)
def test_client_refuses_what_it_cannot_run_with_exit_2(
    argv: list[str],
    environment: str | None,
    said: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Bad --arguments, or a conformance scenario it does not play: exit 2 with the reason, nothing sent."""
    if environment is not None:
        monkeypatch.setenv("MCP_CONFORMANCE_SCENARIO", environment)
    assert main(["client", "http://127.0.0.1:9/mcp", *argv]) == 2
    assert said in capsys.readouterr().err


@pytest.mark.parametrize("url", ["localhost:3001/mcp", "127.0.0.1:3001", "ws://127.0.0.1:3001/mcp"])
def test_client_refuses_a_url_without_an_http_scheme_up_front(url: str, capsys: pytest.CaptureFixture[str]) -> None:
    """A URL without http:// or https:// is refused in one line, exit 2, before any connection is tried (as the
    proxy refuses it), never retried and blamed on a lost connection."""
    assert main(["client", url]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "url must be an http:// or https:// URL with a host" in err
    assert repr(url) in err


def test_client_names_a_tool_the_server_does_not_offer(
    server: TestMcpServer, capsys: pytest.CaptureFixture[str]
) -> None:
    """A --call of an unknown tool exits 1 naming it, after listing."""
    assert main(["client", server.url, "--call", "nope"]) == 1
    assert "no tool named 'server.nope' in the pool" in capsys.readouterr().err
