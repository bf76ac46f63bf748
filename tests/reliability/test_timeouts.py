"""Idle and slow sockets are closed, and a body that trickles in is bounded in time (short limits, set here)."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator

import pytest

from mcp_testkit import TestMcpServer

from ._support import LIMIT_S, http_request, parse_reply, post_headers


@pytest.fixture
def server() -> Iterator[TestMcpServer]:
    server = TestMcpServer(header_timeout_s=0.3, body_timeout_s=0.3, idle_timeout_s=0.3)
    with server:
        yield server


def _closed_by_server(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection (bounded by the socket's timeout)."""
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    return data


def test_a_connection_that_sends_nothing_is_closed(server: TestMcpServer) -> None:
    """Item 9: an idle socket that never sends a request is closed after header_timeout_s."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=LIMIT_S) as sock:
        assert _closed_by_server(sock) == b""


def test_headers_that_trickle_in_are_cut_off(server: TestMcpServer) -> None:
    """Item 9: a slowloris request whose headers never end is closed after header_timeout_s."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=LIMIT_S) as sock:
        sock.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: 1\r\n")
        assert _closed_by_server(sock) == b""
    assert len(server.journal) == 0


def test_a_body_that_never_ends_is_answered_408(server: TestMcpServer) -> None:
    """Item 9: a body announced but not sent within body_timeout_s is answered 408 with a JSON-RPC error, journaled."""
    headers = [*post_headers(server.port), ("Content-Length", "1000")]
    with socket.create_connection(("127.0.0.1", server.port), timeout=LIMIT_S) as sock:
        sock.sendall(http_request("POST", "/mcp", headers) + b'{"jsonrpc":')
        reply = parse_reply(_closed_by_server(sock))
    assert reply.status == 408
    assert reply.json()["error"]["code"] == -32600
    assert server.journal.last.status == 408


def test_an_idle_keep_alive_connection_is_closed(server: TestMcpServer) -> None:
    """Item 9: after an answer, a kept-alive connection with no next request is closed after idle_timeout_s."""
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}).encode()
    headers = [(n, v) for n, v in post_headers(server.port) if n != "Connection"]
    with socket.create_connection(("127.0.0.1", server.port), timeout=LIMIT_S) as sock:
        sock.sendall(http_request("POST", "/mcp", headers, body))
        reply = parse_reply(_closed_by_server(sock))
    assert reply.status == 400  # no session: answered, then the idle connection was closed


def _one_reply(sock: socket.socket) -> bytes:
    """One HTTP response with a Content-Length, read off a connection the server keeps open."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        assert chunk, f"the server closed the connection; it had sent {data!r}"
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = int(parse_reply(head + b"\r\n\r\n").headers["content-length"])
    while len(body) < length:
        chunk = sock.recv(65536)
        assert chunk, "the server closed the connection mid-answer"
        body += chunk
    return head + b"\r\n\r\n" + body


def test_each_request_on_a_kept_alive_connection_has_its_own_header_time() -> None:
    """Item 9: the head of a next request gets all of header_timeout_s from its own first bytes, even when
    it ends after the deadline the connection's first head had."""
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}).encode()
    headers = [(n, v) for n, v in post_headers(0) if n not in ("Connection", "Host")]
    with TestMcpServer(header_timeout_s=2.0, idle_timeout_s=10.0) as server:
        request = http_request("POST", "/mcp", [("Host", f"127.0.0.1:{server.port}"), *headers], body)
        with socket.create_connection(("127.0.0.1", server.port), timeout=LIMIT_S) as sock:
            sock.sendall(request)
            assert parse_reply(_one_reply(sock)).status == 400  # answered (no session), and kept open
            time.sleep(1.2)  # the time passing is the condition under test
            sock.sendall(request[:20])
            time.sleep(1.2)  # now past the first head's deadline, well within the second's
            sock.sendall(request[20:])
            assert parse_reply(_one_reply(sock)).status == 400
    assert len(server.journal) == 2


def test_default_timeouts_are_generous() -> None:
    """Item 9: by default a socket may idle a minute between requests and take 60 s per header block or body."""
    server = TestMcpServer()
    assert (server.header_timeout_s, server.body_timeout_s, server.idle_timeout_s) == (60.0, 60.0, 75.0)
