"""Issue 22 item 3: a request's head is bounded (max_headers, max_header_line): 431 before the app, journaled,
memory flat under 8 MB headers, and another session served meanwhile; with uvicorn's httptools and h11 parsers."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from mcp_testkit import TestMcpServer

from ._support import LIMIT_S, _complete, exchange, http_request, initialize, ping, post_headers, serve_process

_PING = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}).encode()
_INIT = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}},
    }
).encode()


@pytest.fixture(params=["httptools", "h11"])
def parser(request: pytest.FixtureRequest) -> str:
    """Each test runs with both of uvicorn's HTTP parsers."""
    return str(request.param)


def _started(parser: str, **settings: int) -> TestMcpServer:
    server = TestMcpServer("heads", **settings)  # type: ignore[arg-type]
    server._h11 = parser == "h11"
    server.start()
    return server


@pytest.fixture
def server(parser: str) -> Iterator[TestMcpServer]:
    """A started server with the default head bounds, on the parser under test."""
    server = _started(parser)
    yield server
    server.stop()


def _rss_bytes() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS in /proc/self/status")


def _huge_header(port: int, size: int) -> bytes:
    """Send a POST whose one header is `size` bytes (stopping if the server closes); what the server answered."""
    chunk = b"x" * (1 << 20)
    with socket.create_connection(("127.0.0.1", port), timeout=LIMIT_S) as sock:
        head = http_request("POST", "/mcp", post_headers(port))[:-2]  # open: the last header follows
        try:
            sock.sendall(head + b"X-Big: ")
            for _ in range(size // len(chunk)):
                sock.sendall(chunk)
            sock.sendall(b"\r\n\r\n" + _PING)
        except OSError:
            pass  # refused and closed while still sending: the answer may still be there to read
        data = b""
        try:
            while not _complete(data) and (chunk := sock.recv(65536)):
                data += chunk
        except OSError:
            pass
        return data


def test_a_head_over_max_headers_is_431_before_the_app_and_journaled(server: TestMcpServer) -> None:
    """Headers of 70 KiB in all (each line short) get 431 and a JSON-RPC error, a journal record, and no call."""
    many = [(f"X-Pad-{i}", "p" * 1000) for i in range(70)]
    reply = exchange(server.port, http_request("POST", "/mcp", [*post_headers(server.port), *many], _PING))
    assert reply.status == 431
    assert reply.json()["error"]["code"] == -32600
    assert "max_headers (65536 bytes)" in reply.json()["error"]["message"]
    record = server.journal.last
    assert (record.http_method, record.path, record.status, record.rpc_method) == ("POST", "/mcp", 431, None)
    assert "max_headers" in (record.error or "")


def test_a_header_line_over_max_header_line_is_431(server: TestMcpServer) -> None:
    """One header of 9 KiB passes max_header_line (8 KiB) though the head is small: 431 naming the bound."""
    request = http_request("POST", "/mcp", [*post_headers(server.port), ("X-Long", "l" * 9000)], _PING)
    reply = exchange(server.port, request)
    assert reply.status == 431
    assert "max_header_line (8192 bytes)" in reply.json()["error"]["message"]
    assert server.journal.last.status == 431


def test_heads_within_the_bounds_are_served(server: TestMcpServer) -> None:
    """60 KiB of headers, each line under 8 KiB, in pieces across reads: answered as usual."""
    many = [(f"X-Pad-{i}", "p" * 7000) for i in range(8)]
    request = http_request("POST", "/mcp", [*post_headers(server.port), *many], _INIT)
    with socket.create_connection(("127.0.0.1", server.port), timeout=LIMIT_S) as sock:
        for start in range(0, len(request), 3001):  # pieces that split lines and the head's end
            sock.sendall(request[start : start + 3001])
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    assert data.startswith(b"HTTP/1.1 200"), data[:200]
    assert server.journal.last.rpc_method == "initialize"


def test_the_bounds_are_configurable(parser: str) -> None:
    """max_headers and max_header_line raised let a 20 KiB header through; lowered, they refuse a 2 KiB one."""
    wide = _started(parser, max_headers=256 * 1024, max_header_line=32 * 1024)
    narrow = _started(parser, max_headers=4096, max_header_line=1024)
    try:
        for server, size, status in ((wide, 20_000, 200), (narrow, 2000, 431)):
            request = http_request("POST", "/mcp", [*post_headers(server.port), ("X-Long", "l" * size)], _INIT)
            assert exchange(server.port, request).status == status
    finally:
        wide.stop()
        narrow.stop()
    with pytest.raises(ValueError, match="max_header_line must be a positive number of bytes"):
        TestMcpServer(max_header_line=0)


def test_sixty_8mb_headers_are_refused_with_memory_flat_while_a_session_is_served(server: TestMcpServer) -> None:
    """60 pings with an 8 MB header each: 431 before the app, RSS grows by far less than the 480 MB sent (it
    grew 550 MB), and another session's pings are answered meanwhile."""
    session = initialize(server.port)
    before = _rss_bytes()
    done = threading.Event()
    answered: list[bool] = []

    def other_session() -> None:
        while not done.is_set():
            try:
                answered.append(ping(server.port, session).get("result") == {})
            except (AssertionError, OSError):
                answered.append(False)

    pinger = threading.Thread(target=other_session)
    pinger.start()
    try:
        answers = [_huge_header(server.port, 8 << 20) for _ in range(60)]
    finally:
        done.set()
        pinger.join(LIMIT_S)
    grown = _rss_bytes() - before
    assert all(answer.startswith(b"HTTP/1.1 431") for answer in answers if answer), answers[0][:100]
    assert any(answers), "no attacker connection read its 431"
    assert grown < 240 << 20, f"RSS grew {grown >> 20} MB over 60 refused 8 MB headers"
    assert answered, "the other session was never answered"
    assert all(answered)
    refused = [record for record in server.journal if record.status == 431]
    assert len(refused) == 60
    assert not [record for record in server.journal if record.rpc_method == "ping" and record.status != 200]


def test_serve_takes_the_head_bounds() -> None:
    """`serve --max-headers/--max-header-line`: a 3 KiB header is 431 past --max-header-line 2048, served under it."""
    with serve_process("--max-headers", "16384", "--max-header-line", "2048") as (url, _, _):
        port = int(url.split(":")[2].split("/")[0])
        for size, status in ((1500, 200), (3000, 431)):
            request = http_request("POST", "/mcp", [*post_headers(port), ("X-Long", "l" * size)], _INIT)
            reply = exchange(port, request)
            assert reply.status == status, reply
        assert "max_header_line (2048 bytes)" in reply.json()["error"]["message"]


def test_a_huge_head_pipelined_behind_a_get_stream_closes_it_without_a_431_inside(parser: str) -> None:
    """70 KiB of a next request sent on a connection whose GET stream is open: the connection is closed, and no
    431 is written into the middle of the stream."""
    server = TestMcpServer("streams", get_stream=True)
    server._h11 = parser == "h11"
    with server:
        session = initialize(server.port)
        with socket.create_connection(("127.0.0.1", server.port), timeout=LIMIT_S) as sock:
            sock.sendall(
                f"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\nAccept: text/event-stream\r\n"
                f"Mcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-11-25\r\n\r\n".encode()
            )
            data = b""
            while b"\r\n\r\n" not in data:
                data += sock.recv(1024)
            try:
                sock.sendall(b"POST /mcp HTTP/1.1\r\nX-Pad: " + b"p" * 70_000)
                while chunk := sock.recv(65536):
                    data += chunk
            except OSError:
                pass  # closed while sending, or reset: either way the stream ended
        assert data.startswith(b"HTTP/1.1 200")
        assert b"HTTP/1.1 431" not in data  # not b"431": the session id is random hex
        assert ping(server.port, session)["result"] == {}
