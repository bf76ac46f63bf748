"""Cassettes in both protocol eras: a replay speaks the eras the recorded server spoke, answers `server/discover`
from the recording, and shapes each answer for the era of the request, whichever era it was recorded in."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client, MCPError
from mcp.client.stdio import StdioServerParameters

from mcp_testkit import TestMcpServer, faults
from mcp_testkit._wire.eras import SERVER_INFO_KEY, stateless_headers, stateless_params
from mcp_testkit.bridge import MCPBridgeError, MCPCallOutcomeUnknown, ServerConfig, ToolPool
from mcp_testkit.cassettes import Cassette, CassetteServer, record
from mcp_testkit.upstream import Exchange

from ._support import LIMIT_S, REDACT, TOOL_NAMES, as_recorded, bridge_answers, sdk_http_answers
from .upstream import stdio_command

pytestmark = pytest.mark.anyio

ACCEPT = {"accept": "application/json, text/event-stream"}


def _replay(path: Path | Cassette, **settings: Any) -> CassetteServer:
    return TestMcpServer.from_cassette(path, **settings)


def _methods(server: TestMcpServer) -> list[str | None]:
    return [record.rpc_method for record in server.journal]


async def _stateless_post(url: str, method: str, params: dict[str, Any] | None = None) -> tuple[int, Any]:
    """One 2026-07-28 request, `_meta` and mirrored headers included, as raw HTTP: the status and the answer."""
    body = stateless_params(params, client_info={"name": "raw", "version": "1"})
    headers = {**ACCEPT, **stateless_headers(method, body)}
    async with httpx2.AsyncClient() as http:
        with anyio.fail_after(LIMIT_S):
            response = await http.post(url, json={"jsonrpc": "2.0", "id": 1, "method": method, "params": body},
                                       headers=headers)  # fmt: skip
    if response.headers["content-type"].startswith("text/event-stream"):
        data = [line[5:] for line in response.text.splitlines() if line.startswith("data:") and line[5:].strip()]
        return response.status_code, json.loads(data[-1])
    return response.status_code, response.json()


# -- a stateless recording -------------------------------------------------------------------------------------------


async def test_a_stateless_recording_replays_to_an_auto_sdk_client_answer_for_answer(
    stateless_tape: tuple[Path, dict[str, Any]], live_sdk_auto: dict[str, Any]
) -> None:
    """Recorded from the SDK client in auto mode, a replay answers its server/discover and every call as live."""
    path, through_proxy = stateless_tape
    assert Cassette.load(path).eras == ["stateless"]
    assert as_recorded(through_proxy) == as_recorded(live_sdk_auto)
    server = _replay(path)
    async with server:
        replayed = await sdk_http_answers(server.url, mode="auto")
    server.check()
    assert _methods(server)[0] == "server/discover"
    assert "initialize" not in _methods(server)  # the client stayed in the stateless era, as it did live
    assert {record.status for record in server.journal} == {200}
    assert as_recorded(replayed) == as_recorded(live_sdk_auto)  # resultType and _meta.serverInfo included
    assert replayed["0:add"]["_meta"][SERVER_INFO_KEY] == {"name": "upstream-demo", "version": "1.2.3"}


async def test_a_stateless_recording_replays_to_the_bridge_in_the_stateless_era(
    stateless_tape: tuple[Path, dict[str, Any]], live_bridge_stateless: dict[str, Any]
) -> None:
    """The reference bridge with era='stateless' loads and calls a stateless recording as it did the live server."""
    server = _replay(stateless_tape[0])
    async with server:
        replayed = await bridge_answers(server.url, era="stateless")
    server.check()
    assert as_recorded(replayed) == as_recorded(live_bridge_stateless)
    assert [name for name, _, _ in replayed["tools"]] == [f"up.{name}" for name in TOOL_NAMES]
    assert all(record.era == "stateless" for record in server.journal)


async def test_a_stateless_recording_replays_to_handshake_clients_without_that_eras_fields(
    stateless_tape: tuple[Path, dict[str, Any]], live_sdk: dict[str, Any], live_bridge: dict[str, Any]
) -> None:
    """The same cassette serves the handshake era: initialize built from server/discover, results without resultType."""
    server = _replay(stateless_tape[0])
    assert server.eras == ("handshake", "stateless")  # the handshake was never asked for while recording
    assert any("no initialize was recorded" in note for note in server.notes)
    async with server:
        replayed = await sdk_http_answers(server.url)  # legacy mode: initialize, sessions
        bridged = await bridge_answers(server.url, era="handshake")
    server.check()
    assert "server/discover" not in _methods(server)
    assert as_recorded(replayed) == as_recorded(live_sdk)
    assert as_recorded(bridged) == as_recorded(live_bridge)


async def test_a_stdio_server_is_recorded_and_replayed_in_the_stateless_era(
    tmp_path: Path, live_sdk_auto: dict[str, Any], live_bridge_stateless: dict[str, Any]
) -> None:
    """Through the stdio gateway, 2026-07-28 clients (the SDK in auto mode, the bridge) record and replay as live."""
    out = tmp_path / "stdio-stateless.json"
    async with record(command=stdio_command(), out=out, redact=REDACT) as proxy:
        through_proxy = await sdk_http_answers(proxy, mode="auto")
        bridged_live = await bridge_answers(proxy, era="stateless")
    recorded = Cassette.load(out)
    assert recorded.eras == ["stateless"]
    assert len({exchange.session for exchange in recorded}) == 1  # one process served every stateless request
    assert as_recorded(through_proxy) == as_recorded(live_sdk_auto)
    assert as_recorded(bridged_live) == as_recorded(live_bridge_stateless)
    server = _replay(out)
    async with server:
        replayed = await sdk_http_answers(server.url, mode="auto")
    server.check()
    assert "initialize" not in _methods(server)
    assert as_recorded(replayed) == as_recorded(live_sdk_auto)


async def test_discover_is_answered_from_the_recording(stateless_tape: tuple[Path, dict[str, Any]]) -> None:
    """server/discover answers the recorded versions, cache hints and serverInfo, with a replay's capabilities."""
    server = _replay(stateless_tape[0])
    async with server:
        status, answer = await _stateless_post(server.url, "server/discover")
        _, page = await _stateless_post(server.url, "tools/list")
    assert status == 200
    result = answer["result"]
    assert result["supportedVersions"] == ["2026-07-28"]  # what the SDK server offered, not every version we speak
    assert (result["cacheScope"], result["ttlMs"]) == ("private", 0)  # as recorded
    assert result["capabilities"] == {"tools": {"listChanged": True}}  # prompts and resources left out
    assert result["_meta"][SERVER_INFO_KEY] == {"name": "upstream-demo", "version": "1.2.3"}
    assert page["result"]["cacheScope"] == "private"
    assert any("prompts, resources" in note for note in server.notes)


