"""The fake never falls over: thousands of malformed requests over a socket and lines over stdio.

Each HTTP request must get a status under 500 and be journaled with exactly the status sent; each
stdio line must leave the server answering; afterwards both still serve. Raise the counts with
MCP_TESTKIT_FUZZ_HTTP and MCP_TESTKIT_FUZZ_STDIO (defaults: 2,000 requests, 500 lines).
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

from mcp_testkit import TestMcpServer

from ._malformed import LIVE, MAX_BODY, http_requests, stdio_lines
from ._support import LIMIT_S, STDIO_INIT, exchange, http_request, initialize, ping, serve_command

HTTP_REQUESTS = int(os.environ.get("MCP_TESTKIT_FUZZ_HTTP", "2000"))
STDIO_LINES = int(os.environ.get("MCP_TESTKIT_FUZZ_STDIO", "500"))
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
