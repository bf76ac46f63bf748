"""Input requests from tools (elicitation, sampling, roots): the SDK client answers them through its callbacks in
both eras over a real socket and over stdio; bad answers, tampered or foreign `requestState` and a client that never
answers are clear JSON-RPC errors, journaled, and the server keeps serving."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client, MCPError, StdioServerParameters

from mcp_testkit import TestMcpServer, ToolContext
from mcp_testkit._wire.eras import stateless_headers, stateless_params
from mcp_testkit.tools import Elicit, ListRoots, Sample

from ._support import ACCEPT, LIMIT_S, Wire, messages, rpc, sdk_transport, serving

pytestmark = pytest.mark.anyio

DATE = {"type": "object", "properties": {"date": {"type": "string"}}, "required": ["date"]}
MODES = ["legacy", "auto"]
"""The SDK client's handshake era ('legacy') and 2026-07-28 ('auto', which the server speaks)."""


def _booking() -> TestMcpServer:
    server = TestMcpServer()

    @server.tool("book")
    async def book(arguments: dict[str, Any], ctx: ToolContext) -> str:
        date = await ctx.elicit("Which date?", DATE)
        summary = await ctx.sample(f"Summarize a booking on {date['content']['date']}", max_tokens=50)
        roots = await ctx.list_roots()
        return f"{summary['content']['text']} in {roots[0]['uri']}"

    return server


async def _elicited(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"date": "2026-08-01"})


