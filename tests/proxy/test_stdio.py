"""The chaos proxy in front of a stdio server written here, that crashes or writes stray lines on a given call: a
process that exits ends its session (404 next, its slot free at once, the journal saying how it ended), and a line
on stdout that is not JSON-RPC is journaled, never sent to the client as a message. Over real sockets."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import httpx2
import pytest

from mcp_testkit.proxy import ChaosProxy
from mcp_testkit.standalone._admin import ProxyAdminApp

from ._wire import ACCEPT, messages, open_session, request

LIMIT_S = 60.0
TOKEN = "admin-token"
SERVER = """
import json, os, sys
for line in sys.stdin:
    message = json.loads(line)
    method, name = message.get("method"), (message.get("params") or {}).get("name")
    if "id" not in message:
        continue
    if method == "initialize":
        result = {"protocolVersion": message["params"]["protocolVersion"], "capabilities": {"tools": {}},
                  "serverInfo": {"name": "crashy", "version": "1"}}
    elif method == "tools/call" and name == "crash":
        print("RuntimeError: the database is gone", file=sys.stderr, flush=True)
        sys.exit(4)
    elif method == "tools/call" and name == "chatty":
        print("hello, not json", flush=True)
        print("{NaN", flush=True)
        result = {"content": [{"type": "text", "text": "chatted"}]}
    elif method == "tools/call" and name == "leave":
        import subprocess
        subprocess.Popen(["sleep", "30"], stdin=subprocess.DEVNULL)  # holds the server's stdout open after it exits
        result = {"content": [{"type": "text", "text": str(os.getpid())}]}
        print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)
        os._exit(0)
    elif method == "tools/call" and name == "jsonish":
        for line in ['5', '"a string"', '[]', '{"level": "info"}', '{"jsonrpc": "2.0", "method": 5}',
                     '[{"jsonrpc": "2.0", "id": 1, "result": {}}]']:
            print(line, flush=True)
        result = {"content": [{"type": "text", "text": "jsonish"}]}
    elif method == "tools/call":
        result = {"content": [{"type": "text", "text": "ran " + name}]}
    else:
        result = {}
    print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)
"""


@pytest.fixture
def command(tmp_path: Path) -> list[str]:
    script = tmp_path / "crashy.py"
    script.write_text(SERVER)
    return [sys.executable, str(script)]


def _call(client: httpx2.Client, url: str, session: str, tool: str, request_id: int = 1) -> httpx2.Response:
    return request(client, url, session, "tools/call", {"name": tool, "arguments": {}}, request_id)


def _in_thread(work: Any) -> Any:
    async def go() -> Any:
        with anyio.fail_after(LIMIT_S):
            return await anyio.to_thread.run_sync(work)

    return anyio.run(go)


def test_two_crashed_sessions_free_their_slots(command: list[str]) -> None:
    """With max_processes 2, two sessions whose process crashed during a call hold no slot: a third initialize
    succeeds (not 503), and its session serves."""

    def work() -> None:
        with ChaosProxy(upstream_command=command, max_processes=2) as proxy, httpx2.Client(timeout=LIMIT_S) as http:
            for _ in range(2):
                session = open_session(http, proxy.url)
                crashed = _call(http, proxy.url, session, "crash")
                assert crashed.json()["error"]["code"] == -32603
            third = open_session(http, proxy.url)
            assert _call(http, proxy.url, third, "echo").json()["result"]["content"][0]["text"] == "ran echo"

    _in_thread(work)


def test_a_crashed_session_answers_404_and_the_journal_says_how_it_ended(command: list[str]) -> None:
    """The call during which the process exited gets its JSON-RPC error; the session's next request gets 404, and
    both records say the process exited with status 4, quoting its stderr."""

    def work() -> None:
        with ChaosProxy(upstream_command=command) as proxy, httpx2.Client(timeout=LIMIT_S) as http:
            session = open_session(http, proxy.url)
            crashed = _call(http, proxy.url, session, "crash")
            assert _call(http, proxy.url, session, "echo", 2).status_code == 404
            assert request(http, proxy.url, session, "ping", request_id=3).status_code == 404
            assert "exit status 4" in crashed.json()["error"]["message"]  # its JSON-RPC error, as before
            first, second = proxy.journal.requests("tools/call")
            said = "stdio server process exited with status 4: RuntimeError: the database is gone"
            assert said in (first.error or "")
            assert (second.status, said in (second.error or "")) == (404, True)

    _in_thread(work)


def test_a_line_that_is_not_json_rpc_never_reaches_the_client(command: list[str]) -> None:
    """A server that writes two lines that are not JSON-RPC before its answer: the client gets the answer alone, and
    the record says what was kept out; the admin API's journal is strict JSON."""

    def work() -> None:
        proxy = ChaosProxy(upstream_command=command)
        proxy.start(ProxyAdminApp(proxy, TOKEN))
        try:
            with httpx2.Client(timeout=LIMIT_S) as http:
                session = open_session(http, proxy.url)
                answered = _call(http, proxy.url, session, "chatty")
                assert answered.status_code == 200
                assert messages(answered) == [
                    {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "chatted"}]}}
                ]
                [record] = proxy.journal.requests("tools/call")
                assert "wrote 2 lines on stdout that are not JSON-RPC" in (record.error or "")
                assert "'{NaN'" in (record.error or "")
                journal = http.get(f"{proxy.base_url}/_testkit/journal", headers={"authorization": f"Bearer {TOKEN}"})
                kept = json.loads(journal.text, parse_constant=_refuse)
                assert [r["error"] for r in kept["records"] if r.get("tool") == "chatty"] == [record.error]
        finally:
            proxy.stop()

    _in_thread(work)


