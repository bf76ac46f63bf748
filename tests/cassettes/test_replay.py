"""Replaying a cassette of the real SDK server through `TestMcpServer.from_cassette`, to the SDK client and the
reference bridge, answer for answer as the live server gave them; and everything else of `TestMcpServer` on top."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client, MCPError

from mcp_testkit import TestMcpServer, faults
from mcp_testkit.bridge import MCPCallOutcomeUnknown, ServerConfig, ToolPool
from mcp_testkit.cassettes import Cassette, CassetteError, CassetteServer, RecordedCall

from ._support import (
    CALLS,
    LIMIT_S,
    TOOL_NAMES,
    as_recorded,
    bridge_answers,
    sdk_answers,
    sdk_http_answers,
    without_secrets,
)
from .upstream import PAGE_SIZE

pytestmark = pytest.mark.anyio


def _replay(path: Path, **settings: Any) -> CassetteServer:
    return TestMcpServer.from_cassette(path, **settings)


# -- the proof: every answer as the live server gave it ------------------------------------------------------------


async def test_sdk_client_gets_the_live_answers_from_a_replay(
    tape: tuple[Path, dict[str, Any]], live_sdk: dict[str, Any]
) -> None:
    """Replayed to the SDK client, a recording of the HTTP (or stdio) upstream answers every call as live."""
    path, through_proxy = tape
    server = _replay(path)
    async with server:
        replayed = await sdk_http_answers(server.url)
    server.check()
    assert through_proxy == live_sdk  # recording changed nothing the client saw
    assert without_secrets(replayed) == without_secrets(live_sdk)
    assert as_recorded(replayed) == as_recorded(live_sdk)  # the secret-bearing answer, redacted as recorded
    assert server.executions() == len(CALLS)


async def test_reference_bridge_gets_the_live_answers_from_a_replay(
    tape: tuple[Path, dict[str, Any]], live_bridge: dict[str, Any]
) -> None:
    """Replayed to the reference bridge, a recording answers every call and loads every tool as the live server did."""
    path, _ = tape
    server = _replay(path)
    async with server:
        replayed = await bridge_answers(server.url)
    server.check()
    assert without_secrets(replayed) == without_secrets(live_bridge)
    assert as_recorded(replayed) == as_recorded(live_bridge)
    assert [name for name, _, _ in replayed["tools"]] == [f"up.{name}" for name in TOOL_NAMES]


@pytest.fixture(
    params=[
        ("http_tape", "live_sdk", "legacy", "initialize"),
        ("stateless_tape", "live_sdk_auto", "auto", "server/discover"),
    ],
    ids=["handshake", "stateless"],
)
def era_case(request: pytest.FixtureRequest) -> tuple[Path, dict[str, Any], str, str]:
    """A recording of each era, the live answers of a client of that era, its SDK mode and its opening request."""
    recorded, live, mode, opening = request.param
    return request.getfixturevalue(recorded)[0], request.getfixturevalue(live), mode, opening


async def test_replay_in_process_answers_as_over_a_socket(era_case: tuple[Path, dict[str, Any], Any, str]) -> None:
    """The replay's ASGI app, reached in-process, gives the same answers as its socket, in either era."""
    from mcp.client.streamable_http import streamable_http_client

    path, live_answers, mode, opening = era_case
    server = _replay(path)
    transport = httpx2.ASGITransport(app=server.asgi_app)
    async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
        link = streamable_http_client("http://127.0.0.1/mcp", http_client=http)
        with anyio.fail_after(LIMIT_S):
            async with Client(link, mode=mode) as client:
                replayed = await sdk_answers(client)
    assert server.journal.records[0].rpc_method == opening
    assert as_recorded(replayed) == as_recorded({key: value for key, value in live_answers.items() if key != "logs"})


