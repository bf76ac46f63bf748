"""Issue 22 item 9: requests uvicorn's HTTP parser rejects get a JSON-RPC 400 and a journal record (they got a
plain-text 400 and no record), with httptools and h11; and SIGTERM with an unread GET stream is quiet."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
from collections.abc import Iterator

import pytest

from mcp_testkit import TestMcpServer

from ._support import ACCEPT, LIMIT_S, exchange, initialize, serve_command

_BODY = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'


def _head(port: int) -> str:
    return f"Host: 127.0.0.1:{port}\r\nAccept: {ACCEPT}\r\nContent-Type: application/json\r\n"


_REFUSED = {
    # name: (the request's bytes for a port, the parsers that refuse it; the other one passes it to the app)
    "control byte in a header": (
        lambda port: f"POST /mcp HTTP/1.1\r\n{_head(port)}X-Bad: a\x01b\r\nContent-Length: 40\r\n\r\n".encode() + _BODY,
        {"httptools"},
    ),
    "two different Content-Lengths": (
        lambda port: f"POST /mcp HTTP/1.1\r\n{_head(port)}Content-Length: 40\r\nContent-Length: 5\r\n\r\n".encode()
        + _BODY,
        {"httptools", "h11"},
    ),
    "Content-Length with Transfer-Encoding": (
        lambda port: f"POST /mcp HTTP/1.1\r\n{_head(port)}Content-Length: 40\r\nTransfer-Encoding: chunked\r\n\r\n"
        .encode() + b"28\r\n" + _BODY + b"\r\n0\r\n\r\n",
        {"httptools"},
    ),
    "unknown method": (lambda port: f"FOO /mcp HTTP/1.1\r\n{_head(port)}\r\n".encode(), {"httptools"}),
    "NUL in the target": (lambda port: f"GET /m\x00cp HTTP/1.1\r\n{_head(port)}\r\n".encode(), {"httptools", "h11"}),
}


@pytest.fixture(params=["httptools", "h11"])
def server(request: pytest.FixtureRequest) -> Iterator[TestMcpServer]:
    """A started server on one of uvicorn's two HTTP parsers."""
    server = TestMcpServer("parsers")
    server._h11 = request.param == "h11"
    with server:
        yield server


@pytest.mark.parametrize("case", list(_REFUSED))
def test_every_malformed_request_gets_a_json_rpc_4xx_and_a_record(server: TestMcpServer, case: str) -> None:
    """A request the parser refuses is a 400 with a JSON-RPC error naming the parser, journaled with its method and
    path; one the parser passes on is refused by the app, journaled too: never a response without a record."""
    build, refusing = _REFUSED[case]
    parser = "h11" if server._h11 else "httptools"
    reply = exchange(server.port, build(server.port))
    assert 400 <= reply.status < 500
    error = reply.json()["error"]
    assert error["code"] == -32600
    record = server.journal.last
    assert record.status == reply.status
    assert record.error == error["message"]
    if parser in refusing:
        assert reply.status == 400
        assert error["message"].startswith(f"Bad Request: the HTTP parser ({parser}) refused the request")
        request_line = build(server.port).split(b"\r\n", 1)[0].decode("latin-1").split(" ")
        assert record.http_method == request_line[0]
        assert record.path == request_line[1].encode("unicode_escape").decode("ascii")
        assert record.rpc_method is None
    assert len(server.journal) == 1
    json.dumps(server.journal.last.to_json())  # the record exports as strict JSON


def test_sigterm_with_an_unread_get_stream_is_quiet() -> None:
    """`serve --get-stream` stopped by SIGTERM while a client holds a GET stream it never reads: exit 0, and stderr
    says it stopped, with no "Exception in ASGI application" or CancelledError traceback."""
    process = subprocess.Popen(serve_command("--get-stream"), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               stdin=subprocess.DEVNULL)  # fmt: skip
    try:
        assert process.stdout is not None
        line = process.stdout.readline().decode()
        port = int(line.split(" at http://127.0.0.1:")[1].split("/")[0])
        session = initialize(port)
        with socket.create_connection(("127.0.0.1", port), timeout=LIMIT_S) as stream:
            stream.sendall(
                f"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept: text/event-stream\r\n"
                f"Mcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-11-25\r\n\r\n".encode()
            )
            head = b""
            while b"\r\n\r\n" not in head:  # the stream is open; what follows is never read
                head += stream.recv(1024)
            assert head.startswith(b"HTTP/1.1 200"), head
            process.send_signal(signal.SIGTERM)
            _, stderr = process.communicate(timeout=LIMIT_S)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    text = stderr.decode()
    assert process.returncode == 0, text
    assert "Traceback" not in text
    assert "Exception in ASGI application" not in text
    assert "CancelledError" not in text
    assert text.strip().endswith("mcp-testkit: stopped")
