"""The referee: every client message judged against its revision's wire model (mcp-types) and the rules a schema
cannot say, each violation on its journal record with its rule id and JSON path; observed by default, refused
with the spec's JSON-RPC error under `referee="refuse"`; and none from the SDK client or the reference bridge."""

from __future__ import annotations

import dataclasses
import io
import json
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from cancellable import slow_server
from mcp import Client
from mcp.shared.exceptions import MCPDeprecationWarning

from mcp_testkit import TestMcpServer, ToolContext, Violation
from mcp_testkit._wire.eras import VERSION_KEY
from mcp_testkit.bridge import ServerConfig, ToolPool
from mcp_testkit.server import serve_stdio
from mcp_testkit.standalone._admin import PREFIX, AdminApp

from ._support import CLIENT_INFO, LIMIT_S, Stateless, Wire, note, rpc, sdk_transport, serving

pytestmark = pytest.mark.anyio


def _server(**options: Any) -> TestMcpServer:
    server = TestMcpServer("referee", page_size=2, **options)
    for name in ("t1", "t2", "t3"):
        server.tool(name, returns=f"{name} ran")
    server.resource("file:///notes.txt", text="hello", mime_type="text/plain")
    server.prompt("greet", messages=[{"role": "user", "content": "hi"}])
    return server


# (case, message, headers over the session's, rule, JSON path) in a handshake-era session at 2025-11-25.
HANDSHAKE_CASES = [
    ("arguments a string", rpc("tools/call", {"name": "t1", "arguments": "x"}), {}, "schema", "$.params.arguments"),
    ("name a number", rpc("tools/call", {"name": 5, "arguments": {}}), {}, "schema", "$.params.name"),
    ("read without uri", rpc("resources/read", {}), {}, "schema", "$.params.uri"),
    ("_meta not an object", rpc("ping", {"_meta": 5}), {}, "schema", "$.params._meta"),
    ("jsonrpc 1.0", {**rpc("tools/list"), "jsonrpc": "1.0"}, {}, "schema", "$.jsonrpc"),
    ("a notification with an id", {**note("notifications/initialized"), "id": 4}, {}, "notification-id", "$.id"),
    (
        "cancelled's requestId an object",
        note("notifications/cancelled", {"requestId": {}}),
        {},
        "schema",
        "$.params.requestId",
    ),
    ("a cursor never given", rpc("tools/list", {"cursor": "bogus"}), {}, "cursor-not-given", "$.params.cursor"),
    ("another version's header", rpc("ping"), {"mcp-protocol-version": "2025-06-18"}, "version-header", "$"),
    ("no version header", rpc("ping"), {"mcp-protocol-version": None}, "version-header", "$"),
]


@pytest.mark.parametrize(
    ("case", "message", "headers", "rule", "path"), HANDSHAKE_CASES, ids=[c[0] for c in HANDSHAKE_CASES]
)
async def test_each_invalid_handshake_message_is_a_violation_with_its_rule_and_path(
    via: str, case: str, message: dict[str, Any], headers: dict[str, Any], rule: str, path: str
) -> None:
    """A raw client's invalid message in a 2025-11-25 session: its record holds the violation, and only it."""
    server = _server()
    async with serving(server, via) as wire:
        await wire.initialize()
        await wire.post(message, headers=headers)
    record = server.journal.last
    assert [(v.rule, v.path) for v in record.violations] == [(rule, path)], record.violations
    assert [(v.rule, v.path, v.seq) for v in server.journal.violations] == [(rule, path, record.seq)]
    assert server.journal[:-1]
    assert all(not r.violations for r in server.journal[:-1])