async def test_replay_serves_recorded_server_info_and_page_size(http_tape: tuple[Path, Any]) -> None:
    """serverInfo and instructions are the recorded ones, and the listing is paged as the upstream paged it."""
    server = _replay(http_tape[0])
    async with server, Client(server.url, mode="legacy") as client:
        info, capabilities = client.server_info, client.server_capabilities
        first = await client.list_tools()
    assert info is not None
    assert (info.name, info.version) == ("upstream-demo", "1.2.3")
    assert capabilities.tools is not None
    assert capabilities.resources is None  # recorded, but a replay serves tools only...
    assert any("resources" in note for note in server.notes)  # ...and says so
    assert [tool.name for tool in first.tools] == TOOL_NAMES[:PAGE_SIZE]
    assert first.next_cursor is not None


async def test_page_size_re_pages_the_recorded_catalogue(http_tape: tuple[Path, Any]) -> None:
    """`page_size=` re-pages the recorded catalogue; None serves it on one page."""
    for page_size, first_page in ((3, TOOL_NAMES[:3]), (None, TOOL_NAMES)):
        server = _replay(http_tape[0], page_size=page_size)
        async with server, Client(server.url, mode="legacy") as client:
            page = await client.list_tools()
        assert [tool.name for tool in page.tools] == first_page


async def test_replayed_progress_and_log_reach_the_client(
    http_tape: tuple[Path, Any], live_sdk: dict[str, Any]
) -> None:
    """The progress and log notifications recorded during a call are sent again, progress with this call's token."""
    server = _replay(http_tape[0])
    async with server:
        replayed = await sdk_http_answers(server.url, [("slow_count", {"to": 3})])
    assert replayed["0:slow_count:progress"] == live_sdk["7:slow_count:progress"] == [1, 2, 3]
    assert replayed["logs"] == live_sdk["logs"] == ["counted to 3"]


# -- matching --------------------------------------------------------------------------------------------------------


def _cassette(calls: Sequence[tuple[str, Mapping[str, Any], Any]]) -> Cassette:
    """A cassette holding an initialize, one listing and `calls` as (tool, arguments, result or error)."""
    from mcp_testkit.upstream import Exchange

    def exchange(seq: int, method: str, params: Any, response: Any) -> Exchange:
        request = {"jsonrpc": "2.0", "id": seq, "method": method, "params": params}
        return Exchange(seq, float(seq), 1.0, "stdio", "handshake", "2025-11-25", request, response)

    tools = [{"name": name, "inputSchema": {"type": "object"}} for name in dict.fromkeys(c[0] for c in calls)]
    init = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}, "serverInfo": {"name": "t", "version": "1"}}
    exchanges = [
        exchange(1, "initialize", {"protocolVersion": "2025-11-25"}, {"jsonrpc": "2.0", "id": 1, "result": init}),
        exchange(2, "tools/list", {}, {"jsonrpc": "2.0", "id": 2, "result": {"tools": tools}}),
    ]
    for seq, (name, arguments, answer) in enumerate(calls, start=3):
        key = "error" if "code" in answer else "result"
        response = {"jsonrpc": "2.0", "id": seq, key: answer}
        exchanges.append(exchange(seq, "tools/call", {"name": name, "arguments": dict(arguments)}, response))
    return Cassette(exchanges, {"transport": "stdio", "command": ["x"]}, source="made.json")


