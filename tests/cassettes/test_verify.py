"""`verify`: a cassette's requests sent to the live server again, and a report of what changed since it was recorded."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcp_testkit import TestMcpServer
from mcp_testkit.cassettes import Change, UpstreamError, record, verify

from ._support import LIMIT_S, sdk_http_answers
from .upstream import stdio_command

pytestmark = pytest.mark.anyio


def _verify(path: Path, upstream: Any, **options: Any) -> Any:
    return anyio.to_thread.run_sync(lambda: verify(path, upstream, **options))


async def test_an_unchanged_server_verifies_clean(http_tape: tuple[Path, Any], upstream_url: str) -> None:
    """Against the server it was recorded from, every tool compares equal and every read-only call answers alike."""
    report = await _verify(http_tape[0], upstream_url)
    assert report.changes == []
    assert report.exit_status == 0
    assert report.tools_compared == 8
    assert report.calls_compared == 8  # every call but the write
    assert report.skipped == ["1 call to tools that are not read-only (write_note)"]
    assert report.format().splitlines()[-2:] == [
        "8 tools compared, 8 read-only calls sent; not sent: 1 call to tools that are not read-only (write_note)",
        "no change",
    ]


async def test_a_removed_tool_and_a_changed_schema_are_breaking(
    http_tape: tuple[Path, Any], changed_upstream_url: str
) -> None:
    """Against the next release, the removed write_note and add's new required property are breaking: exit 1."""
    report = await _verify(http_tape[0], changed_upstream_url)
    assert Change("tool write_note", "removed", breaking=True) in report.changes
    assert Change("tool add", "input schema: new required property 'c'", breaking=True) in report.changes
    assert Change("server", "version '1.2.3' -> '2.0.0'") in report.changes
    assert Change("tool add", "description changed") in report.changes
    # The recorded add({"a": 1, "b": 2}) now fails its validation: an answer whose shape changed.
    assert Change('add({"a": 1, "b": 2})', "isError False -> True", breaking=True) in report.changes
    assert report.exit_status == 1
    text = report.format()
    assert "  ! tool write_note: removed (breaking)" in text
    assert "  ! tool add: input schema: new required property 'c' (breaking)" in text
    assert text.splitlines()[-1] == f"{len(report.breaking)} breaking changes"


async def test_verify_a_stdio_server(http_tape: tuple[Path, Any]) -> None:
    """A command verifies against a stdio server, with the same findings as over HTTP."""
    report = await _verify(http_tape[0], stdio_command(changed=True))
    assert Change("tool write_note", "removed", breaking=True) in report.changes
    assert report.exit_status == 1


async def test_verify_a_stateless_era_cassette_read_in_part(upstream_url: str, tmp_path: Path) -> None:
    """A 2026-07-28 cassette is verified in its era; what the recording never saw is no breaking change."""
    out = tmp_path / "stateless.json"
    async with record(upstream_url, out=out) as proxy:
        from mcp import Client

        with anyio.fail_after(LIMIT_S):
            async with Client(proxy) as client:
                await client.list_tools()  # page one of four
                await client.call_tool("search", {"query": "z"})
                await client.call_tool("logo", {})  # on page two, never listed
    report = await _verify(out, upstream_url)
    assert report.calls_compared == 2
    assert report.breaking == []
    assert report.tools_compared == 2  # add and search, as listed
    assert report.skipped == ["the definition of logo (it was called but never listed while recording)"]
    unseen = [c.subject for c in report.changes if c.detail == "added (or on a page the recording never read)"]
    assert unseen == [f"tool {name}" for name in ("fail", "account", "slow_count", "confirm", "write_note")]


async def test_a_stateless_cassette_is_verified_in_its_era_over_http_and_stdio(
    stateless_tape: tuple[Path, Any], upstream_url: str, changed_upstream_url: str
) -> None:
    """A cassette of an auto-mode SDK client verifies clean against its server, and finds the next release's breaking
    changes over HTTP and over stdio, speaking 2026-07-28 as recorded."""
    clean = await _verify(stateless_tape[0], upstream_url)
    assert (clean.changes, clean.exit_status) == ([], 0)
    for upstream in (changed_upstream_url, stdio_command(changed=True)):
        report = await _verify(stateless_tape[0], upstream)
        assert Change("tool write_note", "removed", breaking=True) in report.changes
        assert Change("tool add", "input schema: new required property 'c'", breaking=True) in report.changes
        assert report.exit_status == 1


async def test_verify_speaks_the_cassettes_era_to_a_server_of_that_era_only(tmp_path: Path) -> None:
    """A cassette recorded from a server of the 2026-07-28 era only is verified in that era (initialize would fail)."""
    from ._support import bridge_answers

    live = TestMcpServer("new", eras=("stateless",))
    live.tool("status", read_only=True, returns="green")
    out = tmp_path / "new.json"
    async with live:
        async with record(live.url, out=out) as proxy:
            await bridge_answers(proxy, [("status", {})], era="stateless")
        report = await _verify(out, live.url)
    assert (report.changes, report.calls_compared, report.exit_status) == ([], 1, 0)
    assert "initialize" not in [record.rpc_method for record in live.journal]


