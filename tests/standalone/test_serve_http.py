"""`mcp-testkit serve` over HTTP as a real subprocess: the SDK client, scenarios, the journal file, shutdown."""

from __future__ import annotations

import json
import signal
from collections.abc import Callable
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp import Client, MCPError
from mcp.client.streamable_http import streamable_http_client

from ._support import LIMIT_S, Served, journal_lines, run_refused

pytestmark = pytest.mark.anyio

SCENARIO = {
    "name": "paged",
    "page_size": 2,
    "tools": [
        {"name": "one", "returns": "1"},
        {"name": "two", "annotations": {"readOnlyHint": True}, "answers": ["first", {"error": "second failed"}]},
        {"name": "three", "returns": {"structured": {"n": 3}}},
    ],
    "faults": [{"fault": {"type": "ProtocolError", "code": -32000, "message": "scripted"}, "tool": "one"}],
}


def _journal_lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


async def test_sdk_client_lists_and_calls_the_demo_preset(serve: Callable[..., Served]) -> None:
    """The SDK Client connects to `serve --preset demo`, lists its tools and calls one."""
    served = serve("--preset", "demo")
    with anyio.fail_after(LIMIT_S):
        async with Client(served.url, mode="legacy") as client:
            listed = await client.list_tools()
            result = await client.call_tool("create_ticket", {"title": "printer on fire"})
    assert "create_ticket" in [tool.name for tool in listed.tools]
    assert result.content[0].text == "opened ticket #1: printer on fire"  # type: ignore[union-attr]


async def test_json_scenario_pages_answers_and_faults(serve: Callable[..., Served], tmp_path: Path) -> None:
    """A JSON scenario's page size, per-call answers, structured answer and fault rule all reach the client."""
    scenario = tmp_path / "paged.json"
    scenario.write_text(json.dumps(SCENARIO))
    served = serve("--scenario", str(scenario))
    assert "serving 'paged'" in served.line
    with anyio.fail_after(LIMIT_S):
        async with Client(served.url, mode="legacy") as client:
            first = await client.list_tools()
            second = await client.list_tools(cursor=first.next_cursor)
            with pytest.raises(MCPError, match="scripted"):
                await client.call_tool("one", {})
            again = await client.call_tool("one", {})
            answers = [await client.call_tool("two", {}) for _ in range(2)]
            structured = await client.call_tool("three", {})
    assert [t.name for t in first.tools] == ["one", "two"]
    assert [t.name for t in second.tools] == ["three"]
    assert second.next_cursor is None
    assert first.tools[1].annotations is not None
    assert first.tools[1].annotations.read_only_hint is True
    assert again.content[0].text == "1"  # type: ignore[union-attr]
    assert [a.is_error for a in answers] == [False, True]
    assert structured.structured_content == {"n": 3}


async def test_python_scenario_has_the_whole_api(serve: Callable[..., Served], tmp_path: Path) -> None:
    """A Python scenario's `scenario(server)` and `server_options` script the served server."""
    scenario = tmp_path / "tickets.py"
    scenario.write_text(
        "from mcp_testkit import faults\n"
        "server_options = {'name': 'py-tickets'}\n"
        "def scenario(server):\n"
        "    @server.tool('add', input_schema={'type': 'object', 'properties': {'a': {'type': 'integer'},"
        " 'b': {'type': 'integer'}}, 'required': ['a', 'b']})\n"
        "    def add(arguments):\n"
        "        return str(arguments['a'] + arguments['b'])\n"
        "    server.inject(faults.ErrorResult('scripted failure'), tool='add', nth=2)\n"
    )
    served = serve("--scenario", str(scenario))
    assert "serving 'py-tickets'" in served.line
    with anyio.fail_after(LIMIT_S):
        async with Client(served.url, mode="legacy") as client:
            results = [await client.call_tool("add", {"a": 2, "b": n}) for n in (3, 4, 5)]
    assert [r.content[0].text for r in results] == ["5", "scripted failure", "7"]  # type: ignore[union-attr]


