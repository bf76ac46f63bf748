"""Cassettes record a tool's input rounds (handshake-era requests on the call's stream, 2026-07-28 InputRequiredResult
rounds), replay them (the replay asks the same questions and mints its own requestState), refuse an answer that
differs naming the difference, and `verify` names them as not compared. Over real sockets, with the SDK client."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client

from mcp_testkit import TestMcpServer, ToolContext
from mcp_testkit.cassettes import Cassette, record, verify

pytestmark = pytest.mark.anyio
LIMIT_S = 60.0
DATE = {"type": "object", "properties": {"date": {"type": "string"}}, "required": ["date"]}
MODES = {"handshake": "legacy", "stateless": "auto"}


def _live() -> TestMcpServer:
    live = TestMcpServer("booking")

    @live.tool("book", read_only=True)
    async def book(arguments: dict[str, Any], ctx: ToolContext) -> str:
        date = await ctx.elicit("Which date?", DATE)
        note = await ctx.sample("Summarize the booking", max_tokens=50)
        return f"booked {arguments['guest']} on {date['content']['date']} ({note['content']['text']})"

    return live


def _client(url: str, mode: str, date: str = "2026-08-01", seen: list[str] | None = None) -> Client:
    async def on_elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        if seen is not None:
            seen.append(params.message)
        return types.ElicitResult(action="accept", content={"date": date})

    async def on_sample(context: Any, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        text = types.TextContent(type="text", text="secret-note-42")
        return types.CreateMessageResult(role="assistant", content=text, model="m")

    return Client(url, mode=mode, elicitation_callback=on_elicit, sampling_callback=on_sample)


async def _record(tmp_path: Path, era: str, **options: Any) -> Path:
    out = tmp_path / f"booking-{era}.json"
    with anyio.fail_after(LIMIT_S):
        async with _live() as live, record(live.url, out=out, **options) as proxy_url:
            async with _client(proxy_url, MODES[era]) as client:
                result = await client.call_tool("book", {"guest": "Ada"})
    assert result.content == [types.TextContent(type="text", text="booked Ada on 2026-08-01 (secret-note-42)")]
    return out


def _text(result: types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


@pytest.mark.parametrize("recorded_era", ["handshake", "stateless"])
@pytest.mark.parametrize("replayed_era", ["handshake", "stateless"])
async def test_a_recorded_call_with_input_rounds_replays_asking_the_same(
    tmp_path: Path, recorded_era: str, replayed_era: str
) -> None:
    """Recorded in one era, replayed in either: the replay asks the recorded questions, and given the recorded
    answers gives the recorded result; the ledger counts one execution."""
    tape = Cassette.load(await _record(tmp_path, recorded_era))
    [call] = tape.calls("book")
    assert [(i["round"], i["method"]) for i in call.inputs] == [
        (1, "elicitation/create"),
        (2, "sampling/createMessage"),
    ]
    assert call.inputs[0]["answer"] == {"action": "accept", "content": {"date": "2026-08-01"}}
    replay = TestMcpServer.from_cassette(tape)
    seen: list[str] = []
    with anyio.fail_after(LIMIT_S):
        async with replay, _client(replay.url, MODES[replayed_era], seen=seen) as client:
            result = await client.call_tool("book", {"guest": "Ada"})
    assert _text(result) == "booked Ada on 2026-08-01 (secret-note-42)"
    assert seen == ["Which date?"]
    assert replay.executions("book") == 1
    replay.journal.assert_input("book", kind="sample")
    replay.check()


@pytest.mark.parametrize("era", ["handshake", "stateless"])
async def test_an_answer_that_differs_from_the_recording_is_an_error_naming_it(tmp_path: Path, era: str) -> None:
    """A client that answers the elicitation otherwise gets an error result naming the field and both values; the
    replay's check() fails with it, and the replay keeps serving."""
    replay = TestMcpServer.from_cassette(await _record(tmp_path, era))
    with anyio.fail_after(LIMIT_S):
        async with replay:
            async with _client(replay.url, MODES[era], date="2026-09-09") as client:
                refused = await client.call_tool("book", {"guest": "Ada"})
            async with _client(replay.url, MODES[era]) as client:
                served = await client.call_tool("book", {"guest": "Ada"})
    assert refused.is_error
    assert 'content.date: recorded "2026-08-01", got "2026-09-09"' in _text(refused)
    assert _text(served) == "booked Ada on 2026-08-01 (secret-note-42)"
    with pytest.raises(AssertionError, match="answered otherwise than when it was recorded"):
        replay.check()


