"""Bad HTTP input over a real socket: bounded bodies, deep or odd JSON, headers; answered, journaled, never a 500."""

from __future__ import annotations

import gc
import json
import weakref
from collections.abc import Iterator

import pytest

from mcp_testkit import TestMcpServer
from mcp_testkit.standalone._admin import AdminApp

from ._support import exchange, http_request, initialize, ping, post_headers, serve_process


@pytest.fixture
def server() -> Iterator[TestMcpServer]:
    """A started server with one tool, stopped after the test."""
    server = TestMcpServer("reliable", max_body=64 * 1024)
    server.tool("echo", returns=lambda arguments: json.dumps(arguments))
    with server:
        yield server


def _deep(depth: int) -> bytes:
    return b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":' + b"[" * depth + b"]" * depth + b"}}"


# -- item 1: bounded bodies, checks before the body is read -------------------------------------------------------


def test_content_length_over_max_body_is_413_without_reading_the_body(server: TestMcpServer) -> None:
    """Item 1: a Content-Length over max_body is answered 413 with a JSON-RPC error before any body byte is sent."""
    request = http_request("POST", "/mcp", [*post_headers(server.port), ("Content-Length", str(1 << 30))])
    reply = exchange(server.port, request)  # no body follows: an answer proves it was not waited for
    assert reply.status == 413
    assert reply.json()["error"]["code"] == -32600
    assert "max_body" in reply.json()["error"]["message"]
    record = server.journal.last
    assert (record.status, record.body) == (413, b"")
    assert "max_body" in (record.error or "")


def test_streamed_body_over_max_body_is_413_and_the_journal_keeps_a_cut_prefix(server: TestMcpServer) -> None:
    """Item 1: a chunked body that grows past max_body gets 413; the journal keeps a bounded prefix and says so."""
    chunk = b"x" * 8192
    chunks = b"".join(b"%x\r\n%s\r\n" % (len(chunk), chunk) for _ in range(40)) + b"0\r\n\r\n"
    headers = [*post_headers(server.port), ("Transfer-Encoding", "chunked")]
    reply = exchange(server.port, http_request("POST", "/mcp", headers, content_length=False) + chunks)
    assert reply.status == 413
    record = server.journal.last
    assert record.status == 413
    assert 0 < len(record.body) <= 4096
    assert "cut" in (record.error or "")
    assert ping(server.port, initialize(server.port))["result"] == {}


@pytest.mark.parametrize(
    ("name", "value", "status"),
    [("Host", "evil.example", 421), ("Origin", "http://evil.example", 403)],
)
def test_host_and_origin_are_refused_before_the_body_is_read(
    server: TestMcpServer, name: str, value: str, status: int
) -> None:
    """Item 1: a bad Host or Origin is refused at once although the announced body never comes."""
    headers = [(n, v) for n, v in post_headers(server.port) if n != name] + [(name, value)]
    reply = exchange(server.port, http_request("POST", "/mcp", [*headers, ("Content-Length", "100000")]))
    assert reply.status == status
    assert server.journal.last.status == status


def test_admin_token_is_checked_before_the_body_is_read(server: TestMcpServer) -> None:
    """Item 1: the admin API refuses a request without its token before reading the (huge) body announced."""
    server.stop()
    server.asgi_app = AdminApp(server, "admin-token")  # type: ignore[assignment]
    server.start()
    headers = [("Host", f"127.0.0.1:{server.port}"), ("Content-Type", "application/json")]
    reply = exchange(
        server.port, http_request("POST", "/_testkit/tools", [*headers, ("Content-Length", str(1 << 30))])
    )
    assert reply.status == 401
    ok = http_request(
        "POST",
        "/_testkit/tools",
        [*headers, ("Authorization", "Bearer admin-token"), ("Content-Length", str(1 << 30))],
    )
    assert exchange(server.port, ok).status == 413


# -- item 2: deep JSON ----------------------------------------------------------------------------------------------


def test_deeply_nested_json_is_a_parse_error_not_a_500(server: TestMcpServer) -> None:
    """Item 2: JSON nested 30,000 deep is answered 400/-32700, journaled, and the server goes on."""
    session_id = initialize(server.port)
    reply = exchange(server.port, http_request("POST", "/mcp", post_headers(server.port, session_id), _deep(30_000)))
    assert reply.status == 400
    assert reply.json()["error"]["code"] == -32700
    assert "deep" in reply.json()["error"]["message"]
    assert server.journal.last.status == 400
    assert ping(server.port, session_id)["result"] == {}


# -- item 3: cancellations with an unhashable requestId ------------------------------------------------------------


@pytest.mark.parametrize("request_id", [[1], {"id": 1}, None, 1.5])
def test_cancellation_with_an_invalid_request_id_is_ignored_and_recorded(
    server: TestMcpServer, request_id: object
) -> None:
    """Item 3: notifications/cancelled naming a list or an object is accepted (202), ignored and journaled."""
    session_id = initialize(server.port)
    body = json.dumps({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": request_id}})
    reply = exchange(server.port, http_request("POST", "/mcp", post_headers(server.port, session_id), body.encode()))
    assert reply.status == 202
    record = server.journal.last
    assert (record.rpc_method, record.status) == ("notifications/cancelled", 202)
    assert "ignored" in (record.error or "")
    assert ping(server.port, session_id)["result"] == {}
    server.check()


# -- item 10: the smaller ones ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("constant", [b"NaN", b"Infinity", b"-Infinity"])
def test_nan_and_infinity_are_parse_errors(server: TestMcpServer, constant: bytes) -> None:
    """Item 10: NaN and Infinity are not JSON: 400/-32700, and the journal export stays strict JSON."""
    session_id = initialize(server.port)
    body = b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"x":%s}}}' % constant
    reply = exchange(server.port, http_request("POST", "/mcp", post_headers(server.port, session_id), body))
    assert reply.status == 400
    assert reply.json()["error"]["code"] == -32700
    for line in server.journal.to_jsonl().splitlines():
        json.loads(line, parse_constant=lambda name: pytest.fail(f"{name} in the journal export"))