# -- a handshake recording, replayed in the stateless era ------------------------------------------------------------


async def test_a_handshake_recording_replays_to_stateless_clients_as_the_live_server_answers_them(
    tape: tuple[Path, dict[str, Any]], live_sdk_auto: dict[str, Any], live_bridge_stateless: dict[str, Any]
) -> None:
    """Recorded in the handshake era (HTTP or stdio), a replay answers 2026-07-28 clients as the live server does."""
    server = _replay(tape[0])
    assert any("the replay also speaks the stateless era" in note for note in server.notes)
    async with server:
        replayed = await sdk_http_answers(server.url, mode="auto")
        bridged = await bridge_answers(server.url, era="stateless")
    server.check()
    assert _methods(server)[0] == "server/discover"
    live = {key: value for key, value in live_sdk_auto.items() if key != "logs"}
    assert as_recorded({key: value for key, value in replayed.items() if key != "logs"}) == as_recorded(live)
    # The SDK client names no log level, and the spec then sends no log; the live server sends one all the same,
    # which a recording of the other era cannot know: the replay keeps to the spec.
    assert (replayed["logs"], live_sdk_auto["logs"]) == ([], ["counted to 3"])
    assert replayed["7:slow_count:progress"] == [1, 2, 3]
    assert as_recorded(bridged) == as_recorded(live_bridge_stateless)