def _text(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": False}


async def _call(server: TestMcpServer, calls: Sequence[tuple[str, dict[str, Any]]]) -> list[Any]:
    """Call each (tool, arguments) on the replay over a socket: the text, or the JSON-RPC error code."""
    answers: list[Any] = []
    async with server, Client(server.url, mode="legacy") as client:
        for name, arguments in calls:
            try:
                result = await client.call_tool(name, arguments)
            except MCPError as error:
                answers.append(error.error.code)
                continue
            answers.append(("isError " if result.is_error else "") + result.content[0].text)  # type: ignore[union-attr]
    return answers


async def test_exact_matches_tool_and_arguments_and_repeats_the_last_answer() -> None:
    """`exact` answers by tool and arguments; recorded answers to the same call replay in order, the last repeating."""
    cassette = _cassette(
        [("get", {"n": 1}, _text("one")), ("get", {"n": 2}, _text("two")), ("get", {"n": 1}, _text("uno"))]
    )
    server = TestMcpServer.from_cassette(cassette)
    got = await _call(server, [("get", {"n": 2}), ("get", {"n": 1}), ("get", {"n": 1}), ("get", {"n": 1})])
    assert got == ["two", "one", "uno", "uno"]
    server.check()


async def test_in_order_wants_the_recorded_sequence() -> None:
    """`in_order` answers only the next recorded call; one out of order is unmatched, naming the call expected."""
    cassette = _cassette([("a", {}, _text("first")), ("b", {}, _text("second"))])
    server = TestMcpServer.from_cassette(cassette, match="in_order")
    got = await _call(server, [("a", {}), ("a", {}), ("b", {})])
    assert got[0] == "first"
    assert got[1].startswith("isError")
    assert "the next recorded call is #4 b({})" in got[1]
    assert got[2] == "second"
    with pytest.raises(AssertionError, match="1 call"):
        server.check()


async def test_by_tool_ignores_arguments() -> None:
    """`by_tool` answers a tool's recorded calls in order whatever the arguments, the last repeating."""
    cassette = _cassette([("get", {"n": 1}, _text("one")), ("get", {"n": 2}, _text("two"))])
    server = TestMcpServer.from_cassette(cassette, match="by_tool")
    assert await _call(server, [("get", {"n": 9}), ("get", {}), ("get", {"x": 1})]) == ["one", "two", "two"]
    server.check()


async def test_a_user_matcher_chooses_the_recorded_call() -> None:
    """A callable matcher gets the tool, the arguments and that tool's recorded calls, and picks one (or None)."""
    cassette = _cassette([("get", {"n": 1, "at": "monday"}, _text("one")), ("get", {"n": 2, "at": "x"}, _text("two"))])
    seen: list[tuple[str, dict[str, Any], int]] = []

    def ignore_time(tool: str, arguments: Mapping[str, Any], recorded: Sequence[RecordedCall]) -> RecordedCall | None:
        seen.append((tool, dict(arguments), len(recorded)))
        return next((call for call in recorded if call.arguments["n"] == arguments["n"]), None)

    server = TestMcpServer.from_cassette(cassette, match=ignore_time)
    got = await _call(server, [("get", {"n": 2, "at": "now"}), ("get", {"n": 3, "at": "now"})])
    assert got[0] == "two"
    assert got[1].startswith("isError")
    assert seen[0] == ("get", {"n": 2, "at": "now"}, 2)
    with pytest.raises(AssertionError, match="ignore_time"):
        server.check()


async def test_unmatched_call_is_a_tool_error_and_a_check_failure_with_the_nearest_calls() -> None:
    """A call no recorded one matches is answered isError, and check() fails listing the nearest recorded calls."""
    cassette = _cassette(
        [
            ("search", {"q": "lamp", "page": 1}, _text("found")),
            ("search", {"q": "desk"}, _text("d")),
            ("other", {}, _text("o")),
        ]
    )
    server = TestMcpServer.from_cassette(cassette)
    got = await _call(server, [("search", {"q": "lamp", "page": 2})])
    assert got[0].startswith("isError")
    assert 'search({"page": 2, "q": "lamp"})' in got[0]
    assert "raised mcp_testkit.cassettes.UnmatchedCall: " in got[0]  # its public path, no private module named
    assert "._" not in got[0].split(":")[0]
    with pytest.raises(AssertionError) as failure:
        server.check()
    message = str(failure.value)
    assert "made.json" in message
    assert "1 call(s) matched no recorded call" in message
    nearest = message.split("nearest recorded calls: ")[1]
    assert nearest.startswith('#3 search({"page": 1, "q": "lamp"})')  # the nearest first
    assert "#5 other({})" in nearest
    assert [miss.arguments for miss in server.unmatched()] == [{"q": "lamp", "page": 2}]


async def test_redacted_arguments_match_any_value() -> None:
    """A recorded argument holding a redaction placeholder matches whatever value the client sends in its place."""
    cassette = _cassette([("login", {"token": "<redacted:1>", "user": "ann"}, _text("welcome"))])
    server = TestMcpServer.from_cassette(cassette)
    got = await _call(
        server, [("login", {"token": "s3cret-value", "user": "ann"}), ("login", {"token": "x", "user": "bob"})]
    )
    assert got[0] == "welcome"
    assert got[1].startswith("isError")


async def test_equal_numbers_match_however_written() -> None:
    """A recorded 2.0 matches a sent 2 (one JSON number) but not the string "2"; placeholders keep recorded order."""
    cassette = _cassette(
        [
            ("get", {"n": 2.0}, _text("two")),
            ("get", {"n": "<redacted:1>"}, _text("any")),
            ("get", {"n": 2}, _text("2b")),
        ]
    )
    server = TestMcpServer.from_cassette(cassette)
    got = await _call(server, [("get", {"n": 2}), ("get", {"n": "2"}), ("get", {"n": 2}), ("get", {"n": 2})])
    assert got == ["two", "any", "2b", "2b"]
    server.check()


async def test_recorded_json_rpc_error_is_replayed_as_one() -> None:
    """A call the server answered with a JSON-RPC error is answered with the same error code."""
    cassette = _cassette([("get", {}, {"code": -32602, "message": "bad id"})])
    server = TestMcpServer.from_cassette(cassette)
    assert await _call(server, [("get", {})]) == [-32602]
    server.check()


def test_unknown_match_mode_is_refused() -> None:
    """A match mode that does not exist is a ValueError naming the modes there are."""
    with pytest.raises(ValueError, match="exact, in_order, by_tool"):
        TestMcpServer.from_cassette(_cassette([("a", {}, _text("x"))]), match="fuzzy")


def test_missing_or_empty_cassette_is_a_clear_error(tmp_path: Path) -> None:
    """A missing file, and a cassette with no exchange, are CassetteErrors naming the file."""
    with pytest.raises(CassetteError, match=r"nope\.json: no such file"):
        TestMcpServer.from_cassette(tmp_path / "nope.json")
    empty = Cassette([], {"transport": "stdio", "command": ["x"]}, source="empty.json")
    with pytest.raises(CassetteError, match=r"empty\.json: holds no exchange"):
        TestMcpServer.from_cassette(empty)


# -- everything else of TestMcpServer works on a replay ------------------------------------------------------------


async def test_faults_on_a_replay_lose_session_and_drop_after_execution(http_tape: tuple[Path, Any]) -> None:
    """LoseSession and Drop(after_execution=True) hit a replay as a scripted server; the ledger counts the drop."""
    server = _replay(http_tape[0])
    server.inject(faults.LoseSession(), method="tools/call", tool="search")
    server.inject(faults.Drop(after_execution=True), method="tools/call", tool="write_note")
    async with server:
        # LoseSession is a fault of the handshake era (sessions); test_eras has the stateless era's faults.
        config = ServerConfig(name="up", url=server.url, connect_retries=0, era="handshake")
        with anyio.fail_after(LIMIT_S):
            async with ToolPool([config]) as pool:
                # The bridge opens a new session after the 404 and sends the read again.
                found = await pool.call("up.search", {"query": "lamp"})
                with pytest.raises(MCPCallOutcomeUnknown, match="may have run"):
                    await pool.call("up.write_note", {"text": "hello"})
    assert json.loads(found) == {"items": ["lamp-0", "lamp-1"], "next_page": 2}
    assert len(server.journal.requests("initialize")) == 2
    assert server.executions("search") == 1
    assert server.executions("write_note") == 1  # it ran, the answer was dropped
    assert [type(r.fault).__name__ for r in server.journal if r.fault] == ["LoseSession", "Drop"]
    server.check(unused_faults=True)


_INIT = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}