async def test_the_clients_answers_are_redacted_and_match_any_value_on_replay(tmp_path: Path) -> None:
    """A secret in the client's answer is redacted in the file (in either era's messages); on replay the redacted
    part matches whatever the client answers."""
    out = await _record(tmp_path, "stateless", redact=[r"secret-note-\d+"])
    assert "secret-note-42" not in out.read_text()
    [call] = Cassette.load(out).calls("book")
    assert "<redacted:" in call.inputs[1]["answer"]["content"]["text"]
    replay = TestMcpServer.from_cassette(out)
    with anyio.fail_after(LIMIT_S):
        async with replay, _client(replay.url, "auto") as client:
            result = await client.call_tool("book", {"guest": "Ada"})
    assert not result.is_error
    replay.check()


async def test_verify_names_calls_with_input_rounds_as_not_compared(tmp_path: Path) -> None:
    """verify does not re-send a call that asked for input (nobody answers there): it names it as not compared."""
    out = await _record(tmp_path, "handshake")
    live = _live()
    with live:
        report = verify(out, live.url)
    assert report.calls_compared == 0
    assert "tools/call with input rounds: book (1 recorded)" in report.not_compared
    assert "not compared: " in report.format()
    assert report.exit_status == 0


async def test_a_stdio_upstreams_input_rounds_are_recorded_and_replayed(tmp_path: Path) -> None:
    """A stdio server (here `mcp-testkit serve --stdio` with a scenario tool that asks) recorded through the proxy:
    its input requests and the client's answers (stdio lines) are linked, and the replay asks them again."""
    scenario = tmp_path / "asks.json"
    asks = [{"key": "date", "elicit": {"message": "Which date?", "schema": DATE}}]
    scenario.write_text(json.dumps({"tools": [{"name": "book", "asks": asks, "returns": "on {date.content.date}"}]}))
    out = tmp_path / "stdio.json"
    command = [sys.executable, "-m", "mcp_testkit", "serve", "--stdio", "--scenario", str(scenario)]
    with anyio.fail_after(LIMIT_S):
        async with record(command=command, out=out) as proxy_url, _client(proxy_url, "legacy") as client:
            recorded = await client.call_tool("book", {})
    assert _text(recorded) == "on 2026-08-01"
    [call] = Cassette.load(out).calls("book")
    assert [(i["key"], i["answer"]) for i in call.inputs] == [
        ("elicit-1", {"action": "accept", "content": {"date": "2026-08-01"}})
    ]
    replay = TestMcpServer.from_cassette(out)
    seen: list[str] = []
    with anyio.fail_after(LIMIT_S):
        async with replay, _client(replay.url, "auto", seen=seen) as client:
            result = await client.call_tool("book", {})
    assert (_text(result), seen) == ("on 2026-08-01", ["Which date?"])
    replay.check()


async def test_a_cassette_written_without_inputs_links_them_when_loaded(tmp_path: Path) -> None:
    """A file written before `inputs` existed (the same exchanges, no `inputs` or `next_round`) still loads, and
    its rounds are linked from the messages; several requests of one round are asked together."""
    live = TestMcpServer("booking")

    @live.tool("book")
    async def book(arguments: dict[str, Any], ctx: ToolContext) -> str:
        from mcp_testkit.tools import Elicit, Sample

        both = await ctx.ask({"when": Elicit("Which date?", DATE), "note": Sample("Summarize", max_tokens=9)})
        return f"{both['when']['content']['date']} {both['note']['content']['text']}"

    out = tmp_path / "old.json"
    with anyio.fail_after(LIMIT_S):
        async with live, record(live.url, out=out) as proxy_url, _client(proxy_url, "auto") as client:
            await client.call_tool("book", {})
    data = json.loads(out.read_text())
    for exchange in data["exchanges"]:
        exchange.pop("inputs", None)
        exchange.pop("next_round", None)
    tape = Cassette.from_json(data, source="old.json")
    [call] = tape.calls("book")
    assert sorted((i["round"], i["key"]) for i in call.inputs) == [(1, "note"), (1, "when")]
    replay = TestMcpServer.from_cassette(tape)
    with anyio.fail_after(LIMIT_S):
        async with replay, _client(replay.url, "auto") as client:
            result = await client.call_tool("book", {})
    assert _text(result) == "2026-08-01 secret-note-42"
    replay.check()
