"""The framing of one HTTP answer, shared by the fake server's `server._framing._response.Response` and the chaos
proxy's `proxy._turn.ProxyTurn`: JSON with its length, raw bytes, a JSON-RPC error, a body in chunks, an SSE stream,
and a connection dropped through the ASGI server's transport.

One piece for both, so that a fault's effect (`server._effects.HttpTurn`) frames its answer the same way in front
of the fake and in front of a real server. Each side adds only its own: the fake's resumable streams and event
ids, the proxy's upstream answers passed on. `send` is the ASGI server's own (or a byte-level fault's wrapper of
it): `_wire.SocketWire` and `drop` find the socket through its `__self__`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Generic, Protocol, TypeVar

import anyio
import anyio.lowlevel

if TYPE_CHECKING:
    from mcp_testkit._wire.asgi import Receive, Send

__all__ = ["JSON", "SSE", "Answer", "Entry", "EntryT", "error_message"]

JSON = b"application/json"
SSE = b"text/event-stream"


def error_message(request_id: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    """A JSON-RPC error response (`server._messages.error_response`, which a neutral module may not import)."""
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


class Entry(Protocol):
    """What an answer writes into the journal's record of its request (a `journal.Record`, which sits above the
    wire: the wire names only what it writes)."""

    status: int | None
    executed: bool | None
    error: str | None

    @property
    def rpc_method(self) -> str | None: ...

    @property
    def rpc_id(self) -> Any: ...

    def keep_response(self, raw: bytes | None) -> None: ...


EntryT = TypeVar("EntryT", bound=Entry)


class Answer(Generic[EntryT]):
    """Sends one HTTP answer and writes what was sent into the record."""

    __slots__ = ("dropped", "receive", "record", "send", "session_header", "started", "streaming")

    refusal_unran: ClassVar[bool] = False
    """Whether an error status on a `tools/call` not yet judged marks it as never run (the fake's ledger)."""

    @staticmethod
    def dumps(payload: Any) -> bytes:
        """A message as the side's JSON bytes (each side gives its encoder)."""
        raise NotImplementedError

    def __init__(self, send: Send, record: EntryT, receive: Receive | None = None) -> None:
        self.send = send
        self.record = record
        self.receive = receive
        """The request's ASGI receive, once its body is read: what tells that the client left."""
        self.session_header: list[tuple[bytes, bytes]] = []
        self.started = False
        self.streaming = False
        self.dropped = False

    async def json(
        self,
        status: int,
        payload: Any,
        headers: list[tuple[bytes, bytes]] | None = None,
        content_type: bytes = JSON,
    ) -> None:
        body = b"" if payload is None else self.dumps(payload)
        self.record.keep_response(body)
        await self.raw(status, body, content_type, headers)

    async def raw(
        self, status: int, body: bytes, content_type: bytes | None, headers: list[tuple[bytes, bytes]] | None = None
    ) -> None:
        record = self.record
        record.status = status
        if status >= 400 and self.refusal_unran and record.executed is None and record.rpc_method == "tools/call":
            record.executed = False  # refused before dispatch (a header or capability check): it never ran
        raw = [(b"content-length", str(len(body)).encode()), *self.session_header]
        if body and content_type is not None:
            raw.append((b"content-type", content_type))
        if headers:
            raw.extend(headers)
        self.started = True
        await self.send({"type": "http.response.start", "status": status, "headers": raw})
        await self.send({"type": "http.response.body", "body": body})

    async def drop(self, reason: str = "connection dropped by a fault") -> None:
        """Close the connection without (finishing) an answer, as a crashed server or proxy does."""
        self.record.error = reason
        self.dropped = True
        transport = getattr(getattr(self.send, "__self__", None), "transport", None)
        if transport is None:
            # In-process (ASGI) there is no socket to close: fail the client's request the way httpx2 would.
            import httpx2

            raise httpx2.RemoteProtocolError("Server disconnected without sending a complete response.")
        transport.abort()
        # Let the server see the disconnect before the app returns, so it does not answer 500 instead.
        await anyio.lowlevel.checkpoint()
        await anyio.lowlevel.checkpoint()

    async def error(
        self, status: int, code: int, message: str, headers: list[tuple[bytes, bytes]] | None = None
    ) -> None:
        """Refuse the request with a JSON-RPC error body (`id` null, as the spec's transports do)."""
        self.record.error = message
        await self.json(status, error_message(None, code, message), headers)

    async def refuse(self, refused: Any) -> None:
        """Answer a refusal (a `server._framing._refusals.Refusal`): its status and JSON-RPC error (bare without
        a code)."""
        record = self.record
        record.error = refused.message
        if refused.code is None:
            await self.raw(refused.status, b"", None)
            return
        request_id = record.rpc_id if refused.request_id else None
        await self.json(refused.status, error_message(request_id, refused.code, refused.message, refused.data))

    async def start_body(self, status: int, content_type: bytes, length: int | None) -> None:
        """Send the status and headers of a body that follows in `chunk`s (`length` bytes, when known)."""
        self.record.status = status
        self.started = True
        raw = [(b"content-type", content_type), *self.session_header]
        if length is not None:
            raw.append((b"content-length", str(length).encode()))
        await self.send({"type": "http.response.start", "status": status, "headers": raw})

    async def end_body(self) -> None:
        """End a body sent in `chunk`s."""
        await self.send({"type": "http.response.body", "body": b""})

    async def until_gone(self) -> None:
        """Wait until the client leaves (closes the connection or gives up on the request)."""
        if self.receive is None:
            await anyio.sleep_forever()
            return
        while (await self.receive())["type"] != "http.disconnect":
            pass

    async def chunk(self, data: bytes) -> None:
        """Send bytes of an SSE stream as they are."""
        await self.send({"type": "http.response.body", "body": data, "more_body": True})

    async def open_sse(self, extra: tuple[tuple[bytes, bytes], ...] = ()) -> None:
        """Send the head of an SSE stream (status 200), with `extra` headers."""
        self.streaming = True
        self.started = True
        self.record.status = 200
        raw = [(b"content-type", SSE), (b"cache-control", b"no-cache"), *self.session_header, *extra]
        await self.send({"type": "http.response.start", "status": 200, "headers": raw})

    async def start_sse(self) -> None:
        """Start the answer as an SSE stream, unless it is one already."""
        if not self.streaming:
            await self.open_sse()

    async def end_sse(self) -> None:
        """End the SSE stream (started now if it was not yet: an empty stream)."""
        await self.start_sse()
        await self.send({"type": "http.response.body", "body": b""})