def _modern_cases() -> list[tuple[str, str, dict[str, Any], dict[str, Any], str, str]]:
    """(case, method, params, headers over the mirrored ones, rule, path) of 2026-07-28 requests."""
    return [
        ("arguments a string", "tools/call", {"name": "t1", "arguments": "x"}, {}, "schema", "$.params.arguments"),
        ("Mcp-Method not the body's", "tools/list", {}, {"mcp-method": "prompts/list"}, "method-header", "$.method"),
        (
            "Mcp-Name not the body's",
            "tools/call",
            {"name": "t1", "arguments": {}},
            {"mcp-name": "t2"},
            "name-header",
            "$.params.name",
        ),
        (
            "header version not _meta's",
            "tools/list",
            {},
            {"mcp-protocol-version": "2025-11-25"},
            "version-header",
            "$.params._meta",
        ),
        ("a cursor never given", "tools/list", {"cursor": "bogus"}, {}, "cursor-not-given", "$.params.cursor"),
    ]


MODERN_CASES = _modern_cases()


@pytest.mark.parametrize(
    ("case", "method", "params", "headers", "rule", "path"), MODERN_CASES, ids=[c[0] for c in MODERN_CASES]
)
async def test_each_invalid_2026_07_28_request_is_a_violation_with_its_rule_and_path(
    via: str, case: str, method: str, params: dict[str, Any], headers: dict[str, Any], rule: str, path: str
) -> None:
    """A raw 2026-07-28 request that breaks one rule: its record holds that violation, and only it."""
    server = _server()
    async with serving(server, via) as wire:
        await Stateless(wire).post(method, params, headers=headers)
    [record] = server.journal
    assert [(v.rule, v.path) for v in record.violations] == [(rule, path)], record.violations


async def test_a_2026_07_28_request_without_its_meta_version_breaks_meta_version(via: str) -> None:
    """`_meta` without the protocol version: meta-version at the key it lacks (not a second, schema violation)."""
    server = _server()
    message = rpc("tools/list", {"_meta": {"io.modelcontextprotocol/clientCapabilities": {}}})
    headers = {"mcp-protocol-version": "2026-07-28", "mcp-method": "tools/list"}
    async with serving(server, via) as wire:
        await wire.post(message, headers=headers)
    [violation] = server.journal.last.violations
    assert (violation.rule, violation.path) == ("meta-version", f'$.params._meta["{VERSION_KEY}"]')
    assert "2026-07-28" in violation.message


async def test_an_id_in_flight_on_the_session_is_a_violation_of_the_second_request(via: str) -> None:
    """Two calls with one id while the first still runs: the second breaks id-in-flight; later reuse does not."""
    server, running = slow_server(LIMIT_S)
    async with serving(server, via) as wire:
        await wire.initialize()
        async with anyio.create_task_group() as group:
            group.start_soon(wire.post, rpc("tools/call", {"name": "slow", "arguments": {}}, request_id=7))
            assert await anyio.to_thread.run_sync(running.wait, LIMIT_S)
            await wire.post(rpc("tools/call", {"name": "search", "arguments": {}}, request_id=7))
            await wire.post(note("notifications/cancelled", {"requestId": 7}))
        await wire.post(rpc("tools/call", {"name": "search", "arguments": {}}, request_id=7))  # 7 is free again
    flagged = [(v.seq, v.rule, v.path) for v in server.journal.violations]
    second = server.journal.calls("search")[0]
    assert flagged == [(second.seq, "id-in-flight", "$.id")]


async def test_the_message_names_the_nearest_valid_shape(via: str) -> None:
    """A schema violation's message says what pydantic found and the shape expected where the path points."""
    server = _server()
    async with serving(server, via) as wire:
        await wire.initialize()
        await wire.post(rpc("tools/call", {"name": "t1", "arguments": "x"}))
    [violation] = server.journal.violations
    assert violation.message.startswith('Input should be a valid dictionary (got "x"); expected {')
    assert "name: string" in violation.message
    assert "arguments?: object" in violation.message
    assert str(violation) == f"#{violation.seq} schema at $.params.arguments: {violation.message}"


