"""An upstream written here that answers oddly over HTTP: JSON nested 100,000 deep, NaN and Infinity, an SSE
stream cut mid-event. The client gets the documented 502 naming what is wrong, or its stream broken off, never a
500 or a logged traceback; the journal, read through the admin API, stays strict JSON."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import math
import socket
import threading
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest

from mcp_testkit import TestMcpServer
from mcp_testkit.proxy import ChaosProxy
from mcp_testkit.standalone._admin import AdminApp, ProxyAdminApp

from ._raw_upstream import RawUpstream, read_request, serving
from ._wire import ACCEPT, INIT, open_session, request

LIMIT_S = 60.0
TOKEN = "admin-token"
BEARER = {"authorization": f"Bearer {TOKEN}"}
DEEP = b'{"jsonrpc":"2.0","id":0,"result":' + b"[" * 100_000 + b"]" * 100_000 + b"}"
NON_FINITE = b'{"jsonrpc":"2.0","id":0,"result":{"x":NaN,"y":-Infinity}}'
HALF_EVENT = b'event: message\ndata: {"jsonrpc":"2.0","id":0,"res'


def _json(body: bytes) -> bytes:
    head = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n" % len(body)
    return head + body


def _cut_sse() -> bytes:
    """A chunked SSE answer whose connection closes in the middle of its first event."""
    head = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
    return head + b"%x\r\n%s\r\n" % (len(HALF_EVENT), HALF_EVENT)


def _read_request(conn: socket.socket) -> bool:
    """Read one request's head and body; False when the client closed first."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return False
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(
        (int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")), 0
    )
    while len(body) < length:
        chunk = conn.recv(65536)
        if not chunk:
            return False
        body += chunk
    return True


@contextlib.contextmanager
def _upstream(answer: bytes) -> Iterator[str]:
    """An HTTP upstream on 127.0.0.1 that sends `answer` to every request, then closes the connection."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(LIMIT_S)

    def serve() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            with conn:
                if _read_request(conn):
                    conn.sendall(answer)

    thread = threading.Thread(target=serve, name="odd-upstream", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/mcp"
    finally:
        listener.shutdown(socket.SHUT_RDWR)  # wakes the accept() under way (close alone does not, on Linux)
        listener.close()
        thread.join(LIMIT_S)


def _strict(text: str) -> Any:
    def refuse(name: str) -> Any:
        raise AssertionError(f"{name} in what claims to be JSON")

    return json.loads(text, parse_constant=refuse)


@pytest.mark.parametrize(
    ("answer", "named"),
    [(DEEP, "nested too deeply (more than 128 levels)"), (NON_FINITE, "NaN is not JSON")],
    ids=["deep", "nan"],
)
def test_odd_json_from_the_upstream_is_a_502_naming_it(answer: bytes, named: str) -> None:
    """A JSON answer nested 100,000 deep, or holding NaN: 502 with a -32603 error naming what is wrong, journaled;
    the admin API's journal parses with a strict decoder."""
    with _upstream(_json(answer)) as url, httpx2.Client(timeout=LIMIT_S) as http:
        proxy = ChaosProxy(url)
        proxy.start(ProxyAdminApp(proxy, TOKEN))
        try:
            response = http.post(proxy.url, json=INIT, headers=ACCEPT)
            assert response.status_code == 502, response.text
            error = _strict(response.text)["error"]
            assert error["code"] == -32603
            assert named in error["message"]
            assert "not JSON-RPC" in error["message"]
            journal = http.get(f"{proxy.base_url}/_testkit/journal", headers=BEARER)
            [record] = _strict(journal.text)["records"]
            assert record["status"] == 502
        finally:
            proxy.stop()


def test_a_cut_sse_answer_breaks_the_clients_stream_without_a_traceback(caplog: pytest.LogCaptureFixture) -> None:
    """An SSE answer cut mid-event: the client's stream is broken off the same way, the record says so, and nothing
    logs "Exception in ASGI application"; the proxy keeps serving."""
    caplog.set_level(logging.ERROR)
    with _upstream(_cut_sse()) as url, ChaosProxy(url) as proxy, httpx2.Client(timeout=LIMIT_S) as http:
        uvicorn_log = logging.getLogger("uvicorn.error")  # uvicorn's own logging config keeps it from the root's
        uvicorn_log.addHandler(caplog.handler)  # after the proxy started: uvicorn configures its loggers then
        try:
            for _ in range(2):
                with pytest.raises(httpx2.RemoteProtocolError):
                    http.post(proxy.url, json=INIT, headers=ACCEPT)
        finally:
            uvicorn_log.removeHandler(caplog.handler)
        assert "Exception in ASGI application" not in caplog.text  # logged before the connection closes
        assert [r.status for r in proxy.journal] == [200, 200]
        assert all("broke off its answer" in (r.error or "") for r in proxy.journal)


def test_the_journal_writes_non_finite_numbers_as_strings() -> None:
    """A tool answering NaN and infinities: the admin API's journal and `to_jsonl()` are strict JSON, the numbers
    written as the strings "NaN", "Infinity" and "-Infinity"."""
    server = TestMcpServer("odd")
    server.tool("measure", returns={"x": math.nan, "y": math.inf, "z": -math.inf})
    server.asgi_app = AdminApp(server, TOKEN)  # type: ignore[assignment]
    with server, httpx2.Client(timeout=LIMIT_S) as http:
        session = open_session(http, server.url)
        request(http, server.url, session, "tools/call", {"name": "measure", "arguments": {}})
        journal = http.get(f"{server.base_url}/_testkit/journal", headers=BEARER)
    [record] = [r for r in _strict(journal.text)["records"] if r.get("tool") == "measure"]
    assert record["response"]["result"]["structuredContent"] == {"x": "NaN", "y": "Infinity", "z": "-Infinity"}
    [line] = [r for r in map(_strict, server.journal.to_jsonl().splitlines()) if r.get("tool") == "measure"]
    assert line["response"]["result"]["structuredContent"]["x"] == "NaN"


CALL = {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "hinted", "arguments": {}}}
ANSWER = b'{"jsonrpc":"2.0","id":3,"result":{"content":[]}}'
FINAL = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n%s" % (len(ANSWER), ANSWER)