async def test_journal_file_grows_while_the_server_runs(serve: Callable[..., Served], tmp_path: Path) -> None:
    """--journal appends one redacted JSON line per request as each finishes, before the server stops."""
    journal = tmp_path / "journal.jsonl"
    scenario = tmp_path / "secret.json"
    scenario.write_text(
        json.dumps(
            {"tools": [{"name": "t", "returns": "ok"}], "required_headers": [{"name": "X-Api-Key", "value": "s3cret"}]}
        )
    )
    served = serve("--scenario", str(scenario), "--journal", str(journal))
    http = httpx2.AsyncClient(headers={"X-Api-Key": "s3cret"})
    with anyio.fail_after(LIMIT_S):
        async with http, Client(streamable_http_client(served.url, http_client=http), mode="legacy") as client:
            await client.call_tool("t", {})
            lines = await journal_lines(
                journal, lambda lines: any(line["rpc_method"] == "tools/call" for line in lines)
            )
            assert served.process.poll() is None
    assert lines[0]["rpc_method"] == "initialize"
    assert all(line["headers"]["x-api-key"] == "***" for line in lines)  # type: ignore[index]
    assert "s3cret" not in journal.read_text()


async def test_sigterm_stops_cleanly_with_the_journal_flushed(serve: Callable[..., Served], tmp_path: Path) -> None:
    """SIGTERM ends a server a client is connected to with status 0, every journal line written."""
    journal = tmp_path / "journal.jsonl"
    served = serve("--preset", "demo", "--get-stream", "--journal", str(journal))
    with anyio.fail_after(LIMIT_S):
        async with Client(served.url, mode="legacy") as client:
            await client.list_tools()
            status = await anyio.to_thread.run_sync(served.stop, signal.SIGTERM)
    assert status == 0
    assert "mcp-testkit: stopped" in served.stderr
    methods = [line["rpc_method"] or line["http_method"] for line in _journal_lines(journal)]
    assert methods[:3] == ["initialize", "notifications/initialized", "tools/list"]


def test_sigint_stops_cleanly(serve: Callable[..., Served]) -> None:
    """SIGINT (Ctrl-C) ends the server with status 0."""
    served = serve("--preset", "demo")
    assert served.stop(signal.SIGINT) == 0


def test_a_non_loopback_host_is_refused_without_allow_remote() -> None:
    """--host 0.0.0.0 is refused with a reason and status 2 unless --allow-remote is given."""
    result = run_refused("--host", "0.0.0.0")
    assert result.returncode == 2
    assert "refusing to bind '0.0.0.0'" in result.stderr
    assert "--allow-remote" in result.stderr
    assert result.stdout == ""


def test_allow_remote_serves_and_says_what_it_exposes(serve: Callable[..., Served]) -> None:
    """With --allow-remote a non-loopback host is served, with a warning naming what it exposes."""
    served = serve("--host", "0.0.0.0", "--allow-remote", "--admin")
    assert served.url.startswith("http://0.0.0.0:")
    assert "any host that reaches it can list and call the scripted tools" in served.stderr
    assert "admin API" in served.stderr


@pytest.mark.parametrize(
    ("content", "suffix", "expected"),
    [
        (
            '{"tools": [{"name": "t", "annotations": {"readOnlyHint": "yes"}}]}',
            ".json",
            "tools/0/annotations/readOnlyHint: ",  # the path is ours; the rest is jsonschema's wording
        ),
        (
            '{"faults": [{"fault": {"type": "Drop", "after": true}}]}',
            ".json",
            "faults/0/fault: ",
        ),
        ('{"tools": [', ".json", "not valid JSON"),
        ("def setup(server):\n    pass\n", ".py", "defines no function scenario(server)"),
        ("def scenario(server):\n    server.tool('bad name!')\n", ".py", "line 2: ValueError: tool name 'bad name!'"),
        ("tools: []\n", ".yaml", "a scenario is a .py file defining scenario(server) or a .json file"),
    ],
)
def test_bad_scenario_files_are_refused_naming_the_problem(
    tmp_path: Path, content: str, suffix: str, expected: str
) -> None:
    """A bad scenario file stops the start with status 2 and a message naming the file and the bad field."""
    scenario = tmp_path / f"bad{suffix}"
    scenario.write_text(content)
    result = run_refused("--scenario", str(scenario))
    assert result.returncode == 2
    assert expected in result.stderr
    assert str(scenario) in result.stderr