async def test_replay_requires_no_credential_unless_scripted(http_tape: tuple[Path, Any]) -> None:
    """A replay needs no credential; `require_header` makes it refuse a client without one, as scripted servers do."""
    server = _replay(http_tape[0])
    server.require_header("Authorization", "Bearer replay-token")
    async with server:
        async with httpx2.AsyncClient(headers={"accept": "application/json, text/event-stream"}) as http:
            message = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": _INIT}
            with anyio.fail_after(LIMIT_S):
                refused = await http.post(server.url, json=message)
                admitted = await http.post(server.url, json=message, headers={"Authorization": "Bearer replay-token"})
    assert refused.status_code == 401
    assert admitted.status_code == 200


async def test_reset_brings_the_recording_back(http_tape: tuple[Path, Any]) -> None:
    """After scripting and calls, `reset()` serves the recorded catalogue afresh, matching restarted."""
    cassette = _cassette([("get", {}, _text("one")), ("get", {}, _text("two"))])
    server = TestMcpServer.from_cassette(cassette)
    server.tool("extra", returns="x")
    server.remove_tool("get")
    server.reset()
    assert list(server.tools) == ["get"]
    assert await _call(server, [("get", {}), ("get", {})]) == ["one", "two"]
    server.reset()
    assert await _call(server, [("get", {})]) == ["one"]
    assert server.executions("get") == 1