FINALS: dict[str, bytes] = {}
"""The final answer of an upstream of `_interim_first`, by its URL, when it is not `FINAL`."""


def _interim_first(interim: bytes) -> Any:
    """An upstream that writes `interim` first, then (a moment later, as a server that hints and then works does)
    its final answer."""

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, up: RawUpstream) -> None:
        while (message := await read_request(reader)) is not None:
            up.saw(message)
            if interim:
                writer.write(interim)
                await writer.drain()
                await asyncio.sleep(0.2)
            port = writer.get_extra_info("sockname")[1]
            writer.write(FINALS.get(f"http://127.0.0.1:{port}/mcp", FINAL))
            await writer.drain()

    return handler


def test_an_interim_answer_of_the_upstream_is_skipped_for_its_final_one() -> None:
    """100 Continue and 103 Early Hints before the answer: the client gets the final answer alone, with its own
    headers (none of the hint's), and the call is journaled as run; it was passed on as the answer before (the
    client then waited for one that never came)."""
    hints = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nlink: </style.css>; rel=preload\r\n\r\n"
    with serving(_interim_first(hints)) as (url, _), ChaosProxy(url) as proxy:
        with httpx2.Client(timeout=10.0) as http:
            answered = http.post(proxy.url, json=CALL, headers=ACCEPT)
        assert (answered.status_code, answered.content) == (200, ANSWER)
        assert "link" not in answered.headers
        [record] = proxy.journal.calls("hinted")
        assert (record.status, record.executed) == (200, True)


def test_a_101_to_a_request_without_an_upgrade_is_a_502_naming_it() -> None:
    """An upstream answering 101 Switching Protocols to a POST (which asked for no upgrade): a 502 naming it, the
    call journaled `executed` unknown; the 101 was passed on before, and the client's connection with it."""
    switch = b"HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\nconnection: upgrade\r\n\r\n"
    with serving(_interim_first(switch)) as (url, _), ChaosProxy(url) as proxy:
        with httpx2.Client(timeout=10.0) as http:
            answered = http.post(proxy.url, json=CALL, headers=ACCEPT)
        assert answered.status_code == 502, answered.text
        message = _strict(answered.text)["error"]["message"]
        assert "answered 101 Switching Protocols to a request that asked for no upgrade" in message
        [record] = proxy.journal.calls("hinted")
        assert (record.status, record.executed) == (502, None)


@pytest.mark.parametrize("status", [600, 999])
def test_a_status_outside_100_to_599_is_a_502_naming_it(status: int, caplog: pytest.LogCaptureFixture) -> None:
    """An upstream answering a status HTTP has not: a 502 naming it, no traceback logged; before, the client's
    connection was dropped with "Exception in ASGI application" logged (the proxy's server has no status line for
    it)."""
    odd = b"HTTP/1.1 %d Odd\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n%s" % (
        status, len(ANSWER), ANSWER
    )  # fmt: skip
    caplog.set_level(logging.ERROR)
    with serving(_interim_first(b"")) as (url, _), ChaosProxy(url) as proxy, httpx2.Client(timeout=LIMIT_S) as http:
        FINALS[url] = odd
        uvicorn_log = logging.getLogger("uvicorn.error")
        uvicorn_log.addHandler(caplog.handler)
        try:
            answered = http.post(proxy.url, json=CALL, headers=ACCEPT)
        finally:
            uvicorn_log.removeHandler(caplog.handler)
        assert answered.status_code == 502, answered.text
        said = f"answered HTTP {status}, which is no HTTP status (RFC 9110 has 100 to 599)"
        assert said in _strict(answered.text)["error"]["message"]
        assert "Exception in ASGI application" not in caplog.text
        assert proxy.journal.calls("hinted")[0].executed is None
