"""`mcp-testkit serve --stdio`: the SDK's stdio client, raw lines, stdio faults and the journal file."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, MCPError, StdioServerParameters

from ._support import LIMIT_S, STOP_TIMEOUT_S, command

pytestmark = pytest.mark.anyio

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}},
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def _call(request_id: int, tool: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
    params = {"name": tool, "arguments": arguments or {}}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def _scenario(tmp_path: Path, faults: list[dict[str, Any]] | None = None, **extra: Any) -> Path:
    path = tmp_path / "stdio.json"
    tools = [{"name": "hello", "returns": "hi"}, {"name": "write", "returns": "written"}]
    path.write_text(json.dumps({"name": "local", "tools": tools, "faults": faults or [], **extra}))
    return path


@pytest.fixture
def run_raw(tmp_path: Path) -> Iterator[Any]:
    """Runs `serve --stdio` with the given lines on stdin; returns (status, stdout lines, stderr, journal lines)."""
    processes: list[subprocess.Popen[bytes]] = []

    def run(lines: list[Any], *args: str) -> tuple[int, list[bytes], str, list[dict[str, Any]]]:
        journal = tmp_path / "stdio.jsonl"
        process = subprocess.Popen(
            command("--stdio", "--journal", str(journal), *args),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        processes.append(process)
        data = b"".join((line if isinstance(line, bytes) else json.dumps(line).encode()) + b"\n" for line in lines)
        out, err = process.communicate(data, timeout=LIMIT_S)
        records = [json.loads(line) for line in journal.read_text().splitlines()] if journal.exists() else []
        return process.returncode, out.splitlines(), err.decode(), records

    yield run
    for process in processes:
        if process.poll() is None:
            process.kill()
            process.wait(STOP_TIMEOUT_S)


def _params(tmp_path: Path, *args: str) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=["-m", "mcp_testkit", "serve", "--stdio", *args])


async def test_sdk_stdio_client_lists_and_calls(tmp_path: Path) -> None:
    """The SDK's stdio client starts `serve --stdio`, pages through the tools and calls one; one journal line each."""
    journal = tmp_path / "journal.jsonl"
    scenario = _scenario(tmp_path, page_size=1)
    params = _params(tmp_path, "--scenario", str(scenario), "--journal", str(journal))
    with anyio.fail_after(LIMIT_S):
        async with Client(params, mode="legacy") as client:
            first = await client.list_tools()
            second = await client.list_tools(cursor=first.next_cursor)
            result = await client.call_tool("hello", {})
    assert [t.name for t in (*first.tools, *second.tools)] == ["hello", "write"]
    assert result.content[0].text == "hi"  # type: ignore[union-attr]
    lines = [json.loads(line) for line in journal.read_text().splitlines()]
    methods = [line["rpc_method"] for line in lines]
    assert methods == ["initialize", "notifications/initialized", "tools/list", "tools/list", "tools/call"]
    assert {line["session_id"] for line in lines[1:]} == {lines[0]["session_id"]}
    assert lines[-1]["executed"] is True


async def test_sdk_stdio_client_in_auto_mode_falls_back_to_initialize(tmp_path: Path) -> None:
    """In auto mode the SDK probes server/discover over stdio, gets -32601 and initializes."""
    with anyio.fail_after(LIMIT_S):
        async with Client(_params(tmp_path, "--preset", "demo"), mode="auto") as client:
            result = await client.call_tool("close_ticket", {"id": 7})
    assert result.content[0].text == "closed ticket #7"  # type: ignore[union-attr]


async def test_sdk_stdio_client_meets_answer_faults(tmp_path: Path) -> None:
    """ErrorResult, ProtocolError and Delay rules act over stdio as over HTTP."""
    faults = [
        {"fault": {"type": "ErrorResult", "text": "scripted"}, "tool": "hello"},
        {"fault": {"type": "ProtocolError", "code": -32001, "message": "refused"}, "tool": "hello"},
        {"fault": {"type": "Delay", "seconds": 0.01}, "tool": "hello"},
    ]
    params = _params(tmp_path, "--scenario", str(_scenario(tmp_path, faults)))
    with anyio.fail_after(LIMIT_S):
        async with Client(params, mode="legacy") as client:
            first = await client.call_tool("hello", {})
            with pytest.raises(MCPError, match="refused"):
                await client.call_tool("hello", {})
            third = await client.call_tool("hello", {})
    assert first.is_error
    assert first.content[0].text == "scripted"
    assert third.content[0].text == "hi"  # type: ignore[union-attr]


def test_stdout_carries_protocol_messages_only(run_raw: Any, tmp_path: Path) -> None:
    """A print() in a Python scenario goes to stderr; every stdout line is a JSON-RPC message."""
    scenario = tmp_path / "noisy.py"
    scenario.write_text(
        "print('loading the scenario')\n"
        "def scenario(server):\n"
        "    print('scripting the server')\n"
        "    server.tool('noisy', returns=lambda arguments: print('tool ran') or 'done')\n"
    )
    status, out, err, _ = run_raw([INIT, INITIALIZED, _call(2, "noisy")], "--scenario", str(scenario))
    assert status == 0
    messages = [json.loads(line) for line in out]
    assert [m["id"] for m in messages] == [1, 2]
    assert messages[1]["result"]["content"][0]["text"] == "done"
    assert "loading the scenario" in err
    assert "scripting the server" in err
    assert "tool ran" in err
    assert "serving 'test' over stdio" in err


