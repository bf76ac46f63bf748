"""One HTTP exchange as the proxy answers it: the turn a fault's effect acts on (the server's `HttpTurn`), and the
upstream's answer held back when a fault needs to see it before the client does.

Every byte the client gets goes through `ProxyTurn.send`: the one place a wrapper of the ASGI `send` (byte-level
faults) applies, whether the answer is the upstream's passed through or one a fault made.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio
import anyio.lowlevel

from mcp_testkit._json import JsonError
from mcp_testkit._json import loads as strict_loads
from mcp_testkit._sse import SseDecoder, SseEventTooLarge
from mcp_testkit._wire import SocketWire

if TYPE_CHECKING:
    from mcp_testkit._asgi import Receive, Send
    from mcp_testkit.journal import Record
    from mcp_testkit.server import Effect

__all__ = ["Held", "ProxyTurn", "dumps", "frame"]

_JSON = b"application/json"
_SSE = b"text/event-stream"


def dumps(message: Any) -> bytes:
    return json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode()


def frame(data: bytes) -> bytes:
    """One SSE `message` event carrying `data` (the proxy's own events carry no id)."""
    return b"event: message\ndata: %s\n\n" % data


def decode(data: bytes) -> Any:
    try:
        return strict_loads(data, "answer") if data else None
    except JsonError:
        return None


@dataclass(eq=False)
class Held:
    """The upstream's whole answer to one request, held back for a fault: status, headers, and its messages."""

    status: int = 0
    headers: list[tuple[bytes, bytes]] = field(default_factory=list)
    chunks: list[bytes] = field(default_factory=list)
    ended: bool = False

    async def send(self, message: Any) -> None:
        if message["type"] == "http.response.start":
            self.status = message["status"]
            self.headers = list(message.get("headers", []))
        elif message["type"] == "http.response.body":
            self.chunks.append(message.get("body", b""))
            self.ended = not message.get("more_body", False)

    @property
    def sse(self) -> bool:
        return any(k == b"content-type" and v.startswith(_SSE) for k, v in self.headers)

    def header(self, name: bytes) -> str | None:
        return next((v.decode("latin-1") for k, v in self.headers if k == name), None)

    def messages(self) -> list[Any]:
        """Every JSON-RPC message of the answer, in order (one for a JSON body)."""
        body = b"".join(self.chunks)
        if not self.sse:
            decoded = decode(body)
            return [] if decoded is None else [decoded]
        try:
            events = SseDecoder().feed(body)
        except SseEventTooLarge:
            return []
        return [m for m in (decode(e.data.encode()) for e in events if e.data) if m is not None]

    def split(self, request_id: Any) -> tuple[Any, list[Any]]:
        """The answer to `request_id`, and the other messages sent before it."""
        answer, others = None, []
        for message in self.messages():
            answers = isinstance(message, dict) and "method" not in message and message.get("id") == request_id
            if answer is None and answers:
                answer = message
            else:
                others.append(message)
        return answer, others


class _Connection:
    """What `SocketWire` reads of an answer: the ASGI server's own `send` (to find the socket), the record, and
    the turn's `dropped`, which a close or reset by the fault sets."""

    def __init__(self, turn: ProxyTurn) -> None:
        self.send = turn._send
        self.record = turn.record
        self._turn = turn

    @property
    def dropped(self) -> bool:
        return self._turn.dropped

    @dropped.setter
    def dropped(self, value: bool) -> None:
        self._turn.dropped = value


class ProxyTurn:
    """What a fault may do to one exchange of the proxy (`server._effects.HttpTurn`), and the journal's record of it."""

    def __init__(self, send: Send, record: Record, receive: Receive) -> None:
        self._send = send
        self.record = record
        self.receive = receive
        self.session_header: list[tuple[bytes, bytes]] = []
        self.started = False
        self.dropped = False

    async def send(self, message: Any) -> None:
        if message["type"] == "http.response.start":
            self.started = True
            self.record.status = message["status"]
        await self._send(message)

    def shape(self, effect: Effect[Any]) -> None:
        """Let a fault of the answer's bytes (`Effect.wrap_send`) shape every write of this turn, as the fake's do."""
        self._send = effect.wrap_send(self._send, SocketWire(_Connection(self)))

    async def json(
        self,
        status: int,
        payload: Any,
        headers: list[tuple[bytes, bytes]] | None = None,
        content_type: bytes = _JSON,
    ) -> None:
        body = b"" if payload is None else dumps(payload)
        self.record.response = None
        self.record._response_raw = body or None
        await self.raw(status, body, content_type, headers)

    async def raw(
        self, status: int, body: bytes, content_type: bytes | None, headers: list[tuple[bytes, bytes]] | None = None
    ) -> None:
        raw = [(b"content-length", str(len(body)).encode()), *self.session_header]
        if body and content_type is not None:
            raw.append((b"content-type", content_type))
        raw.extend(headers or ())
        await self.send({"type": "http.response.start", "status": status, "headers": raw})
        await self.send({"type": "http.response.body", "body": body})

    async def drop(self, reason: str = "connection dropped by a fault") -> None:
        """Close the connection without (finishing) an answer."""
        self.record.error = reason
        self.dropped = True
        transport = getattr(getattr(self._send, "__self__", None), "transport", None)
        if transport is None:
            import httpx2

            raise httpx2.RemoteProtocolError("Server disconnected without sending a complete response.")
        transport.abort()
        await anyio.lowlevel.checkpoint()
        await anyio.lowlevel.checkpoint()

    async def error(
        self, status: int, code: int, message: str, headers: list[tuple[bytes, bytes]] | None = None
    ) -> None:
        self.record.error = message
        await self.json(status, {"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}}, headers)

    async def refuse(self, refused: Any) -> None:
        record = self.record
        record.error = refused.message
        if refused.code is None:
            await self.raw(refused.status, b"", None)
            return
        error: dict[str, Any] = {"code": refused.code, "message": refused.message}
        if refused.data is not None:
            error["data"] = refused.data
        request_id = record.rpc_id if refused.request_id else None
        await self.json(refused.status, {"jsonrpc": "2.0", "id": request_id, "error": error})

    async def start_body(self, status: int, content_type: bytes, length: int | None) -> None:
        raw = [(b"content-type", content_type), *self.session_header]
        if length is not None:
            raw.append((b"content-length", str(length).encode()))
        await self.send({"type": "http.response.start", "status": status, "headers": raw})

    async def end_body(self) -> None:
        await self.send({"type": "http.response.body", "body": b""})

    async def until_gone(self) -> None:
        while (await self.receive())["type"] != "http.disconnect":
            pass

    async def chunk(self, data: bytes) -> None:
        await self.send({"type": "http.response.body", "body": data, "more_body": True})

    async def start_sse(self) -> None:
        if self.started:
            return
        raw = [(b"content-type", _SSE), (b"cache-control", b"no-cache"), *self.session_header]
        await self.send({"type": "http.response.start", "status": 200, "headers": raw})

    async def end_sse(self) -> None:
        await self.start_sse()
        await self.send({"type": "http.response.body", "body": b""})

    def frame(self, state: Any, data: bytes) -> bytes:
        return frame(data)

    async def answer(self, status: int, messages: list[Any], answer: Any, *, sse: bool) -> None:
        """Send `answer` (after `messages`, as SSE) the way an upstream would have."""
        if answer is not None:
            self.record.response = None
            self.record._response_raw = dumps(answer)
        if not sse:
            await self.raw(status, b"" if answer is None else dumps(answer), _JSON)
            return
        await self.start_sse()
        for message in [*messages, answer]:
            if message is not None:
                await self.chunk(frame(dumps(message)))
        await self.end_sse()