async def test_assert_conformant_lists_each_violation_under_its_request_and_allows_by_rule(via: str) -> None:
    server = _server()
    async with serving(server, via) as wire:
        await wire.initialize()
        await wire.post(rpc("tools/list", {"cursor": "bogus"}))
    with pytest.raises(AssertionError) as failed:
        server.journal.assert_conformant()
    text = str(failed.value)
    assert "the client broke MCP's rules 1 time (docs/referee.md):" in text
    assert "tools/list" in text
    assert "cursor-not-given at $.params.cursor: 'bogus'" in text
    server.journal.assert_conformant(allow=["cursor-not-given"])
    with pytest.raises(ValueError, match="allow names no referee rule: nope"):
        server.journal.assert_conformant(allow=["nope"])


async def test_a_record_exports_its_violations(via: str) -> None:
    server = _server()
    async with serving(server, via) as wire:
        await wire.initialize()
        await wire.post(rpc("tools/list", {"cursor": 3}))
    exported = json.loads(server.journal.to_jsonl().splitlines()[-1])
    assert [(v["rule"], v["path"]) for v in exported["violations"]] == [("schema", "$.params.cursor")]


# -- observe or refuse ----------------------------------------------------------------------------


async def test_the_referee_observes_by_default_and_refuses_when_told(via: str) -> None:
    """A call with another version's header: answered and run as ever, the violation noted; under
    referee="refuse" answered -32600 without running."""
    answers = {}
    for mode in ("observe", "refuse"):
        server = _server(referee=mode)
        async with serving(server, via) as wire:
            await wire.initialize()
            response = await wire.post(
                rpc("tools/call", {"name": "t1", "arguments": {}}), headers={"mcp-protocol-version": "2025-06-18"}
            )
        answers[mode] = (response.json(), server.executions("t1"), [v.rule for v in server.journal.violations])
    observed, refused = answers["observe"], answers["refuse"]
    assert observed[0]["result"]["content"][0]["text"] == "t1 ran"
    assert observed[1] == 1
    assert observed[2] == refused[2] == ["version-header"]
    assert refused[0]["error"]["code"] == -32600
    assert refused[1] == 0
    assert refused[0]["error"]["message"].startswith("Invalid Request: version-header at $: ")
    assert refused[0]["error"]["data"]["violations"][0]["rule"] == "version-header"


async def test_refuse_answers_bad_params_32602_in_each_era(via: str) -> None:
    """A `_meta` that is no object (handshake) or a call whose name header disagrees (2026-07-28) is -32602
    when every violation lies in params; the tool never runs."""
    server = _server(referee="refuse")
    async with serving(server, via) as wire:
        handshake = Wire(wire.client, server)
        await handshake.initialize()
        first = await handshake.post(rpc("tools/call", {"name": "t1", "arguments": {}, "_meta": 5}))
        second = await Stateless(wire).post("tools/call", {"name": "t1", "arguments": {}, "requestState": 5})
    assert first.json()["error"]["code"] == -32602
    assert second.status_code == 400
    assert second.json()["error"]["code"] == -32602
    assert second.json()["error"]["message"].startswith("Invalid params: schema at $.params.requestState: ")
    assert server.executions("t1") == 0


def test_referee_takes_observe_or_refuse() -> None:
    with pytest.raises(ValueError, match="referee must be 'observe'"):
        TestMcpServer(referee="strict")