async def test_run_contract_on_a_recorded_catalogue(http_tape: tuple[Path, Any]) -> None:
    """The resilience contract runs on a replay: the recorded catalogue is loaded beside the properties' own tools."""
    from mcp_testkit import ReferenceBridgeAdapter, run_contract

    server = _replay(http_tape[0], eras=("handshake",))
    results = await anyio.to_thread.run_sync(
        lambda: run_contract(ReferenceBridgeAdapter, server=server, max_examples=5, properties=["P1", "P2", "P5"])
    )
    assert [(r.property_id, r.passed) for r in results] == [("P1", True), ("P2", True), ("P5", True)], results
    assert set(TOOL_NAMES) <= set(server.tools)  # the recording survived every reset


async def test_run_contract_over_the_socket_of_a_replay_the_test_started(http_tape: tuple[Path, Any]) -> None:
    """Given a replay already serving, a socket run reaches it over its socket and leaves it serving; given one not
    started, the run starts and stops it."""
    from mcp_testkit import ReferenceBridgeAdapter, run_contract

    given: list[Any] = []

    def factory(*, transport: Any = None) -> ReferenceBridgeAdapter:
        given.append(transport)
        return ReferenceBridgeAdapter(transport=transport)

    def run(server: CassetteServer) -> list[Any]:
        return run_contract(factory, server=server, via="socket", max_examples=3, properties=["P2"])

    started = _replay(http_tape[0], eras=("handshake",))
    async with started:
        results = await anyio.to_thread.run_sync(lambda: run(started))
        assert started.started
    idle = _replay(http_tape[0], eras=("handshake",))
    results += await anyio.to_thread.run_sync(lambda: run(idle))
    assert [result.passed for result in results] == [True, True], results
    assert not idle.started
    assert len(given) > 1
    assert set(given) == {None}  # never the in-process transport: every example went over the socket


async def test_run_contract_runs_a_replay_in_the_eras_it_fits(http_tape: tuple[Path, Any]) -> None:
    """A replay speaking both eras is checked in the stateless era only (a probing bridge would never meet its
    handshake); naming the handshake era for it is refused, saying what to give instead."""
    from mcp_testkit import ReferenceBridgeAdapter, run_contract

    server = _replay(http_tape[0])
    results = await anyio.to_thread.run_sync(
        lambda: run_contract(ReferenceBridgeAdapter, server=server, max_examples=3, properties=["P1", "P5"])
    )
    assert [(r.property_id, r.era, r.status) for r in results] == [
        ("P1", "stateless", "passed"),
        ("P5", "stateless", "not_applicable"),
    ], results
    with pytest.raises(ValueError, match=r"speaks the handshake and stateless eras: .*eras=\('handshake',\)"):
        run_contract(ReferenceBridgeAdapter, server=_replay(http_tape[0]), properties=["P1"], eras=["handshake"])