def _cassette_of(server: TestMcpServer, calls: list[tuple[str, dict[str, Any]]], out: Path) -> None:
    async def go() -> None:
        async with server, record(server.url, out=out) as proxy:
            await sdk_http_answers(proxy, calls)

    anyio.run(go)


def _number(kind: str) -> dict[str, Any]:
    return {"type": "object", "properties": {"n": {"type": kind}}}


def test_annotation_output_schema_and_answer_changes_are_classified(tmp_path: Path) -> None:
    """A read that became a write and a changed output schema are breaking; new optional input and text are not."""
    query = {"type": "object", "properties": {"q": {"type": "string"}}}
    before = TestMcpServer("svc", version="1")
    before.tool("read", read_only=True, input_schema=query, output_schema=_number("integer"), returns={"n": 1})
    before.tool("info", read_only=True, returns="version 1")
    before.tool("gone_write", destructive=False, returns="ok")
    out = tmp_path / "svc.json"
    _cassette_of(before, [("read", {"q": "x"}), ("info", {})], out)

    after = TestMcpServer("svc", version="1")
    wider = {"type": "object", "properties": {"q": {"type": "string"}, "limit": {"type": "integer"}}}
    after.tool("read", read_only=True, input_schema=wider, output_schema=_number("string"), returns={"n": "1"})
    after.tool("info", read_only=True, returns="version 2")
    after.tool("gone_write", destructive=True, returns="ok")
    with after:
        report = verify(out, after.url)
    found = {(c.subject, c.detail): c.breaking for c in report.changes}
    assert found[("tool read", "input schema: new property 'limit'")] is False
    assert found[("tool read", 'output schema: {"properties": {"n": {"type": "integer"}}, "type": "object"} -> '
                               '{"properties": {"n": {"type": "string"}}, "type": "object"}')] is True  # fmt: skip
    assert found[("tool gone_write", "annotation destructiveHint false -> true")] is True
    assert found[("info({})", 'answer changed in content block 1 at character 9: "version 1" -> "version 2"')] is False
    read_answer = [c for c in report.changes if c.subject == 'read({"q": "x"})']
    changed = [(c.detail.split(" at ")[0], c.breaking) for c in read_answer]
    assert changed == [("answer changed in content block 1", False)]
    assert report.exit_status == 1


def test_a_read_that_became_a_write_is_breaking_and_is_not_called(tmp_path: Path) -> None:
    """readOnlyHint true -> false is breaking, and verify no longer sends that tool's recorded calls."""
    before = TestMcpServer("svc")
    before.tool("lookup", read_only=True, returns="found")
    out = tmp_path / "svc.json"
    _cassette_of(before, [("lookup", {})], out)
    after = TestMcpServer("svc")
    after.tool("lookup", read_only=False, returns="found")
    with after:
        report = verify(out, after.url)
    assert Change("tool lookup", "annotation readOnlyHint true -> false", breaking=True) in report.changes
    assert after.executions("lookup") == 0  # never sent a call that may write
    assert report.calls_compared == 0