# -- conformant clients: no violation --------------------------------------------------------------


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_the_sdk_client_sends_no_violation_across_a_session(via: str, mode: str) -> None:
    """The official SDK client, in each era: paged listing, calls, a cancelled call, ping, resources, prompts."""
    server, running = slow_server(LIMIT_S)
    for name in ("t1", "t2", "t3"):
        server.tool(name, returns=f"{name} ran")
    server.page_size = 2
    server.resource("file:///notes.txt", text="hello", mime_type="text/plain")
    server.prompt("greet", messages=[{"role": "user", "content": "hi"}])
    async with serving(server, via):
        with anyio.fail_after(LIMIT_S):
            async with Client(sdk_transport(server, via), mode=mode) as client:
                page = await client.list_tools()
                while page.next_cursor is not None:
                    page = await client.list_tools(cursor=page.next_cursor)
                await client.call_tool("t1", {"x": 1})
                async with anyio.create_task_group() as group:
                    group.start_soon(client.call_tool, "slow", {})
                    assert await anyio.to_thread.run_sync(running.wait, LIMIT_S)
                    group.cancel_scope.cancel()
                if mode == "legacy":
                    with pytest.warns(MCPDeprecationWarning, match="ping is removed as of 2026-07-28"):
                        await client.send_ping()
                await client.list_resources()
                await client.read_resource("file:///notes.txt")
                await client.list_prompts()
                await client.get_prompt("greet")
                await client.call_tool("t2", {})
    assert len(server.journal.requests("tools/list")) == 3  # every page was asked for, with the cursors given
    assert server.journal.cancelled("slow")
    server.journal.assert_conformant()


@pytest.mark.parametrize("era", ["handshake", "stateless"])
async def test_the_reference_bridge_sends_no_violation_across_a_session(via: str, era: str) -> None:
    """The reference bridge, in each era: every page of the catalogue, calls, a cancelled call."""
    server, running = slow_server(LIMIT_S)
    for name in ("t1", "t2", "t3"):
        server.tool(name, returns=f"{name} ran")
    server.page_size = 2
    transport = httpx2.ASGITransport(app=server.asgi_app) if via == "asgi" else None
    async with serving(server, via):
        config = ServerConfig(name="t", url=server.url if via == "socket" else "http://127.0.0.1/mcp", era=era)
        with anyio.fail_after(LIMIT_S):
            async with ToolPool([dataclasses.replace(config, connect_backoff_s=0.0)], transport=transport) as pool:
                assert len(pool.tools()) == 5
                assert await pool.call("t.t1", {"x": 1}) == "t1 ran"
                async with anyio.create_task_group() as group:
                    group.start_soon(pool.call, "t.slow", {})
                    assert await anyio.to_thread.run_sync(running.wait, LIMIT_S)
                    group.cancel_scope.cancel()
                assert await pool.call("t.search", {}) == "found"
    assert len(server.journal.requests("tools/list")) >= 3
    server.journal.assert_conformant()


def test_violation_is_public() -> None:
    assert Violation("schema", "$.id", "x", 3).to_json() == {"rule": "schema", "path": "$.id", "message": "x", "seq": 3}


# -- where violations show: a client's answer to the server, the admin API, the HTML journal ---------------


