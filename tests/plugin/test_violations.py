"""Fail closed on the referee: a passing test whose client broke MCP's rules fails at its end, unless the marker
(`strict=False`, `allow_violations=[...]`) or the ini keys (`mcp_strict`, `mcp_allow_violations`) relax it."""

from __future__ import annotations

import pytest

# A hand-written client: the second call sends its arguments as a string (rule `schema`), the third omits the
# MCP-Protocol-Version header its session negotiated (rule `version-header`). Over a socket or in-process.
RAW_CLIENT = """
import httpx2
import pytest

ACCEPT = {"accept": "application/json, text/event-stream"}
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}}


def call(arguments):
    return {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "t", "arguments": arguments}}


def session_headers(answer, version=True):
    headers = {**ACCEPT, "mcp-session-id": answer.headers["mcp-session-id"]}
    return {**headers, "mcp-protocol-version": "2025-11-25"} if version else headers


def talk(url, *, bad_arguments=False, no_version=False):
    with httpx2.Client() as client:
        answer = client.post(url, json=INIT, headers=ACCEPT)
        assert answer.status_code == 200
        headers = session_headers(answer, version=not no_version)
        sent = client.post(url, json=call("x" if bad_arguments else {}), headers=headers)
        assert sent.status_code == 200  # the referee observes: the server answers as it always did
"""


def _outcomes(pytester: pytest.Pytester, body: str, *args: str) -> pytest.RunResult:
    pytester.makepyfile(RAW_CLIENT + body)
    return pytester.runpytest("-p", "no:randomly", *args)


def test_a_passing_test_whose_client_broke_a_rule_fails_naming_the_rule_the_path_and_the_way_out(
    pytester: pytest.Pytester,
) -> None:
    """The failure lists each violation under its request and names the marker that allows it; the report's journal
    section lists the violations too."""
    result = _outcomes(
        pytester,
        """
def test_bad_arguments(mcp_server):
    mcp_server.tool("t", returns="ok")
    talk(mcp_server.url, bad_arguments=True)


def test_valid(mcp_server):
    mcp_server.tool("t", returns="ok")
    talk(mcp_server.url)
""",
    )
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*AssertionError: mcp journal: the client broke MCP's rules 1 time (docs/referee.md):",
            "*#2 POST session=* tools/call t -> 200*",
            "*schema at $.params.arguments: Input should be a valid dictionary*",
            "*mark the test @pytest.mark.mcp_server(allow_violations=?'schema'?) (or strict=False for every rule).",
            "*- mcp journal -*",
            "the client broke MCP's rules 1 time (docs/referee.md):",
            "  #2 schema at $.params.arguments: *",
        ]
    )


@pytest.mark.parametrize("transport", ["socket", "asgi"])
def test_the_marker_relaxes_the_check_for_every_rule_or_by_rule_id(pytester: pytest.Pytester, transport: str) -> None:
    """`strict=False` lets any violation pass, `allow_violations` the rules it names and no other; in-process too,
    where the raw client is the plugin's `mcp_http_client`."""
    body = """
@pytest.mark.mcp_server(strict=False)
def test_any_rule(mcp_server):
    mcp_server.tool("t", returns="ok")
    talk(mcp_server.url, bad_arguments=True, no_version=True)


@pytest.mark.mcp_server(allow_violations=["schema", "version-header"])
def test_both_rules_allowed(mcp_server):
    mcp_server.tool("t", returns="ok")
    talk(mcp_server.url, bad_arguments=True, no_version=True)


@pytest.mark.mcp_server(allow_violations=["schema"])
def test_one_rule_allowed(mcp_server):
    mcp_server.tool("t", returns="ok")
    talk(mcp_server.url, bad_arguments=True, no_version=True)
"""
    if transport == "asgi":
        body = body.replace("def test_", "async def test_").replace(
            "talk(mcp_server.url", "await atalk(mcp_http_client"
        )
        body = body.replace("(mcp_server)", "(mcp_server, mcp_http_client)")
        body = ASYNC_TALK + body.replace("@pytest.mark.mcp_server", "@pytest.mark.anyio\n@pytest.mark.mcp_server")
    result = _outcomes(pytester, body, f"--mcp-transport={transport}", "-k", "not trio")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*test_one_rule_allowed*",
            "*AssertionError: mcp journal: the client broke MCP's rules 1 time (docs/referee.md):",
            "*version-header at $: the MCP-Protocol-Version header is missing*",
            "*allow_violations=?'version-header'?*",
        ]
    )