async def test_discover_of_a_handshake_recording_is_built_from_initialize(http_tape: tuple[Path, Any]) -> None:
    """With no server/discover recorded, the replay's is built from initialize: capabilities, serverInfo, versions."""
    server = _replay(http_tape[0])
    async with server:
        _, answer = await _stateless_post(server.url, "server/discover")
    result = answer["result"]
    assert result["supportedVersions"][0] == "2026-07-28"
    assert "2025-11-25" in result["supportedVersions"]  # the replay speaks both eras, and says so
    assert result["capabilities"] == server.script.capabilities
    assert result["_meta"][SERVER_INFO_KEY] == {"name": "upstream-demo", "version": "1.2.3"}


# -- which eras a replay speaks --------------------------------------------------------------------------------------


async def test_a_refused_probe_makes_a_replay_of_the_handshake_era_only(tmp_path: Path) -> None:
    """A server that refused server/discover while recording is replayed refusing it: the client falls back as live."""
    live = TestMcpServer("old", eras=("handshake",))
    live.tool("ping_me", read_only=True, returns="pong")
    out = tmp_path / "old.json"
    async with live, record(live.url, out=out) as proxy:
        with anyio.fail_after(LIMIT_S):
            async with Client(proxy) as client:  # auto mode: the probe is refused, the client falls back
                assert (await client.call_tool("ping_me", {})).content[0].text == "pong"  # type: ignore[union-attr]
    server = _replay(out)
    assert server.eras == ("handshake",)
    assert any("refused server/discover" in note for note in server.notes)
    async with server:
        with anyio.fail_after(LIMIT_S):
            async with Client(server.url) as client:
                answer = await client.call_tool("ping_me", {})
    assert answer.content[0].text == "pong"  # type: ignore[union-attr]
    assert _methods(server)[:2] == ["server/discover", "initialize"]
    assert _methods(live)[:2] == ["server/discover", "initialize"]  # the same walk as against the live server
    assert server.journal.records[0].status == live.journal.records[0].status


async def test_a_refused_initialize_makes_a_replay_of_the_stateless_era_only(tmp_path: Path) -> None:
    """A server that refused initialize while recording refuses it replayed, with its error, and serves 2026-07-28."""
    live = TestMcpServer("new", eras=("stateless",))
    live.tool("ping_me", read_only=True, returns="pong")
    out = tmp_path / "new.json"
    async with live, record(live.url, out=out) as proxy:
        refused_live = await _initialize(proxy)
        await bridge_answers(proxy, [("ping_me", {})], era="auto")
    server = _replay(out)
    assert server.eras == ("stateless",)
    assert any("refused initialize" in note for note in server.notes)
    async with server:
        refused = await _initialize(server.url)
        answers = await bridge_answers(server.url, [("ping_me", {})], era="auto")
    assert refused.status_code == refused_live.status_code == 400
    assert refused.json()["error"]["code"] == refused_live.json()["error"]["code"] == -32022
    assert answers["0:ping_me"] == "pong"


async def _initialize(url: str) -> httpx2.Response:
    init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}
    async with httpx2.AsyncClient(headers=ACCEPT) as http:
        with anyio.fail_after(LIMIT_S):
            return await http.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init})


async def test_serve_stdio_refuses_a_replay_of_the_stateless_era_only(tmp_path: Path) -> None:
    """`serve --stdio --cassette` of a server that refused initialize is refused, saying why; --era handshake serves."""
    import sys

    live = TestMcpServer("new", eras=("stateless",))
    live.tool("status", read_only=True, returns="green")
    out = tmp_path / "new.json"
    async with live, record(live.url, out=out) as proxy:
        await _initialize(proxy)
        await bridge_answers(proxy, [("status", {})], era="stateless")
    command = [sys.executable, "-m", "mcp_testkit", "serve", "--stdio", "--cassette", str(out)]
    with anyio.fail_after(LIMIT_S):
        refused = await anyio.run_process(command, check=False)
    assert refused.returncode == 2
    assert refused.stderr.decode().strip() == (
        f"mcp-testkit serve: --cassette {out}: the recorded server refused initialize, so the replay speaks the "
        "2026-07-28 era only, which needs HTTP: drop --stdio, or give --era handshake to replay it in the handshake era"
    )
    parameters = StdioServerParameters(command=command[0], args=[*command[1:], "--era", "handshake"])
    with anyio.fail_after(LIMIT_S):
        async with Client(parameters, mode="legacy") as client:
            answer = await client.call_tool("status", {})
    assert answer.content[0].text == "green"  # type: ignore[union-attr]