def test_a_json_line_that_is_no_json_rpc_message_never_reaches_the_client(command: list[str]) -> None:
    """Lines that are JSON but no JSON-RPC message (a number, a string, an array, an object without a method or an
    id, a batch) are kept out as every line that is not JSON-RPC is: the client gets the answer alone, as JSON."""

    def work() -> None:
        with ChaosProxy(upstream_command=command) as proxy, httpx2.Client(timeout=LIMIT_S) as http:
            session = open_session(http, proxy.url)
            answered = _call(http, proxy.url, session, "jsonish")
            assert (answered.status_code, answered.headers["content-type"]) == (200, "application/json")
            assert messages(answered) == [
                {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "jsonish"}]}}
            ]
            [record] = proxy.journal.calls("jsonish")
            assert "wrote 6 lines on stdout that are not JSON-RPC" in (record.error or "")

    _in_thread(work)


def test_a_process_that_exited_ends_its_session_while_its_stdout_is_still_open(command: list[str]) -> None:
    """A server that answers, then exits leaving a child that holds its stdout: the next request of the session is
    404 at once, as after any exit (not a -32603 for a request written to a process that is gone), its record
    saying the process exited."""

    def work() -> None:
        with ChaosProxy(upstream_command=command) as proxy, httpx2.Client(timeout=LIMIT_S) as http:
            session = open_session(http, proxy.url)
            left = _call(http, proxy.url, session, "leave")
            _wait_exited(int(left.json()["result"]["content"][0]["text"]))
            later = request(http, proxy.url, session, "ping", request_id=2)
            assert later.status_code == 404, later.text
            assert "stdio server process exited with status 0" in (proxy.journal.last.error or "")

    _in_thread(work)


def _wait_exited(pid: int) -> None:
    """Wait (at most `LIMIT_S`) until process `pid` has exited: gone, or a zombie its parent has not reaped."""
    deadline = time.monotonic() + LIMIT_S
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
        except OSError:
            return
        if state in ("Z", "X"):
            return
        time.sleep(0.01)
    raise AssertionError(f"process {pid} did not exit within {LIMIT_S:g} s")


def _refuse(name: str) -> Any:
    raise AssertionError(f"{name} in what claims to be JSON")


def test_the_shared_process_of_2026_07_28_is_started_again_after_it_exits(command: list[str]) -> None:
    """Stateless requests share one process: once it crashed, the next request starts a new one (not an error for
    every request after), and the crashed call's record says how the process ended."""
    stateless = {"mcp-protocol-version": "2026-07-28"}

    def call(http: httpx2.Client, url: str, tool: str, request_id: int) -> httpx2.Response:
        message = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": {"name": tool}}
        return http.post(url, json=message, headers={**ACCEPT, **stateless})

    def work() -> None:
        with ChaosProxy(upstream_command=command, max_processes=1) as proxy, httpx2.Client(timeout=LIMIT_S) as http:
            assert call(http, proxy.url, "crash", 1).json()["error"]["code"] == -32603
            answered = call(http, proxy.url, "echo", 2)
            assert answered.json()["result"]["content"][0]["text"] == "ran echo", answered.text
            crashed = proxy.journal.calls("crash")[0]
            assert "stdio server process exited with status 4" in (crashed.error or "")

    _in_thread(work)
