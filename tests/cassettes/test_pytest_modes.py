"""The pytest record modes (`--mcp-record=none|once|new|all`) with the marker's `cassette=` and `upstream=`,
run by pytester against the real upstream."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from mcp_testkit.cassettes import Cassette

TEST = """
import pytest

pytestmark = pytest.mark.anyio


@pytest.mark.mcp_server(cassette="tapes/up.json"{upstream})
async def test_add(mcp_client, mcp_server):
    result = await mcp_client.call_tool("add", {{"a": 1, "b": 2}})
    assert result.structured_content == {{"result": 3}}
    assert mcp_server.executions("add") == 1
    assert mcp_server.name == "upstream-demo"
{more}
"""

SEARCH = """
    found = await mcp_client.call_tool("search", {"query": "new"})
    assert found.structured_content["items"] == ["new-0", "new-1"]
"""


@pytest.fixture(autouse=True)
def inner_ini(pytester: pytest.Pytester) -> None:
    """Inner runs get their own ini (strict markers, pytest-asyncio's loop scope set) and run on asyncio."""
    pytester.makeconftest(
        """
        import pytest

        @pytest.fixture
        def anyio_backend():
            return "asyncio"
        """
    )
    pytester.makeini(
        """
        [pytest]
        addopts = --strict-markers -p no:cacheprovider -p no:unraisableexception -p no:benchmark
        asyncio_default_fixture_loop_scope = function
        """
    )


@pytest.fixture
def dead_url() -> str:
    """A URL nothing listens on: a run that contacted the upstream would fail."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"


def _write(pytester: pytest.Pytester, upstream: str | None, more: str = "", keywords: str = "") -> Path:
    marker = (f", upstream={upstream!r}" if upstream else "") + keywords
    pytester.makepyfile(test_tape=TEST.format(upstream=marker, more=more))
    return pytester.path / "tapes" / "up.json"


def test_none_replays_only_and_a_missing_cassette_is_an_error(pytester: pytest.Pytester, upstream_url: str) -> None:
    """Under the default mode (none) a missing cassette errors once, saying how to record it; nothing is written."""
    tape = _write(pytester, upstream_url)
    result = pytester.runpytest()
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*cassette * does not exist, and --mcp-record=none only replays: record it once*"])
    assert "During handling" not in result.stdout.str()  # the message once, not chained to itself
    said = [line for line in result.stdout.lines if line.startswith("cassette ") and "does not exist" in line]
    assert len(said) == 1  # the error's own line, once (the short summary's line, if any, starts otherwise)
    assert not tape.exists()


def test_once_records_a_missing_cassette_then_replays_it(
    pytester: pytest.Pytester, upstream_url: str, dead_url: str
) -> None:
    """`once` records when the file is missing; the next run replays it without the upstream (gone by then)."""
    tape = _write(pytester, upstream_url)
    pytester.runpytest("--mcp-record=once").assert_outcomes(passed=1)
    recorded = Cassette.load(tape)
    # The upstream offers 2026-07-28: the recording session speaks it (no initialize), as auto-mode clients do.
    assert [e.method for e in recorded][:2] == ["server/discover", "tools/list"]
    assert recorded.eras == ["stateless"]
    assert [c.tool for c in recorded.calls()] == ["add"]
    text = tape.read_text()
    _write(pytester, dead_url)
    pytester.runpytest("--mcp-record=once").assert_outcomes(passed=1)
    pytester.runpytest().assert_outcomes(passed=1)  # none
    pytester.runpytest("--mcp-transport=asgi").assert_outcomes(passed=1)  # in-process, as well
    assert tape.read_text() == text  # replaying wrote nothing


def test_new_records_only_the_calls_the_cassette_lacks(pytester: pytest.Pytester, upstream_url: str) -> None:
    """`new` replays what the cassette has and adds the calls it does not; afterwards `none` replays all of them."""
    tape = _write(pytester, upstream_url)
    pytester.runpytest("--mcp-record=once").assert_outcomes(passed=1)
    before = Cassette.load(tape)
    _write(pytester, upstream_url, more=SEARCH)
    pytester.runpytest().assert_outcomes(failed=1)  # none: the search call matches nothing recorded
    pytester.runpytest("--mcp-record=new").assert_outcomes(passed=1)
    after = Cassette.load(tape)
    assert [c.tool for c in after.calls()] == ["add", "search"]
    assert after.exchanges[: len(before)] == before.exchanges  # what was there is kept as it was
    assert [e.method for e in after.exchanges[len(before) :]] == ["tools/call"]
    assert after.exchanges[-1].seq == len(after)
    pytester.runpytest().assert_outcomes(passed=1)


def test_all_records_anew(pytester: pytest.Pytester, upstream_url: str) -> None:
    """`all` records everything again: the old cassette's calls are gone, the live answers replace them."""
    tape = _write(pytester, upstream_url, more=SEARCH)
    pytester.runpytest("--mcp-record=once").assert_outcomes(passed=1)
    assert [c.tool for c in Cassette.load(tape).calls()] == ["add", "search"]
    _write(pytester, upstream_url)
    pytester.runpytest("--mcp-record=all").assert_outcomes(passed=1)
    assert [c.tool for c in Cassette.load(tape).calls()] == ["add"]


def test_upstream_comes_from_the_environment_when_the_marker_has_none(
    pytester: pytest.Pytester, upstream_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without `upstream=`, recording reads MCP_TESTKIT_UPSTREAM; without either it errors saying so."""
    tape = _write(pytester, None)
    result = pytester.runpytest("--mcp-record=once")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*needs the live server: give the marker upstream=*or set $MCP_TESTKIT_UPSTREAM*"])
    monkeypatch.setenv("MCP_TESTKIT_UPSTREAM", upstream_url)
    pytester.runpytest("--mcp-record=once").assert_outcomes(passed=1)
    assert Cassette.load(tape).upstream == {"transport": "http", "url": upstream_url}


def test_an_unmatched_call_fails_the_test_with_the_nearest_recorded_calls(
    pytester: pytest.Pytester, upstream_url: str
) -> None:
    """Replaying, a call the cassette lacks fails the test, and the report lists the nearest recorded calls."""
    _write(pytester, upstream_url)
    pytester.runpytest("--mcp-record=once").assert_outcomes(passed=1)
    _write(pytester, None, more='    await mcp_client.call_tool("add", {"a": 5, "b": 6})\n')
    result = pytester.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*server 'upstream-demo' (cassette *up.json): 1 call(s) matched no recorded call:*",
            '*no recorded call matching add({"a": 5, "b": 6}) (match=exact); nearest recorded calls: *'
            'add({"a": 1, "b": 2})*',
        ]
    )


def test_upstream_headers_reach_the_upstream_and_never_the_cassette(
    pytester: pytest.Pytester, upstream_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`upstream_headers=` values (env:VAR read at record time) are sent while recording and redacted by name."""
    monkeypatch.setenv("UP_KEY", "key-9a8b7c6d5e")
    pytester.makepyfile(
        test_tape=TEST.format(
            upstream=f", upstream={upstream_url!r}, upstream_headers={{'X-Api-Key': 'env:UP_KEY'}}", more=""
        )
    )
    pytester.runpytest("--mcp-record=once").assert_outcomes(passed=1)
    tape = pytester.path / "tapes" / "up.json"
    assert "key-9a8b7c6d5e" not in tape.read_text()
    sent = [e.http.request_headers for e in Cassette.load(tape) if e.http is not None]
    assert sent
    assert all(headers["x-api-key"] == "<redacted:x-api-key>" for headers in sent)


def test_a_bad_record_mode_is_a_usage_error(pytester: pytest.Pytester) -> None:
    """--mcp-record takes none, once, new or all; the ini key mcp_record is checked the same way."""
    pytester.makepyfile(test_nothing="def test_nothing(): pass")
    bad = pytester.runpytest("--mcp-record=sometimes")
    assert bad.ret == pytest.ExitCode.USAGE_ERROR
    pytester.makeini(
        """
        [pytest]
        mcp_record = sometimes
        """
    )
    result = pytester.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*mcp_record must be one of none, once, new, all, not 'sometimes'*"])


def test_recording_keywords_without_a_cassette_are_refused(pytester: pytest.Pytester) -> None:
    """`upstream_era=` without `cassette=` fails the test naming what is missing (`upstream=` alone is the chaos
    proxy in front of that server, tests/proxy/test_marker.py)."""
    pytester.makepyfile(
        test_x="""
        import pytest

        @pytest.mark.mcp_server(upstream="http://127.0.0.1:1/mcp", upstream_era="handshake")
        def test_x(mcp_server):
            pass
        """
    )
    result = pytester.runpytest()
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*@pytest.mark.mcp_server: upstream_era need cassette='path.json'*"])


def test_upstream_era_chooses_the_recording_sessions_era(pytester: pytest.Pytester, upstream_url: str) -> None:
    """`upstream_era="handshake"` records with initialize and a session; a name of no era is an error saying which."""
    tape = _write(pytester, upstream_url, keywords=', upstream_era="handshake"')
    pytester.runpytest("--mcp-record=once").assert_outcomes(passed=1)
    recorded = Cassette.load(tape)
    assert [e.method for e in recorded][:2] == ["initialize", "notifications/initialized"]
    assert recorded.eras == ["handshake"]
    tape.unlink()
    _write(pytester, upstream_url, keywords=', upstream_era="modern"')
    result = pytester.runpytest("--mcp-record=once")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*upstream_era must be one of auto, handshake, stateless, not 'modern'*"])
    assert not tape.exists()


def test_a_handshake_only_upstream_is_recorded_with_its_refused_probe(pytester: pytest.Pytester) -> None:
    """Recording an upstream of the handshake era only keeps the refused probe, so its replay refuses it too."""
    from mcp_testkit import TestMcpServer

    live = TestMcpServer("old", eras=("handshake",))
    live.tool("add", read_only=True, returns=lambda arguments: str(arguments["a"] + arguments["b"]))
    with live:
        pytester.makepyfile(
            test_old=f"""
import pytest

pytestmark = pytest.mark.anyio


@pytest.mark.mcp_server(cassette="tapes/old.json", upstream={live.url!r})
async def test_add(mcp_client, mcp_server):
    assert (await mcp_client.call_tool("add", {{"a": 1, "b": 2}})).content[0].text == "3"
    assert mcp_server.eras == ("handshake",)
"""
        )
        pytester.runpytest("--mcp-record=once").assert_outcomes(passed=1)
    recorded = Cassette.load(pytester.path / "tapes" / "old.json")
    assert [e.method for e in recorded][:2] == ["server/discover", "initialize"]
    assert recorded.exchanges[0].result is None  # refused: the live server speaks the handshake era only
    pytester.runpytest().assert_outcomes(passed=1)  # replayed: the replay speaks that era only as well