async def test_an_invalid_answer_to_an_elicitation_is_a_schema_violation_at_its_result() -> None:
    """A raw client answers a tool's elicitation (handshake era) with an action no revision has: the record of
    that answer holds a schema violation at $.result.action, judged against ElicitResult. Over a socket only:
    the in-process transport hands out a response once it is whole, and this one waits for the answer."""
    via = "socket"
    server = TestMcpServer("referee")

    @server.tool("book")
    async def book(arguments: dict[str, Any], ctx: ToolContext) -> str:
        answer = await ctx.elicit("Which date?", {"type": "object", "properties": {}})
        return f"got {answer.get('action')}"

    async with serving(server, via) as wire:
        params = {"protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}}, "clientInfo": CLIENT_INFO}
        opened = await wire.post(rpc("initialize", params, request_id=0))
        wire.session_id, wire.version = opened.headers["mcp-session-id"], "2025-11-25"
        await wire.post(note("notifications/initialized"))
        call = json.dumps(rpc("tools/call", {"name": "book", "arguments": {}})).encode()
        with anyio.fail_after(LIMIT_S):
            async with wire.client.stream("POST", wire.path, content=call, headers=wire.headers()) as stream:
                lines = stream.aiter_lines()
                async for line in lines:  # the call's SSE stream carries the elicitation first
                    if line.startswith("data: "):
                        asked = json.loads(line[len("data: ") :])
                        break
                await wire.post({"jsonrpc": "2.0", "id": asked["id"], "result": {"action": "maybe"}})
                rest = [line async for line in lines]
    assert asked["method"] == "elicitation/create"
    assert any(line.startswith("data: ") for line in rest)  # the call was answered
    [answer] = [record for record in server.journal if record.rpc_method is None and record.http_method == "POST"]
    [violation] = answer.violations
    assert (violation.rule, violation.path) == ("schema", "$.result.action")
    assert "accept" in violation.message
    assert "decline" in violation.message


async def test_the_admin_api_lists_violations_by_rule_and_since() -> None:
    server = _server()
    server.asgi_app = AdminApp(server, "admin-token")  # type: ignore[assignment]
    bearer = {"authorization": "Bearer admin-token"}
    async with serving(server, "socket") as wire:
        await wire.initialize()
        await wire.post(rpc("tools/list", {"cursor": "bogus"}))
        await wire.post(rpc("tools/call", {"name": "t1", "arguments": "x"}, request_id=2))
        every = (await wire.client.get(f"{PREFIX}/violations", headers=bearer)).json()
        schema = (await wire.client.get(f"{PREFIX}/violations", params={"rule": "schema"}, headers=bearer)).json()
        since = (await wire.client.get(f"{PREFIX}/violations", params={"since": 4}, headers=bearer)).json()
        journal = (await wire.client.get(f"{PREFIX}/journal", headers=bearer)).json()
        bad = await wire.client.get(f"{PREFIX}/violations", params={"tool": "t1"}, headers=bearer)
    assert [(v["rule"], v["path"], v["seq"]) for v in every["violations"]] == [
        ("cursor-not-given", "$.params.cursor", 3),
        ("schema", "$.params.arguments", 4),
    ]
    assert every["count"] == 2
    assert schema["violations"] == every["violations"][1:]
    assert since["count"] == 0
    assert [len(r["violations"]) for r in journal["records"]] == [0, 0, 1, 1]
    assert bad.status_code == 400


def test_the_html_journal_shows_each_record_s_violations(tmp_path: Path) -> None:
    server = _server()
    with server:
        with httpx2.Client(base_url=server.base_url) as client:
            headers = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
            opened = client.post("/mcp", json=rpc("initialize", {"protocolVersion": "2025-11-25"}), headers=headers)
            headers |= {"mcp-session-id": opened.headers["mcp-session-id"], "mcp-protocol-version": "2025-11-25"}
            client.post("/mcp", json=rpc("tools/list", {"cursor": "bogus"}, request_id=2), headers=headers)
    page = server.journal.to_html(tmp_path / "journal.html").read_text(encoding="utf-8")
    assert "3 requests" not in page
    assert "2 requests, 0 with a fault, 2 with a violation of MCP's rules." in page
    assert "1 violation</summary>" in page
    assert "<code>cursor-not-given</code> at <code>$.params.cursor</code>" in page
    assert "<code>schema</code> at <code>$.params.capabilities</code>: Field required" in page


async def test_stdio_lines_are_judged_as_the_handshake_era_s() -> None:
    """Over stdio: a schema violation and a cursor never given, each on its line's record; the rest valid."""
    server = _server()
    params = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": CLIENT_INFO}
    lines = [
        rpc("initialize", params, request_id=0),
        note("notifications/initialized"),
        rpc("tools/list", {"cursor": "bogus"}, request_id=1),
        rpc("tools/call", {"name": "t1", "arguments": "x"}, request_id=2),
        rpc("tools/call", {"name": "t1", "arguments": {}}, request_id=3),
    ]
    stdin = io.BytesIO(b"".join(json.dumps(line).encode() + b"\n" for line in lines))
    with anyio.fail_after(LIMIT_S):
        await serve_stdio(server, stdin, io.BytesIO())
    assert [(v.seq, v.rule, v.path) for v in server.journal.violations] == [
        (3, "cursor-not-given", "$.params.cursor"),
        (4, "schema", "$.params.arguments"),
    ]