async def test_eras_given_to_the_replay_win_over_the_recording(stateless_tape: tuple[Path, Any]) -> None:
    """`eras=` chooses the eras served, as on any TestMcpServer."""
    server = _replay(stateless_tape[0], eras=("handshake",))
    async with server:
        _, answer = await _stateless_post(server.url, "server/discover")
    assert server.eras == ("handshake",)
    assert answer["error"]["code"] == -32601  # as any server of the handshake era only answers the probe


# -- what cannot cross eras, and faults of each era ------------------------------------------------------------------


def _input_required_cassette() -> Cassette:
    """A stateless cassette of one call answered input_required (an elicitation), then, retried, complete."""
    version = "2026-07-28"

    def exchange(seq: int, method: str, params: Any, result: Any) -> Exchange:
        request = {"jsonrpc": "2.0", "id": seq, "method": method, "params": stateless_params(params)}
        response = {"jsonrpc": "2.0", "id": seq, "result": result}
        return Exchange(seq, float(seq), 1.0, "http", "stateless", version, request, response)

    info = {SERVER_INFO_KEY: {"name": "shop", "version": "1"}}
    order = {"name": "order", "inputSchema": {"type": "object", "properties": {"item": {"type": "string"}}}}
    ask = {
        "method": "elicitation/create",
        "params": {
            "mode": "form",
            "message": "Order lamp?",
            "requestedSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]},
        },
    }
    return Cassette(
        [
            exchange(1, "server/discover", {}, {"supportedVersions": [version], "capabilities": {"tools": {}},
                                                "resultType": "complete", "_meta": info}),
            exchange(2, "tools/list", {}, {"tools": [order], "resultType": "complete", "_meta": info}),
            exchange(3, "tools/call", {"name": "order", "arguments": {"item": "lamp"}},
                     {"resultType": "input_required", "inputRequests": {"confirm": ask}, "requestState": "r1"}),
            exchange(4, "tools/call", {"name": "order", "arguments": {"item": "lamp"}},
                     {"content": [{"type": "text", "text": "ordered lamp"}], "resultType": "complete", "_meta": info}),
        ],
        {"transport": "http", "url": "http://shop/mcp"},
        source="shop.json",
    )  # fmt: skip


async def test_an_input_required_answer_replays_to_a_stateless_client_and_is_refused_to_a_handshake_one() -> None:
    """A recorded input_required round replays in the stateless era (the retry gets the final answer); a handshake
    client, which cannot read it, gets a JSON-RPC error saying so."""
    from mcp_types import ElicitResult

    asked: list[str] = []

    async def on_elicit(context: Any, params: Any) -> ElicitResult:
        asked.append(params.message)
        return ElicitResult(action="accept", content={"ok": True})

    server = _replay(_input_required_cassette())
    async with server:
        with anyio.fail_after(LIMIT_S):
            async with Client(server.url, elicitation_callback=on_elicit) as client:
                answer = await client.call_tool("order", {"item": "lamp"})
        server.reset()
        with anyio.fail_after(LIMIT_S):
            async with Client(server.url, mode="legacy") as client:
                with pytest.raises(MCPError, match=r"input_required.*handshake-era client cannot be given it"):
                    await client.call_tool("order", {"item": "lamp"})
    assert asked == ["Order lamp?"]
    assert answer.content[0].text == "ordered lamp"  # type: ignore[union-attr]