def test_bad_lines_get_json_rpc_errors_and_the_server_goes_on(run_raw: Any, tmp_path: Path) -> None:
    """A non-JSON line, a non-JSON-RPC line and a request before initialize each get an error; then it serves."""
    lines = [b"{oops", {"id": 5}, _call(6, "hello"), INIT, _call(2, "hello")]
    status, out, _, journal = run_raw(lines, "--scenario", str(_scenario(tmp_path)))
    messages = [json.loads(line) for line in out]
    assert status == 0
    assert [(m["id"], m.get("error", {}).get("code")) for m in messages] == [
        (None, -32700),
        (5, -32600),
        (6, -32600),
        (1, None),
        (2, None),
    ]
    assert "send initialize before tools/call" in messages[2]["error"]["message"]
    assert [record["error"] is not None for record in journal] == [True, True, True, False, False]


def test_malformed_line_fault(run_raw: Any, tmp_path: Path) -> None:
    """MalformedLine runs the call, then writes a line that is not JSON in place of its answer."""
    scenario = _scenario(tmp_path, [{"fault": {"type": "MalformedLine"}, "method": "tools/call"}])
    status, out, _, journal = run_raw([INIT, _call(2, "write"), _call(3, "write")], "--scenario", str(scenario))
    assert status == 0
    assert out[1] == b"{this line is not JSON"
    assert json.loads(out[2])["id"] == 3
    assert [r["executed"] for r in journal if r["rpc_method"] == "tools/call"] == [True, True]


def test_truncate_body_fault_writes_half_a_line(run_raw: Any, tmp_path: Path) -> None:
    """TruncateBody over stdio writes the first half of the answer's line."""
    scenario = _scenario(tmp_path, [{"fault": {"type": "TruncateBody"}, "method": "tools/call"}])
    _, out, _, _ = run_raw([INIT, _call(2, "hello")], "--scenario", str(scenario))
    with pytest.raises(ValueError, match=r"Unterminated|Expecting"):
        json.loads(out[1])


@pytest.mark.parametrize(("after_execution", "executed"), [(False, 0), (True, 1)])
def test_exit_fault_ends_the_process_mid_call(
    run_raw: Any, tmp_path: Path, after_execution: bool, executed: int
) -> None:
    """Exit ends the process with its status, without an answer, the call run first only with after_execution."""
    rule = {"fault": {"type": "Exit", "code": 3, "after_execution": after_execution}, "method": "tools/call"}
    scenario = _scenario(tmp_path, [rule])
    status, out, err, journal = run_raw([INIT, _call(2, "write"), _call(3, "write")], "--scenario", str(scenario))
    assert status == 3
    assert [json.loads(line)["id"] for line in out] == [1]
    assert "exiting with status 3 (Exit fault)" in err
    calls = [r for r in journal if r["rpc_method"] == "tools/call"]
    assert len(calls) == 1
    assert "exited with status 3" in calls[0]["error"]
    assert calls[0]["fault"] == rule["fault"]
    assert sum(1 for r in calls if r["executed"]) == executed


def test_crash_fault_kills_the_process_before_answering(run_raw: Any, tmp_path: Path) -> None:
    """Crash dies by SIGKILL without answering; its journal line is written first."""
    scenario = _scenario(tmp_path, [{"fault": {"type": "Crash"}, "tool": "write"}])
    status, out, _, journal = run_raw([INIT, _call(2, "hello"), _call(3, "write")], "--scenario", str(scenario))
    assert status == -signal.SIGKILL
    assert [json.loads(line)["id"] for line in out] == [1, 2]
    assert journal[-1]["tool"] == "write"
    assert "crashed" in journal[-1]["error"]


def test_http_faults_are_refused_over_stdio(run_raw: Any, tmp_path: Path) -> None:
    """A scenario fault that means nothing over stdio (an HTTP status) stops the start, naming it."""
    scenario = _scenario(tmp_path, [{"fault": {"type": "HttpStatus", "status": 503}}])
    status, out, err, _ = run_raw([INIT], "--scenario", str(scenario))
    assert status == 2
    assert out == []
    assert "HttpStatus means nothing over stdio" in err


def test_admin_is_refused_over_stdio(run_raw: Any) -> None:
    """--admin with --stdio is refused: the admin API needs HTTP."""
    status, out, err, _ = run_raw([], "--admin")
    assert (status, out) == (2, [])
    assert "--admin needs HTTP" in err


def test_sigterm_stops_a_stdio_server(tmp_path: Path) -> None:
    """SIGTERM ends a stdio server that waits for input, with status 0."""
    process = subprocess.Popen(
        command("--stdio", "--preset", "demo"), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        assert process.stdin is not None
        assert process.stdout is not None
        process.stdin.write(json.dumps(INIT).encode() + b"\n")
        process.stdin.flush()
        assert json.loads(process.stdout.readline())["id"] == 1
        process.send_signal(signal.SIGTERM)
        assert process.wait(STOP_TIMEOUT_S) == 0
    finally:
        if process.poll() is None:
            process.kill()
        process.communicate(timeout=STOP_TIMEOUT_S)