ASYNC_TALK = """

async def atalk(client, *, bad_arguments=False, no_version=False):
    answer = await client.post("/mcp", json=INIT, headers=ACCEPT)
    assert answer.status_code == 200
    headers = session_headers(answer, version=not no_version)
    sent = await client.post("/mcp", json=call("x" if bad_arguments else {}), headers=headers)
    assert sent.status_code == 200
"""


@pytest.mark.parametrize(
    ("ini", "passed"),
    [("mcp_strict = false", 1), ("mcp_allow_violations = schema version-header", 1), ("mcp_strict = true", 0)],
)
def test_the_ini_keys_relax_the_check_for_the_whole_run(pytester: pytest.Pytester, ini: str, passed: int) -> None:
    """`mcp_strict = false` turns the check off, `mcp_allow_violations` allows the rules it lists."""
    pytester.makeini(f"[pytest]\n{ini}\n")
    body = """
def test_both(mcp_server):
    mcp_server.tool("t", returns="ok")
    talk(mcp_server.url, bad_arguments=True, no_version=True)
"""
    _outcomes(pytester, body).assert_outcomes(passed=passed, failed=1 - passed)


def test_a_factory_server_is_checked_as_mcp_server_is(pytester: pytest.Pytester) -> None:
    """Each of the factory's servers is judged, and its section's title names it."""
    body = """
def test_two(mcp_server_factory):
    good, bad = mcp_server_factory(name="good"), mcp_server_factory(name="bad")
    for server in (good, bad):
        server.tool("t", returns="ok")
    talk(good.url)
    talk(bad.url, no_version=True)
"""
    result = _outcomes(pytester, body)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*AssertionError: mcp journal: bad: the client broke MCP's rules 1 time*"])


def test_a_test_failing_for_its_own_reason_is_reported_for_it_with_the_violations_in_its_journal(
    pytester: pytest.Pytester,
) -> None:
    """A failed body is its own failure; the violations are listed in the journal section only."""
    body = """
def test_fails(mcp_server):
    mcp_server.tool("t", returns="ok")
    talk(mcp_server.url, no_version=True)
    assert False, "the bridge's own failure"
"""
    result = _outcomes(pytester, body)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*the bridge's own failure*", "  #2 version-header at $: *"])
    assert "mark the test @pytest.mark.mcp_server(allow_violations" not in result.stdout.str()


@pytest.mark.parametrize(
    ("marker", "expected"),
    [
        ("strict='no'", "*@pytest.mark.mcp_server: strict takes True or False, not 'no'*"),
        ("allow_violations=['schemas']", "*allow_violations names no referee rule: schemas; the rules are schema, *"),
        ("allow_violations='schema'", "*allow_violations takes a list of referee rule ids, not 'schema'*"),
    ],
)
def test_a_wrong_marker_value_fails_the_test_naming_the_rules(
    pytester: pytest.Pytester, marker: str, expected: str
) -> None:
    """A misspelt rule id or a non-boolean `strict` is the test's error, naming what is allowed."""
    body = f"""
@pytest.mark.mcp_server({marker})
def test_marked(mcp_server):
    pass
"""
    result = _outcomes(pytester, body)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines([expected])


@pytest.mark.parametrize(
    ("ini", "expected"),
    [
        ("mcp_strict = maybe", "*mcp_strict must be true or false, not 'maybe'*"),
        ("mcp_allow_violations = scheme", "*mcp_allow_violations names no referee rule: scheme; the rules are *"),
    ],
)
def test_a_wrong_ini_value_is_a_usage_error(pytester: pytest.Pytester, ini: str, expected: str) -> None:
    pytester.makeini(f"[pytest]\n{ini}\n")
    result = pytester.runpytest()
    result.stderr.fnmatch_lines([expected])
    assert result.ret == pytest.ExitCode.USAGE_ERROR