async def test_faults_of_the_stateless_era_on_a_replay(stateless_tape: tuple[Path, Any]) -> None:
    """A stateless fault (MissingCapability) and Drop(after_execution=True) hit a replay; the ledger counts the drop."""
    server = _replay(stateless_tape[0])
    server.inject(faults.MissingCapability(["sampling"]), method="tools/call", tool="search")
    server.inject(faults.Drop(after_execution=True), method="tools/call", tool="write_note")
    async with server:
        config = ServerConfig(name="up", url=server.url, connect_retries=0, era="stateless")
        with anyio.fail_after(LIMIT_S):
            async with ToolPool([config]) as pool:
                with pytest.raises(MCPBridgeError, match="-32021: Missing required client capability: sampling"):
                    await pool.call("up.search", {"query": "lamp"})
                with pytest.raises(MCPCallOutcomeUnknown, match="may have run"):
                    await pool.call("up.write_note", {"text": "hello"})
    assert server.executions("search") == 0
    assert server.executions("write_note") == 1  # it ran, the answer was dropped
    assert [type(r.fault).__name__ for r in server.journal if r.fault] == ["MissingCapability", "Drop"]
    server.check(unused_faults=True)


def test_the_answers_differ_between_eras_only_in_that_eras_fields(
    live_sdk: dict[str, Any], live_sdk_auto: dict[str, Any]
) -> None:
    """The premise of shaping: the live server's answers in the two eras differ only in _meta.serverInfo."""
    for key, value in live_sdk_auto.items():
        if isinstance(value, dict) and "content" in value:
            assert value["_meta"] == {SERVER_INFO_KEY: {"name": "upstream-demo", "version": "1.2.3"}}, key
            assert {k: v for k, v in value.items() if k != "_meta"} == live_sdk[key], key
            assert "_meta" not in live_sdk[key]


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_recording_replay_relays_the_live_calls_notifications(
    mode: str, upstream_url: str, tmp_path: Path, live_sdk: dict[str, Any], live_sdk_auto: dict[str, Any]
) -> None:
    """Under a record mode, a call sent on to the live server reaches a client of either era with its progress and
    log, on the call's stream."""
    from mcp_testkit.cassettes._pytest import cassette_server

    live = live_sdk_auto if mode == "auto" else live_sdk

    out = tmp_path / "relayed.json"
    server = await anyio.to_thread.run_sync(lambda: cassette_server(out, "all", {"upstream": upstream_url}, {}))
    try:
        async with server:
            relayed = await sdk_http_answers(server.url, [("slow_count", {"to": 3})], mode=mode)
    finally:
        await anyio.to_thread.run_sync(server.close_upstream)
    written = await anyio.to_thread.run_sync(server.save)
    assert written is not None
    assert written.eras == ["stateless"]  # the upstream offers 2026-07-28: the recording session spoke it
    assert relayed["0:slow_count"] == live["7:slow_count"]
    assert relayed["0:slow_count:progress"] == [1, 2, 3]
    assert relayed["logs"] == live["logs"] == ["counted to 3"]


def test_an_unanswered_probe_says_nothing_about_the_eras() -> None:
    """A server/discover that got no answer (a 502 of the proxy, the upstream unreachable) refuses no era."""
    from mcp_testkit.cassettes import HttpInfo

    def probe(response: Any, status: int, error: str | None = None) -> Exchange:
        request = {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": stateless_params({})}
        http = HttpInfo("POST", status, "json")
        return Exchange(1, 0.0, 0.0, "http", "stateless", "2026-07-28", request, response, http=http, error=error)

    init = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}, "serverInfo": {"name": "s", "version": "1"}}
    opened = Exchange(2, 1.0, 1.0, "http", "handshake", "2025-11-25",
                      {"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": {"protocolVersion": "2025-11-25"}},
                      {"jsonrpc": "2.0", "id": 2, "result": init})  # fmt: skip
    unanswered = {"jsonrpc": "2.0", "id": None, "error": {"code": -32603, "message": "upstream did not answer"}}
    refused = {"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "Method not found"}}
    cases = [
        (probe(unanswered, 502, error="the upstream did not answer"), ("handshake", "stateless")),
        (probe(refused, 200), ("handshake",)),
        (probe(None, 400), ("handshake",)),
    ]
    for first, eras in cases:
        cassette = Cassette([first, opened], {"transport": "http", "url": "http://u/mcp"})
        assert TestMcpServer.from_cassette(cassette).eras == eras, first
