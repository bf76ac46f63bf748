"""The answer framing the fake server and the chaos proxy share (mcp_testkit/_answer.py), served by a uvicorn of its
own on a loopback socket: JSON with its length, a JSON-RPC error with id null, an SSE stream, a dropped connection."""

from __future__ import annotations

import json
import time
from typing import Any

import anyio
import httpx2
import pytest
from uvicorn_thread import serving_app

from mcp_testkit._wire.answer import Answer
from mcp_testkit._wire.asgi import Receive, Scope, Send, lifespan
from mcp_testkit._wire.headers import Headers
from mcp_testkit.journal._record import Record

pytestmark = pytest.mark.anyio

LIMIT_S = 10.0


class PlainAnswer(Answer):
    """An answer of a side of its own: only its JSON encoder, as the fake and the proxy give theirs."""

    __slots__ = ()

    @staticmethod
    def dumps(payload: Any) -> bytes:
        return json.dumps(payload, separators=(",", ":")).encode()


class FramingApp:
    """Answers each path with one kind of framing, and keeps the record of every answer."""

    def __init__(self) -> None:
        self.records: dict[str, Record] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await lifespan(receive, send)
            return
        path = scope["path"]
        record = Record(0, time.time(), scope["method"], path, Headers(scope["headers"]), b"")
        self.records[path] = record
        out = PlainAnswer(send, record, receive)
        out.session_header = [(b"mcp-session-id", b"s1")]
        if path == "/json":
            await out.json(200, {"jsonrpc": "2.0", "id": 1, "result": {}})
        elif path == "/error":
            await out.error(406, -32600, "Not Acceptable: say why", [(b"x-extra", b"1")])
        elif path == "/sse":
            await out.start_sse()
            await out.chunk(b"event: message\ndata: {}\n\n")
            await out.end_sse()
        else:
            await out.drop("dropped by the test")


async def fetch(url: str) -> httpx2.Response:
    """One GET over a fresh connection, bounded in time."""
    with anyio.fail_after(LIMIT_S):
        async with httpx2.AsyncClient() as client:
            return await client.get(url)


@pytest.fixture
def framing() -> Any:
    app = FramingApp()
    with serving_app(app) as url:
        yield app, url.removesuffix("/mcp")


async def test_json_goes_with_its_length_type_and_session_header(framing: Any) -> None:
    """A JSON answer carries Content-Length, Content-Type and the session header, and the record keeps its status."""
    app, base = framing
    got = await fetch(f"{base}/json")
    assert got.status_code == 200
    assert got.headers["content-length"] == str(len(got.content))
    assert got.headers["content-type"] == "application/json"
    assert got.headers["mcp-session-id"] == "s1"
    assert got.json() == {"jsonrpc": "2.0", "id": 1, "result": {}}
    assert app.records["/json"].status == 200


async def test_an_error_is_json_rpc_with_id_null_and_its_headers(framing: Any) -> None:
    """`error` answers a JSON-RPC error with id null, with the extra headers given, and notes it in the record."""
    app, base = framing
    got = await fetch(f"{base}/error")
    assert got.status_code == 406
    assert got.headers["x-extra"] == "1"
    assert got.json() == {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Not Acceptable: say why"}}
    assert app.records["/error"].error == "Not Acceptable: say why"


async def test_an_sse_stream_has_its_head_and_its_events(framing: Any) -> None:
    """`start_sse` sends the SSE head once (status 200, no-cache), the chunks follow, and `end_sse` ends it."""
    app, base = framing
    got = await fetch(f"{base}/sse")
    assert got.status_code == 200
    assert got.headers["content-type"] == "text/event-stream"
    assert got.headers["cache-control"] == "no-cache"
    assert got.headers["mcp-session-id"] == "s1"
    assert got.content == b"event: message\ndata: {}\n\n"
    assert app.records["/sse"].status == 200


async def test_a_drop_ends_the_connection_without_an_answer(framing: Any) -> None:
    """`drop` aborts the socket through the ASGI server's transport: the client's request fails, the record says why."""
    app, base = framing
    with anyio.fail_after(LIMIT_S):
        async with httpx2.AsyncClient() as client:
            with pytest.raises(httpx2.TransportError):
                await client.get(f"{base}/drop")
    assert app.records["/drop"].error == "dropped by the test"