# -- other transports ---------------------------------------------------------------------------------------------


async def test_serve_cassette_replays_over_http_and_stdio(
    http_tape: tuple[Path, Any], live_sdk: dict[str, Any]
) -> None:
    """`mcp-testkit serve --cassette` replays over HTTP (its start line names the recorded server) and over stdio."""
    import sys

    from mcp.client.stdio import StdioServerParameters
    from standalone._support import start

    path = http_tape[0]
    served = await anyio.to_thread.run_sync(lambda: start(path.parent, "--cassette", str(path)))
    try:
        assert "serving 'upstream-demo' at http://127.0.0.1:" in served.line
        assert "(8 tools)" in served.line
        over_http = await sdk_http_answers(served.url)
    finally:
        await anyio.to_thread.run_sync(served.stop)
    assert as_recorded(over_http) == as_recorded(live_sdk)
    # A JSON scenario adds to the replay: here a fault on the recorded `add`.
    scenario = path.parent / "faulty.json"
    scenario.write_text(json.dumps({"faults": [{"fault": {"type": "ErrorResult", "text": "injected"}, "tool": "add"}]}))
    served = await anyio.to_thread.run_sync(
        lambda: start(path.parent, "--cassette", str(path), "--scenario", str(scenario))
    )
    try:
        with anyio.fail_after(LIMIT_S):
            async with Client(served.url, mode="legacy") as client:
                faulted = await client.call_tool("add", {"a": 1, "b": 2})
                replayed = await client.call_tool("add", {"a": 1, "b": 2})
    finally:
        await anyio.to_thread.run_sync(served.stop)
    assert faulted.is_error
    assert faulted.content[0].text == "injected"  # type: ignore[union-attr]
    assert replayed.structured_content == {"result": 3}
    command = StdioServerParameters(
        command=sys.executable, args=["-m", "mcp_testkit", "serve", "--stdio", "--cassette", str(path)]
    )
    with anyio.fail_after(LIMIT_S):
        async with Client(command, mode="legacy") as client:
            answer = await client.call_tool("search", {"query": "lamp"})
    assert answer.structured_content == {"items": ["lamp-0", "lamp-1"], "next_page": 2}
    refused = await anyio.run_process(
        [sys.executable, "-m", "mcp_testkit", "serve", "--cassette", str(path), "--preset", "demo"], check=False
    )
    assert refused.returncode == 2
    assert refused.stderr.decode().strip() == (
        "mcp-testkit serve: --cassette replays a recorded catalogue: it takes no --preset"
    )


async def test_serve_cassette_takes_a_match_mode_and_speaks_the_recorded_eras(http_tape: tuple[Path, Any]) -> None:
    """`serve --cassette --match in_order` wants the recorded sequence; an auto-mode client gets the stateless era."""
    import sys

    from standalone._support import start

    path = http_tape[0]
    first, second = CALLS[0], CALLS[1]  # add(1, 2), then add(40, 2)
    served = await anyio.to_thread.run_sync(lambda: start(path.parent, "--cassette", str(path), "--match", "in_order"))
    try:
        with anyio.fail_after(LIMIT_S):
            async with Client(served.url) as client:  # auto mode: server/discover, then 2026-07-28
                out_of_order = await client.call_tool(*second)
                in_order = [await client.call_tool(*first), await client.call_tool(*second)]
    finally:
        await anyio.to_thread.run_sync(served.stop)
    assert out_of_order.is_error
    assert "match=in_order" in out_of_order.content[0].text  # type: ignore[union-attr]
    assert [answer.structured_content for answer in in_order] == [{"result": 3}, {"result": 42}]
    assert in_order[0].meta is not None  # answered in the stateless era: _meta carries serverInfo
    refused = await anyio.run_process(
        [sys.executable, "-m", "mcp_testkit", "serve", "--match", "by_tool"], check=False
    )
    assert refused.returncode == 2
    assert refused.stderr.decode().strip() == (
        "mcp-testkit serve: --match chooses how a replay matches calls: it needs --cassette"
    )