def test_an_unreachable_server_is_an_error_not_a_verdict(http_tape: tuple[Path, Any]) -> None:
    """When the live server cannot be reached, verify raises UpstreamError naming it rather than reporting changes."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"
    with pytest.raises(UpstreamError, match=rf"upstream {dead}: initialize failed: ConnectError"):
        verify(http_tape[0], dead)


# -- mcp-testkit verify ---------------------------------------------------------------------------------------------


def _run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    import os

    return subprocess.run(
        [sys.executable, "-m", "mcp_testkit", "verify", *args],
        capture_output=True,
        text=True,
        timeout=LIMIT_S,
        env={**os.environ, **(env or {})},
    )


def test_verify_command_exit_status_says_whether_a_change_is_breaking(
    http_tape: tuple[Path, Any], upstream_url: str, changed_upstream_url: str
) -> None:
    """`mcp-testkit verify` prints the report and exits 0 for the same server, 1 for a breaking change."""
    same = _run(str(http_tape[0]), "--upstream", upstream_url)
    assert same.returncode == 0, same.stderr
    assert same.stdout.splitlines()[0] == f"mcp-testkit verify: cassette {http_tape[0]} against {upstream_url}"
    assert same.stdout.splitlines()[-1] == "no change"
    changed = _run(str(http_tape[0]), "--upstream", changed_upstream_url)
    assert changed.returncode == 1, changed.stderr
    assert "  ! tool write_note: removed (breaking)" in changed.stdout


def test_verify_command_sends_headers_from_the_environment(tmp_path: Path) -> None:
    """`--header "Authorization: env:VAR"` reaches a server that requires it; a wrong one is an error, exit 2."""
    server = TestMcpServer("guarded")
    server.tool("ping_tool", read_only=True, returns="pong")
    out = tmp_path / "guarded.json"
    _cassette_of(server, [("ping_tool", {})], out)
    server.require_header("Authorization", "Bearer right-token")
    with server:
        url = server.url
        admitted = _run(str(out), "--upstream", server.url, "--header", "Authorization: env:TOKEN",
                        env={"TOKEN": "Bearer right-token"})  # fmt: skip
        refused = _run(str(out), "--upstream", server.url, "--header", "Authorization: env:TOKEN",
                       env={"TOKEN": "Bearer wrong-token"})  # fmt: skip
    assert admitted.returncode == 0, admitted.stderr
    assert refused.returncode == 2
    assert refused.stderr.startswith(f"mcp-testkit verify: upstream {url}: initialize failed: HTTP 401")
    assert "wrong-token" not in refused.stderr


def test_verify_command_names_a_missing_cassette() -> None:
    """A cassette that does not exist exits 2 with one line naming it."""
    missing = _run("no-such-tape.json", "--upstream", "http://127.0.0.1:1/mcp")
    assert missing.returncode == 2
    assert missing.stderr.strip() == "mcp-testkit verify: cassette no-such-tape.json: no such file"


async def test_verify_mirrors_marked_arguments_and_follows_empty_cursors_in_the_stateless_era(tmp_path: Path) -> None:
    """Verifying a 2026-07-28 cassette sends a marked argument's Mcp-Param header (the live server refuses a call
    without it, which verify would report as a changed answer) and walks past an empty-string cursor."""
    from mcp_testkit import faults

    from ._support import bridge_answers

    region = {"type": "object", "properties": {"region": {"type": "string", "x-mcp-header": "Region"}}}
    live = TestMcpServer("regions", eras=("stateless",), page_size=1)
    live.tool("weather", read_only=True, input_schema=region, returns=lambda args: f"sunny in {args['region']}")
    live.tool("zz_last", read_only=True, returns="z")
    out = tmp_path / "regions.json"
    async with live:
        async with record(live.url, out=out) as proxy:
            answers = await bridge_answers(proxy, [("weather", {"region": "eu-west 1"})], era="stateless")
        assert answers["0:weather"] == "sunny in eu-west 1"
        live.journal.clear()
        live.inject(faults.EmptyCursor(1))
        report = await _verify(out, live.url)
    assert (report.changes, report.calls_compared, report.tools_compared, report.exit_status) == ([], 1, 2, 0)
    [call] = [r for r in live.journal if r.rpc_method == "tools/call"]
    assert (call.status, call.headers.get("mcp-param-region")) == (200, "eu-west 1")
    cursors = [(r.params or {}).get("cursor") for r in live.journal if r.rpc_method == "tools/list"]
    assert "" in cursors  # the empty cursor was sent back for the next page, not taken for the end


def test_verify_prints_escape_sequences_from_a_cassette_escaped(tmp_path: Path) -> None:
    """Item 7: a tool name holding `ESC [ 2 J` (clear the screen) and a bidi override, read from the cassette, is
    printed as visible `\\x1b` and `\\u202e`, never as the bytes a terminal would run."""
    before = TestMcpServer("svc")
    before.tool("lookup", read_only=True, returns="found")
    out = tmp_path / "svc.json"
    _cassette_of(before, [("lookup", {})], out)
    out.write_text(out.read_text().replace('"lookup"', '"\\u001b[2J\\u001b[H\\u202elookup"'))
    after = TestMcpServer("svc")
    after.tool("other", read_only=True, returns="found")
    with after:
        done = _run(str(out), "--upstream", after.url)
    assert done.returncode == 1, done.stderr
    assert "\x1b" not in done.stdout
    assert "\u202e" not in done.stdout
    assert "  ! tool \\x1b[2J\\x1b[H\\u202elookup: removed (breaking)" in done.stdout.splitlines()


def test_verify_names_an_odd_key_of_a_refused_cassette_escaped(tmp_path: Path) -> None:
    """A cassette refused for a NaN under a key holding `ESC` names the key escaped, on one line, exit 2."""
    bad = tmp_path / "bad.json"
    upstream = '{"\\u001b[2Jx": NaN}'
    bad.write_text('{"format": "mcp-testkit cassette", "version": 1, "upstream": ' + upstream + ', "exchanges": []}')
    done = _run(str(bad), "--upstream", "http://127.0.0.1:9/mcp")
    assert done.returncode == 2
    assert "\x1b" not in done.stderr
    assert f"cassette {bad}: upstream/\\x1b[2Jx: " in done.stderr


def test_an_answer_diff_shows_where_the_answers_differ_not_their_shared_start(tmp_path: Path) -> None:
    """Two long answers that differ near the end are shown around the difference, which is visible in both."""
    common = "Report for account 42. " * 5
    before = TestMcpServer("svc")
    before.tool("report", read_only=True, returns=common + "Balance: 100 EUR.")
    out = tmp_path / "svc.json"
    _cassette_of(before, [("report", {})], out)
    after = TestMcpServer("svc")
    after.tool("report", read_only=True, returns=common + "Balance: 250 EUR.")
    with after:
        report = verify(out, after.url)
    [change] = [c for c in report.changes if c.subject == "report({})"]
    shown = change.detail.split(": ", 1)[1]
    old, new = shown.split(" -> ")
    assert "100" in old
    assert "250" in new
    assert old != new
    assert f"at character {1 + len(common) + len('Balance: ')}" in change.detail