@pytest.mark.parametrize("encoding", ["utf-16", "utf-32", "utf-16-le"])
def test_bodies_not_in_utf8_are_parse_errors(server: TestMcpServer, encoding: str) -> None:
    """Item 10: MCP messages are UTF-8; a UTF-16 or UTF-32 body is 400/-32700."""
    session_id = initialize(server.port)
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}).encode(encoding)
    reply = exchange(server.port, http_request("POST", "/mcp", post_headers(server.port, session_id), body))
    assert reply.status == 400
    assert reply.json()["error"]["code"] == -32700
    assert "UTF-8" in reply.json()["error"]["message"]


def test_a_non_string_method_fails_assert_called_cleanly(server: TestMcpServer) -> None:
    """Item 10: after a request whose method is a number, journal.assert_called fails with an AssertionError."""
    session_id = initialize(server.port)
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": 7}).encode()
    reply = exchange(server.port, http_request("POST", "/mcp", post_headers(server.port, session_id), body))
    assert reply.status == 400
    with pytest.raises(AssertionError, match="expected tool 'echo' to be called"):
        server.journal.assert_called("echo")


@pytest.mark.parametrize(
    "hosts",
    [[], ["127.0.0.1", "127.0.0.1"], ["127.0.0.1", "localhost"]],
    ids=["missing", "twice-same", "twice-different"],
)
def test_missing_or_duplicate_host_is_400(server: TestMcpServer, hosts: list[str]) -> None:
    """Item 10: RFC 9112: an HTTP/1.1 request without a Host, or with two, is answered 400 (and journaled)."""
    headers = [(n, v) for n, v in post_headers(server.port) if n != "Host"] + [("Host", h) for h in hosts]
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}).encode()
    reply = exchange(server.port, http_request("POST", "/mcp", headers, body))
    assert reply.status == 400
    assert "Host" in reply.json()["error"]["message"]
    assert server.journal.last.status == 400


def test_host_names_are_case_insensitive(server: TestMcpServer) -> None:
    """Item 10: Host LOCALHOST is the loopback name localhost."""
    headers = [(n, v) for n, v in post_headers(server.port) if n != "Host"] + [("Host", f"LOCALHOST:{server.port}")]
    params = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}).encode()
    assert exchange(server.port, http_request("POST", "/mcp", headers, body)).status == 200


def test_a_crash_inside_the_server_is_a_journaled_500_and_check_fails() -> None:
    """Item 10: the last-resort guard answers -32603/500, journals status 500, keeps serving; check() raises."""
    broken = {"ping": True}

    def mode(record: object) -> str:
        if getattr(record, "rpc_method", None) == "ping" and broken["ping"]:
            raise LookupError("no framing for ping")  # user code that raises, inside the server's request path
        return "json"

    server = TestMcpServer(response_mode=mode)
    with server:
        session_id = initialize(server.port)
        body = json.dumps({"jsonrpc": "2.0", "id": 5, "method": "ping"}).encode()
        reply = exchange(server.port, http_request("POST", "/mcp", post_headers(server.port, session_id), body))
        assert reply.status == 500
        assert reply.json()["error"]["code"] == -32603
        record = server.journal.last
        assert record.status == 500
        assert "LookupError" in (record.error or "")
        broken["ping"] = False
        assert ping(server.port, session_id)["result"] == {}
    with pytest.raises(AssertionError, match="LookupError"):
        server.check()


def test_handlers_are_not_kept_alive_by_the_context_cache() -> None:
    """Item 10: a handler (and the server it closes over) is freed once the server is gone."""

    def run() -> weakref.ref[object]:
        server = TestMcpServer()

        def handler(arguments: dict[str, object], context: object) -> str:
            return server.name

        server.tool("closure")(handler)
        with server:
            session_id = initialize(server.port)
            body = json.dumps({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "closure"}})
            exchange(server.port, http_request("POST", "/mcp", post_headers(server.port, session_id), body.encode()))
        assert server.executions("closure") == 1
        return weakref.ref(handler)

    handler = run()
    gc.collect()
    assert handler() is None


def test_allow_remote_on_a_wildcard_address_accepts_remote_host_names() -> None:
    """Item 10: `serve --host 0.0.0.0 --allow-remote` answers a request whose Host is the machine's remote name."""
    with serve_process("--host", "0.0.0.0", "--allow-remote") as (url, _, _):
        port = int(url.rsplit(":", 1)[1].split("/", 1)[0])
        params = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}).encode()
        headers = [(n, v) for n, v in post_headers(port) if n != "Host"] + [("Host", f"bridge-host.example:{port}")]
        reply = exchange(port, http_request("POST", "/mcp", headers, body))
    assert reply.status == 200