async def _sampled(context: Any, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
    asked = params.messages[0].content.text  # type: ignore[union-attr]
    return types.CreateMessageResult(
        role="assistant", content=types.TextContent(type="text", text=f"ok: {asked}"), model="m"
    )


async def _rooted(context: Any) -> types.ListRootsResult:
    return types.ListRootsResult(roots=[types.Root(uri="file:///work", name="work")])


def _client(server: TestMcpServer, mode: str, **callbacks: Any) -> Client:
    answers = {"elicitation_callback": _elicited, "sampling_callback": _sampled, "list_roots_callback": _rooted}
    answers.update(callbacks)
    return Client(sdk_transport(server, "socket"), mode=mode, **{k: v for k, v in answers.items() if v is not None})


@pytest.mark.parametrize("mode", MODES)
async def test_the_sdk_client_answers_elicitation_sampling_and_roots(mode: str) -> None:
    """A tool asks for a date, a summary and the roots; the SDK client's callbacks answer; journaled; run once."""
    server = _booking()
    async with serving(server, "socket"):
        with anyio.fail_after(LIMIT_S):
            async with _client(server, mode) as client:
                result = await client.call_tool("book", {})
                again = await client.call_tool("book", {})
    assert result.content[0].text == "ok: Summarize a booking on 2026-08-01 in file:///work"  # type: ignore[union-attr]
    assert again.content == result.content
    server.journal.assert_input("book", kind="elicit", answer={"action": "accept", "content": {"date": "2026-08-01"}})
    assert server.journal.assert_input("book", kind="sample")[0].params["maxTokens"] == 50
    assert server.journal.assert_input("book", kind="roots")[0].answer["roots"][0]["uri"] == "file:///work"
    era = "handshake" if mode == "legacy" else "stateless"
    assert {e.era for e in server.journal.inputs} == {era}
    assert len(server.journal.inputs) == 6
    assert server.executions("book") == 2  # however many rounds each call took
    if mode == "auto":
        rounds = [r.response["result"]["resultType"] for r in server.journal.calls("book")]
        assert rounds == ["input_required"] * 3 + ["complete"] + ["input_required"] * 3 + ["complete"]
    server.check()


async def test_a_handshake_answer_switches_a_json_answer_to_sse() -> None:
    """In JSON response mode a call that asks for input is answered on an SSE stream carrying the request."""
    server = _booking()
    server.response_mode = "json"
    async with serving(server, "socket"):
        with anyio.fail_after(LIMIT_S):
            async with _client(server, "legacy") as client:
                result = await client.call_tool("book", {})
    assert not result.is_error
    record = server.journal.calls("book")[0]
    assert record.response["result"]["content"][0]["text"].startswith("ok: ")
    answers = [r for r in server.journal if r.rpc_method is None and r.http_method == "POST"]
    assert len(answers) == 3
    assert all(r.status == 202 and r.error is None for r in answers)


async def test_several_inputs_in_one_round() -> None:
    """`ctx.ask` puts an elicitation, a sampling and a roots request in one InputRequiredResult."""
    server = TestMcpServer()

    @server.tool("plan")
    async def plan(arguments: dict[str, Any], ctx: ToolContext) -> str:
        got = await ctx.ask({"when": Elicit("When?", DATE), "why": Sample("Why?", 10), "where": ListRoots()})
        return ",".join(sorted(got))

    async with serving(server, "socket"):
        with anyio.fail_after(LIMIT_S):
            async with _client(server, "auto") as client:
                result = await client.call_tool("plan", {})
    assert result.content[0].text == "when,where,why"  # type: ignore[union-attr]
    first = server.journal.calls("plan")[0].response["result"]
    assert sorted(first["inputRequests"]) == ["when", "where", "why"]
    assert len(server.journal.calls("plan")) == 2
    assert server.executions("plan") == 1


@pytest.mark.parametrize("mode", MODES)
async def test_an_answer_that_breaks_the_schema_is_a_clear_error(mode: str) -> None:
    """Content that does not match the elicitation schema fails the call with -32602; the server serves on."""

    async def wrong(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        return types.ElicitResult(action="accept", content={"date": 20260801})

    server = _booking()
    server.tool("echo", returns="still here")
    async with serving(server, "socket"):
        with anyio.fail_after(LIMIT_S):
            async with _client(server, mode, elicitation_callback=wrong) as client:
                with pytest.raises(MCPError) as raised:
                    await client.call_tool("book", {})
                still = await client.call_tool("echo", {})
    assert raised.value.error.code == -32602
    assert "does not match the requested schema" in raised.value.error.message
    assert "20260801 is not of type 'string'" in raised.value.error.message
    exchange = server.journal.inputs.asked("book", kind="elicit")[0]
    assert exchange.error is not None
    assert exchange.answer == {"action": "accept", "content": {"date": 20260801}}
    assert still.content[0].text == "still here"  # type: ignore[union-attr]


@pytest.mark.parametrize(("mode", "code"), [("legacy", -32600), ("auto", -32021)])
async def test_a_client_without_the_capability_is_not_asked(mode: str, code: int) -> None:
    """A client that declares no elicitation capability gets the era's error, naming it, instead of a request."""
    server = _booking()
    async with serving(server, "socket"):
        with anyio.fail_after(LIMIT_S):
            async with _client(server, mode, elicitation_callback=None) as client:
                with pytest.raises(MCPError) as raised:
                    await client.call_tool("book", {})
    assert raised.value.error.code == code
    assert "elicitation, which the client did not declare" in raised.value.error.message
    assert not server.journal.inputs


async def test_a_client_that_never_answers_fails_the_call_after_the_bound() -> None:
    """A handshake-era client that does not answer: the call fails with -32001 after `input_timeout_s`, and the
    client is told the request was cancelled."""
    server = _booking()
    server.input_timeout_s = 0.2
    async with serving(server, "socket") as wire:
        params = {"protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}}, "clientInfo": {"name": "w"}}
        response = await wire.post(rpc("initialize", params, request_id=0))
        wire.session_id = response.headers["mcp-session-id"]
        wire.version = "2025-11-25"
        answered = messages(await wire.post(rpc("tools/call", {"name": "book", "arguments": {}}, request_id=1)))
        await wire.ping_ok()
    asked, cancelled, failed = answered
    assert asked["method"] == "elicitation/create"
    assert asked["params"]["message"] == "Which date?"
    assert cancelled["method"] == "notifications/cancelled"
    assert cancelled["params"]["requestId"] == asked["id"]
    assert failed["id"] == 1
    assert failed["error"]["code"] == -32001
    assert "did not answer elicitation/create of 'book' within 0.2 s" in failed["error"]["message"]
    assert server.journal.inputs[0].error == "no answer within 0.2 s"
    with pytest.raises(AssertionError, match="none came"):
        server.journal.assert_input("book")


async def _round(wire: Wire, params: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """POST one 2026-07-28 `tools/call` from a client that declares elicitation, sampling and roots."""
    capabilities = {"elicitation": {}, "sampling": {}, "roots": {}}
    full = stateless_params(params, client_info={"name": "wire", "version": "1"}, capabilities=capabilities)
    headers = {k.lower(): v for k, v in stateless_headers("tools/call", full).items()}
    response = await wire.post(rpc("tools/call", full), headers={"accept": ACCEPT, **headers})
    return response.status_code, messages(response)[-1]


async def test_tampered_foreign_and_replayed_request_state() -> None:
    """A changed `requestState`, or one issued for other arguments, is -32602 and journaled; a replayed one without
    its answer re-requests the input (the spec's answer to a missing input response); the server serves on."""
    server = _booking()
    book: dict[str, Any] = {"name": "book", "arguments": {}}
    async with serving(server, "socket") as wire:
        status, first = await _round(wire, book)
        state = first["result"]["requestState"]
        tampered = await _round(wire, {**book, "requestState": state + "x"})
        foreign = await _round(wire, {"name": "book", "arguments": {"a": 1}, "requestState": state})
        _, replayed = await _round(wire, {**book, "requestState": state})
        answered = {"elicit-1": {"action": "accept", "content": {"date": "today"}}}
        _, second = await _round(wire, {**book, "requestState": state, "inputResponses": answered})
    assert status == 200
    for (status, response), words in ((tampered, "failed its integrity check"), (foreign, "another request")):
        error = response["error"]
        assert (status, error["code"]) == (400, -32602)
        assert words in error["message"], error
    records = server.journal.calls("book")
    assert records[1].error is not None
    assert "integrity" in records[1].error
    assert replayed["result"]["resultType"] == "input_required"
    assert list(replayed["result"]["inputRequests"]) == ["elicit-1"]
    assert list(second["result"]["inputRequests"]) == ["sample-1"]
    assert second["result"]["requestState"] != state
    assert server.executions("book") == 0


async def test_a_prompt_asks_for_input_too() -> None:
    """A prompt whose messages function takes a context asks for input like a tool, in the SDK's 2026-07-28 mode."""
    server = TestMcpServer()

    async def messages_of(arguments: dict[str, str], ctx: ToolContext) -> list[dict[str, Any]]:
        answer = await ctx.elicit("Which date?", DATE)
        return [{"role": "user", "content": f"Plan for {answer['content']['date']}"}]

    server.prompt("plan", messages=messages_of)  # type: ignore[arg-type]
    async with serving(server, "socket"):
        with anyio.fail_after(LIMIT_S):
            async with _client(server, "auto") as client:
                got = await client.get_prompt("plan", {})
    assert got.messages[0].content.text == "Plan for 2026-08-01"  # type: ignore[union-attr]
    server.journal.assert_input("plan", kind="elicit")


SCENARIO = '''
def scenario(server):
    @server.tool("book")
    async def book(arguments, ctx):
        date = await ctx.elicit("Which date?", {"type": "object", "properties": {"date": {"type": "string"}}})
        roots = await ctx.list_roots()
        return date["content"]["date"] + " in " + roots[0]["uri"]
'''


async def test_stdio_asks_the_client_on_its_own_lines(tmp_path: Path) -> None:
    """Over stdio the tool's requests go out as lines and the SDK client's answers come back as lines."""
    scenario = tmp_path / "asking.py"
    scenario.write_text(SCENARIO)
    journal = tmp_path / "journal.jsonl"
    args = ["-m", "mcp_testkit", "serve", "--stdio", "--scenario", str(scenario), "--journal", str(journal)]
    with anyio.fail_after(LIMIT_S * 3):
        async with Client(
            StdioServerParameters(command=sys.executable, args=args),
            mode="legacy",
            elicitation_callback=_elicited,
            list_roots_callback=_rooted,
        ) as client:
            result = await client.call_tool("book", {})
    assert result.content[0].text == "2026-08-01 in file:///work"  # type: ignore[union-attr]
    lines = [json.loads(line) for line in journal.read_text().splitlines()]
    answers = [line for line in lines if line["rpc_method"] is None and line.get("error") is None]
    assert len(answers) == 2