def test_a_stdio_only_fault_is_refused_over_http(tmp_path: Path) -> None:
    """A scenario with a fault that means something only over stdio is refused when serving HTTP."""
    scenario = tmp_path / "exit.json"
    scenario.write_text('{"faults": [{"fault": {"type": "Exit", "code": 3}}]}')
    result = run_refused("--scenario", str(scenario))
    assert result.returncode == 2
    assert "Exit means something only over stdio" in result.stderr


def test_get_without_a_get_stream_names_the_serve_option(serve: Callable[..., Served]) -> None:
    """Under `serve`, the 405 to a GET names `--get-stream`, the option that opens one, not the Python argument."""
    served = serve("--preset", "demo")
    refused = httpx2.get(served.url, headers={"Accept": "text/event-stream"}, timeout=LIMIT_S)
    assert refused.status_code == 405
    message = refused.json()["error"]["message"]
    assert message == "this server offers no GET stream (mcp-testkit serve --get-stream opens one)"
@pytest.mark.parametrize(
    ("arguments", "version"),
    [((), "2026-07-28"), (("--era", "handshake"), "2025-11-25"), (("--era", "stateless"), "2026-07-28")],
    ids=["both", "handshake", "stateless"],
)
async def test_era_option_chooses_what_an_auto_client_lands_on(
    serve: Callable[..., Served], arguments: tuple[str, ...], version: str
) -> None:
    """`serve` speaks both eras by default; `--era` limits it, and the SDK client in auto mode follows."""
    served = serve("--preset", "demo", *arguments)
    with anyio.fail_after(LIMIT_S):
        async with Client(served.url, mode="auto") as client:
            assert client.protocol_version == version
            assert (await client.call_tool("search_tickets", {"q": "x"})).is_error is False


async def test_json_scenario_names_its_eras(serve: Callable[..., Served], tmp_path: Path) -> None:
    """A JSON scenario's `eras` reaches the server: a legacy client is refused by a stateless-only one."""
    scenario = tmp_path / "modern.json"
    scenario.write_text(
        json.dumps({"name": "modern", "eras": ["stateless"], "tools": [{"name": "one", "returns": "1"}]})
    )
    served = serve("--scenario", str(scenario))
    refused = pytest.RaisesExc(MCPError, check=lambda error: error.code == -32022)
    with anyio.fail_after(LIMIT_S), pytest.RaisesGroup(refused, flatten_subgroups=True):
        async with Client(served.url, mode="legacy"):
            pass


async def test_resumable_option_primes_streams_and_a_scenario_breaks_one(
    serve: Callable[..., Served], tmp_path: Path
) -> None:
    """`serve --resumable --retry-ms`: a JSON scenario's BreakStream breaks a call's stream after the priming
    event, and the SDK client resumes it with Last-Event-ID; the tool ran once."""
    scenario = tmp_path / "breaks.json"
    rule = {"fault": {"type": "BreakStream", "after_events": 1}, "tool": "one"}
    scenario.write_text(json.dumps({"name": "breaks", "tools": [{"name": "one", "returns": "1"}], "faults": [rule]}))
    journal = tmp_path / "journal.jsonl"
    served = serve(
        "--scenario", str(scenario), "--response-mode", "sse", "--resumable", "--retry-ms", "20",
        "--era", "handshake", "--journal", str(journal),
    )
    with anyio.fail_after(LIMIT_S):
        async with Client(served.url, mode="legacy") as client:
            result = await client.call_tool("one", {})
    assert result.content[0].text == "1"  # type: ignore[union-attr]
    lines = _journal_lines(journal)
    [call] = [line for line in lines if line["rpc_method"] == "tools/call"]
    [resume] = [line for line in lines if "last-event-id" in line["headers"]]  # type: ignore[operator]
    assert call["executed"] is True
    assert str(call["error"]).startswith("SSE stream broken by a fault after 1 event")
    assert resume["status"] == 200


def test_the_stateless_era_over_stdio_is_refused() -> None:
    """`serve --stdio --era stateless` stops at once, saying the stdio server speaks the handshake era only."""
    refused = run_refused("--stdio", "--era", "stateless")
    assert refused.returncode == 2
    assert "--era stateless needs HTTP" in refused.stderr
