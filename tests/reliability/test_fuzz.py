"""The fake never falls over: thousands of malformed requests over a socket, lines over stdio, admin bodies.

Each HTTP request must get a status under 500 and be journaled with exactly the status sent; each
stdio line must leave the server answering; each mutated admin body gets a 2xx or a 4xx naming the
problem, never a 5xx or a traceback, while another session's pings are each answered within 2 s;
afterwards all still serve. Raise the counts with MCP_TESTKIT_FUZZ_HTTP, MCP_TESTKIT_FUZZ_STDIO and
MCP_TESTKIT_FUZZ_ADMIN (defaults: 2,000 requests, 500 lines, 300 admin bodies).
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from mcp_testkit import TestMcpServer

from ._malformed import LIVE, MAX_BODY, http_requests, stdio_lines
from ._support import ACCEPT, LATEST, LIMIT_S, STDIO_INIT, exchange, http_request, initialize, ping, serve_command

HTTP_REQUESTS = int(os.environ.get("MCP_TESTKIT_FUZZ_HTTP", "2000"))
STDIO_LINES = int(os.environ.get("MCP_TESTKIT_FUZZ_STDIO", "500"))
ADMIN_BODIES = int(os.environ.get("MCP_TESTKIT_FUZZ_ADMIN", "300"))
STALL_S = 2.0
"""The longest another session's ping may wait: a liveness bound (under anyio.fail_after), not a benchmark. At
0.5 s one ping in a full run of four workers on two cores waited longer, with no body of its own to blame."""
_SETTINGS = {
    "deadline": None,
    "database": None,
    "suppress_health_check": list(HealthCheck),
    # Every example is a request sent to one live server: shrinking would replay them against a changed one.
    "phases": [Phase.generate],
}
PATTERN_SCHEMA = {"type": "object", "properties": {"s": {"type": "string", "pattern": "^(a|a)+$"}}}
DEFS_SCHEMA = {
    "type": "object",
    "$defs": {"n": {"type": "integer", "minimum": 0}},
    "properties": {"n": {"$ref": "#/$defs/n"}},
    "additionalProperties": False,
}


def _fuzzed_server() -> TestMcpServer:
    server = TestMcpServer("fuzzed", max_body=MAX_BODY, allow_delete=True)
    server.tool("echo", returns=lambda arguments: json.dumps(arguments))
    server.tool("match", input_schema=PATTERN_SCHEMA, returns="matched")
    server.tool("defs", input_schema=DEFS_SCHEMA, returns="ok")
    return server


@pytest.fixture(scope="module")
def fuzzed() -> Iterator[TestMcpServer]:
    server = _fuzzed_server()
    with server:
        yield server


# Examples carry bodies over max_body on purpose; Hypothesis warns that their repr is large.
LARGE_REPR = "ignore:Generating overly large repr:hypothesis.errors.HypothesisWarning"


@pytest.mark.filterwarnings(LARGE_REPR)
def test_malformed_http_requests_never_break_the_server(fuzzed: TestMcpServer) -> None:
    """Every malformed request gets a status under 500, is journaled with that status, and the server serves on."""
    server = fuzzed
    port = server.port
    sent: list[int] = []
    live = {"id": initialize(port)}

    @settings(max_examples=HTTP_REQUESTS, **_SETTINGS)
    @given(request=http_requests(port))
    def one(request: tuple[str, str, list[tuple[str, str]], bytes]) -> None:
        method, path, headers, body = request
        if server.sessions.get(live["id"]) is None:  # a DELETE or a re-initialize ended it
            live["id"] = initialize(port)
        headers = [(name, live["id"] if value == LIVE else value) for name, value in headers]
        before = len(server.journal)
        reply = exchange(port, http_request(method, path, headers, body))
        sent.append(reply.status)
        assert reply.status < 500, (request, reply)
        assert len(server.journal) == before + 1
        record = server.journal.last
        assert record.status == reply.status, (record, reply)

    one()
    assert len(sent) >= HTTP_REQUESTS
    assert server.errors == []
    server.check()
    assert ping(port, initialize(port))["result"] == {}


class _StdioProcess:
    """`serve --stdio` fed line by line; answers read by a thread into a queue."""

    def __init__(self, journal: Path) -> None:
        self.process = subprocess.Popen(
            serve_command("--stdio", "--journal", str(journal), "--max-body", str(MAX_BODY)),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.answers: queue.Queue[bytes] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.answers.put(line)

    def send(self, line: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line + b"\n")
        self.process.stdin.flush()

    def answer_to(self, request_id: int | str) -> dict[str, object]:
        """Read answers until the one to `request_id`; every line read must be a JSON-RPC message."""
        while True:
            message = json.loads(self.answers.get(timeout=LIMIT_S))
            assert message.get("jsonrpc") == "2.0", message
            if message.get("id") == request_id:
                return message  # type: ignore[no-any-return]

    def close(self) -> tuple[int, str]:
        assert self.process.stdin is not None
        assert self.process.stderr is not None
        self.process.stdin.close()
        code = self.process.wait(LIMIT_S)
        stderr = self.process.stderr.read().decode(errors="replace")
        self._reader.join(LIMIT_S)
        assert self.process.stdout is not None
        self.process.stdout.close()
        self.process.stderr.close()
        return code, stderr


@pytest.mark.filterwarnings(LARGE_REPR)
def test_malformed_stdio_lines_never_break_the_server(tmp_path: Path) -> None:
    """Every malformed stdio line leaves the server answering; it exits 0 at end of input, each line journaled."""
    journal = tmp_path / "journal.jsonl"
    stdio = _StdioProcess(journal)
    sent = {"lines": 0, "pings": 0}
    try:
        stdio.send(json.dumps(STDIO_INIT).encode())
        assert "result" in stdio.answer_to(1)

        @settings(max_examples=STDIO_LINES, **_SETTINGS)
        @given(line=stdio_lines)
        def one(line: bytes) -> None:
            assert stdio.process.poll() is None, "the stdio server exited"
            stdio.send(line)
            sent["lines"] += bool(line.strip())
            sent["pings"] += 1
            request_id = f"ping-after-line-{sent['pings']}"  # no generated line has an id this long
            stdio.send(json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "ping"}).encode())
            answer = stdio.answer_to(request_id)
            assert "result" in answer, (line[:200], answer)

        one()
    finally:
        code, stderr = stdio.close()
    assert code == 0, stderr
    assert "Traceback" not in stderr
    assert sent["pings"] >= STDIO_LINES
    records = [json.loads(line) for line in journal.read_text().splitlines()]
    assert len(records) == 1 + sent["lines"] + sent["pings"]


# -- the admin API ---------------------------------------------------------------------------------------------------

_TOKEN = "fuzz-token"
_LOOKUP = {
    "name": "lookup",
    "inputSchema": {"type": "object", "properties": {"q": {"type": "string", "maxLength": 9}}},
    "annotations": {"readOnlyHint": True},
    "answers": ["found", {"structured": {"n": 1}}, {"error": "busy"}],
}
_RULE = {"fault": {"type": "ErrorResult", "text": "busy"}, "tool": "lookup", "times": 2}
ADMIN_SEEDS = {  # only what cannot touch a ping: tools, and faults of tools/call
    "tools": _LOOKUP,
    "faults": [_RULE, {**_RULE, "times": 1}],
    "scenario": {"tools": [_LOOKUP, {"name": "write", "returns": "done"}], "faults": [_RULE]},
}


def _pinger(url: str, session: str, stop: threading.Event, seen: dict[str, list[str]]) -> None:
    """Ping on `session` until `stop`, each under STALL_S: a stall or a wrong answer is noted in `seen`."""
    import anyio
    import httpx2

    headers = {"accept": ACCEPT, "mcp-session-id": session, "mcp-protocol-version": LATEST}

    async def pings() -> None:
        async with httpx2.AsyncClient(timeout=LIMIT_S) as client:
            while not stop.is_set():
                try:
                    with anyio.fail_after(STALL_S):
                        answer = await client.post(url, json={"jsonrpc": "2.0", "id": 7, "method": "ping"},
                                                   headers=headers)  # fmt: skip
                except TimeoutError:
                    seen["stalls"].append(f"a ping waited over {STALL_S} s")
                    continue
                if answer.status_code != 200 or answer.json().get("result") != {}:
                    seen["stalls"].append(f"a ping got {answer.status_code} {answer.text[:200]}")
                seen["pings"].append("")

    anyio.run(pings)


@pytest.mark.filterwarnings(LARGE_REPR)
def test_mutated_admin_bodies_never_break_the_server_or_stall_a_session() -> None:
    """Every mutated admin body (tools, faults, scenario) gets a 2xx or a one-line 4xx JSON error, never a 5xx or
    a traceback, and another session's pings are each answered within 2 s meanwhile."""
    import httpx2

    from mcp_testkit.standalone._admin import AdminApp

    from ._mutation import mutated_text

    server = TestMcpServer("admin-fuzz", max_body=MAX_BODY)
    server.asgi_app = AdminApp(server, _TOKEN)  # type: ignore[assignment]
    statuses: list[int] = []
    seen: dict[str, list[str]] = {"stalls": [], "pings": []}
    stop = threading.Event()
    with server, httpx2.Client(base_url=f"{server.base_url}/_testkit", timeout=LIMIT_S) as admin:
        pinger = threading.Thread(target=_pinger, args=(server.url, initialize(server.port), stop, seen))
        pinger.start()
        try:

            @settings(max_examples=ADMIN_BODIES, **_SETTINGS)
            @given(endpoint=st.sampled_from(sorted(ADMIN_SEEDS)), data=st.data())
            def one(endpoint: str, data: st.DataObject) -> None:
                body = data.draw(mutated_text(ADMIN_SEEDS[endpoint]))
                headers = {"authorization": f"Bearer {_TOKEN}", "content-type": "application/json"}
                reply = admin.post(f"/{endpoint}", content=body.encode("utf-8", "surrogatepass"), headers=headers)
                statuses.append(reply.status_code)
                assert reply.status_code < 500, (body[:300], reply.text[:500])
                assert "Traceback" not in reply.text
                if reply.status_code >= 400:
                    message = reply.json()["message"]
                    assert isinstance(message, str)
                    assert "\n" not in message, message

            one()
        finally:
            stop.set()
            pinger.join(LIMIT_S)
        assert ping(server.port, initialize(server.port))["result"] == {}
    assert len(statuses) >= ADMIN_BODIES
    assert any(status < 300 for status in statuses)
    assert any(status >= 400 for status in statuses)
    assert seen["pings"], "the other session was never answered"
    assert seen["stalls"] == []
    assert server.errors == []
