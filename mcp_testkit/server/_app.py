"""The transport: one Streamable HTTP endpoint (POST, GET, DELETE), answered as JSON or SSE.

It owns everything HTTP: headers, statuses, sessions ids, framing. It checks path, Host,
Origin and required headers before it reads a body (only up to `max_body`; the server's
protocol bounds the time with `body_timeout`), records the request in the journal before it
answers anything, asks the fault plan, and hands JSON-RPC to the dispatcher. A last-resort
guard answers any crash of its own with a JSON-RPC -32603 (500), journaled, so that the journal
always holds the status sent.
Written as a bare ASGI callable because it sits on every request of every test.
"""

from __future__ import annotations

import functools
import hmac
import json
import time
import traceback
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import anyio
import anyio.lowlevel

from mcp_testkit import faults
from mcp_testkit._asgi import BODY_PREFIX, Receive, Scope, Send, cancel_on_disconnect, lifespan, read_body
from mcp_testkit._eras import HANDSHAKE, HANDSHAKE_VERSIONS, STATELESS
from mcp_testkit._json import JsonError, loads
from mcp_testkit._runner import BODY_TIMED_OUT
from mcp_testkit.journal import Headers, Record
from mcp_testkit.server import _stateless
from mcp_testkit.server._paging import page_number
from mcp_testkit.server._protocol import (
    CANCELLED,
    DEFAULT_VERSION,
    INTERNAL_ERROR,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    Call,
    dispatch,
    error_response,
    handle_notification,
)
from mcp_testkit.server._resume import EventLog, StoredEvent, StreamPlan, sse_frame

if TYPE_CHECKING:
    from mcp_testkit.server._sessions import Session
    from mcp_testkit.server._state import ServerState

__all__ = ["JOURNAL_PREFIX", "McpApp", "ServerCrash"]

SESSION_NOT_FOUND = "Session not found: it has ended; re-initialize (send initialize without Mcp-Session-Id)"
"""The 404 message: it starts as the SDK's own does, then says what a client should do."""
_JSON = b"application/json"
_SSE = b"text/event-stream"


_ENCODER = json.JSONEncoder(separators=(",", ":"))


def _dumps(payload: Any) -> bytes:
    return _ENCODER.encode(payload).encode()


def _hostname(value: str) -> str:
    """The host part of a Host header or an Origin's authority: no port, no IPv6 brackets."""
    if value.startswith("["):
        return value[1 : value.find("]")] if "]" in value else value
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


def _accepts(accept: str, wanted: str) -> bool:
    kind = wanted.split("/", 1)[0]
    for part in accept.split(","):
        media = part.split(";", 1)[0].strip().lower()
        if media in (wanted, "*/*", f"{kind}/*"):
            return True
    return False


@functools.lru_cache(maxsize=64)
def _accepts_both(accept: str) -> bool:
    """Whether a POST's Accept lists both JSON and SSE; clients send the same value every time."""
    return _accepts(accept, "application/json") and _accepts(accept, "text/event-stream")


JOURNAL_PREFIX = BODY_PREFIX
"""How many bytes of a body refused for its size the journal keeps."""


class ServerCrash(Exception):
    """mcp-testkit itself failed on a request (a bug of ours): answered -32603/500, kept for `server.check()`."""


class _Response:
    """Sends one HTTP answer and writes what was sent into the record."""

    __slots__ = (
        "dropped",
        "event_ids",
        "message",
        "parse_error",
        "plan",
        "record",
        "send",
        "session_header",
        "started",
        "streaming",
    )

    def __init__(self, send: Send, record: Record) -> None:
        self.send = send
        self.record = record
        self.session_header: list[tuple[bytes, bytes]] = []
        self.streaming = False
        self.started = False
        self.dropped = False
        self.event_ids = True
        """Whether SSE events carry an `id:` (the stateless era has no resumable streams, so none)."""
        self.message: Any = None
        """The decoded body; kept here rather than in the record, which keeps only the bytes."""
        self.parse_error: str | None = None
        self.plan: StreamPlan | None = None
        """For an SSE answer of the handshake era: events kept for resumption, priming, a scripted break."""

    async def json(
        self,
        status: int,
        payload: Any,
        headers: list[tuple[bytes, bytes]] | None = None,
        content_type: bytes = _JSON,
    ) -> None:
        body = b"" if payload is None else _dumps(payload)
        self.record.response = None
        self.record._response_raw = body or None
        await self.raw(status, body, content_type, headers)

    async def raw(
        self, status: int, body: bytes, content_type: bytes | None, headers: list[tuple[bytes, bytes]] | None = None
    ) -> None:
        self.record.status = status
        if status >= 400 and self.record.executed is None and self.record.rpc_method == "tools/call":
            self.record.executed = False  # refused before dispatch (a header or capability check): it never ran
        raw = [(b"content-length", str(len(body)).encode()), *self.session_header]
        if body and content_type is not None:
            raw.append((b"content-type", content_type))
        if headers:
            raw.extend(headers)
        self.started = True
        await self.send({"type": "http.response.start", "status": status, "headers": raw})
        await self.send({"type": "http.response.body", "body": body})

    async def drop(self) -> None:
        """Close the connection without (finishing) an answer, as a crashed server or proxy does."""
        self.record.error = "connection dropped by a fault"
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
        await self.json(status, error_response(None, code, message), headers)

    async def start_sse(self) -> None:
        if self.streaming:
            return
        self.streaming = True
        self.started = True
        self.record.status = 200
        raw = [(b"content-type", _SSE), (b"cache-control", b"no-cache"), *self.session_header]
        if not self.event_ids:
            raw.append((b"x-accel-buffering", b"no"))  # 2026-07-28: so that no proxy holds the events back
        await self.send({"type": "http.response.start", "status": 200, "headers": raw})
        plan = self.plan
        if plan is not None:
            if plan.break_after == 0:
                await self._break(plan)
            if plan.prime:
                await self._emit(plan, plan.next_id(), b"", plan.retry_ms)

    def frame(self, state: ServerState, data: bytes) -> bytes:
        """One SSE `message` event carrying `data`, with an id where the era has them."""
        return sse_frame(state.event_ids() if self.event_ids else None, data)

    async def event(self, state: ServerState, message: Any, *, answer: bool = False) -> None:
        """Send one SSE event; `answer` marks the response to the request, which the record keeps."""
        data = _dumps(message)
        if answer:
            self.record.response = None
            self.record._response_raw = data
        if self.plan is not None:
            await self._emit(self.plan, state.event_ids(), data, answer=answer)
            return
        await self.send({"type": "http.response.body", "body": self.frame(state, data), "more_body": True})

    async def _emit(
        self, plan: StreamPlan, event_id: int, data: bytes, retry_ms: int | None = None, *, answer: bool = False
    ) -> None:
        """Keep the event for replay and send it, unless the stream's connection was broken already."""
        frame = sse_frame(event_id, data, retry_ms)
        plan.keep(StoredEvent(event_id, frame, data if answer else None))
        if plan.broken:
            return
        await self.send({"type": "http.response.body", "body": frame, "more_body": True})
        plan.sent += 1
        if plan.sent == plan.break_after:
            await self._break(plan)

    async def _break(self, plan: StreamPlan) -> None:
        """End the connection's response without ending the stream (a `BreakStream`), after a `retry:`."""
        plan.broken = True
        if plan.break_retry_ms is not None:
            retry = b"retry: %d\n\n" % plan.break_retry_ms
            await self.send({"type": "http.response.body", "body": retry, "more_body": True})
        await self.send({"type": "http.response.body", "body": b""})
        kept = "; its other events wait for a GET with Last-Event-ID" if plan.stream is not None else ""
        self.record.error = f"SSE stream broken by a fault after {plan.sent} event{'s' * (plan.sent != 1)}{kept}"

    async def end_sse(self) -> None:
        await self.start_sse()
        plan = self.plan
        if plan is not None:
            if plan.stream is not None:
                plan.stream.finish()
            if plan.broken:
                return
        await self.send({"type": "http.response.body", "body": b""})


class McpApp:
    """The ASGI app of a `TestMcpServer`; reads the server's current state on every request."""

    get_stream_hint = "TestMcpServer(get_stream=True)"
    """What the 405 to a GET names as the way to open a GET stream (`mcp-testkit serve` names its option)."""

    def __init__(self, state: Callable[[], ServerState]) -> None:
        self._state = state

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        state = self._state()
        journal = state.journal
        record = Record(
            seq=0,  # numbered when journaled: after the body is read, so that seq follows the fault plan's order
            at=time.time(),
            http_method=scope["method"],
            path=scope["path"],
            headers=Headers(scope["headers"], state.hidden),
            body=b"",
        )
        record.session_id = record.headers.get("mcp-session-id")
        out = _Response(send, record)
        try:
            await self._handle(state, scope, receive, out)
        except Exception as exc:
            if out.dropped:
                raise  # in-process, a dropped connection is this exception, on purpose
            _admit(journal, record)
            await _crashed(state, out, exc)
        finally:
            if out.plan is not None and out.plan.stream is not None:
                out.plan.stream.finish()  # whatever happened, a GET following this stream must not wait forever
            _admit(journal, record)
            journal._finish(record)

    async def _handle(self, state: ServerState, scope: Scope, receive: Receive, out: _Response) -> None:
        """Check what needs no body, read the body (bounded), journal the request, then answer it."""
        record = out.record
        method = scope["method"]
        refusal = _refusal(state, scope, record.headers)
        if refusal is None and method == "POST":
            refusal = await _read(state, scope, receive, out)
        elif refusal is not None and refusal[0] == 401 and method == "POST":
            # A wrong credential is a scripted test condition, not an attack: read the (bounded) body
            # anyway, so the journal shows which call was refused; a size or time problem wins.
            refusal = await _read(state, scope, receive, out) or refusal
        _admit(state.journal, record)
        if refusal is not None:
            status, code, message, extra = refusal
            if status == 401:
                required, missing = extra
                await _refuse_credentials(out, required.name, required.status, scope, missing)
            else:
                await out.error(status, code, message, extra)
                if status == 413 and record.body:
                    record.error = f"{message}; the journal keeps its first {len(record.body)} bytes (cut)"
            return
        if method == "POST":
            await self._post(state, out)
        elif method == "GET":
            await self._get(state, receive, out)
        elif method == "DELETE":
            await self._delete(state, out)
        else:
            allow = b"GET, POST, DELETE" if state.allow_delete else b"GET, POST"
            await out.error(405, INVALID_REQUEST, f"HTTP {method} is not supported", [(b"allow", allow)])

    async def _session(self, state: ServerState, out: _Response) -> Session | None:
        """The request's live session; answers 400 (no id) or 404 (unknown id) and returns None."""
        record = out.record
        session_id = record.session_id
        if session_id is None:
            await out.error(400, INVALID_REQUEST, "Bad Request: Missing Mcp-Session-Id header; send initialize first")
            return None
        session = state.sessions.get(session_id)
        if session is not None and session.expires_after is not None and session.requests >= session.expires_after:
            state.sessions.end(session.id)
            session.outbox.put(None)
            session = None
        if session is None:
            await out.error(state.sessions.unknown_status, INVALID_REQUEST, SESSION_NOT_FOUND)
            return None
        out.session_header = [(b"mcp-session-id", session_id.encode())]
        return session

    async def _post(self, state: ServerState, out: _Response) -> None:
        record = out.record
        headers = record.headers
        if not _accepts_both(headers.get("accept", "")):
            await out.error(
                406,
                INVALID_REQUEST,
                "Not Acceptable: Accept must list both application/json and text/event-stream",
            )
            return
        content_type = headers.get("content-type", "")
        if content_type.split(";", 1)[0].strip().lower() != "application/json":
            await out.error(415, INVALID_REQUEST, "Unsupported Media Type: Content-Type must be application/json")
            return
        if out.parse_error is not None or not record.body:
            reason = out.parse_error or "the body is empty"
            await out.error(400, PARSE_ERROR, f"Parse error: {reason}")
            return
        message = out.message
        version = headers.get("mcp-protocol-version")
        kind = None if isinstance(message, list) else _kind(message)
        if _stateless.serves_stateless(state, headers, message):
            await self._post_stateless(state, message, kind, out)
            return
        record.era = HANDSHAKE
        if record.rpc_method == "server/discover" and kind == "request":
            await self._discover_refused(state, out)
            return
        if version is not None and version not in HANDSHAKE_VERSIONS:
            await out.error(
                400,
                INVALID_REQUEST,
                f"Bad Request: unsupported MCP-Protocol-Version {version!r}; "
                f"supported: {', '.join(HANDSHAKE_VERSIONS)}",
            )
            return
        if isinstance(message, list):
            await self._post_batch(state, message, version, out)
            return
        if kind is None:
            await out.error(400, INVALID_REQUEST, "Invalid Request: the body is not a JSON-RPC 2.0 message")
            return
        if record.rpc_method == "initialize" and kind == "request":
            await self._initialize(state, message, out)
            return
        session = await self._session(state, out)
        if session is None:
            return
        session.requests += 1
        record.protocol_version = version or session.protocol_version or DEFAULT_VERSION
        fault = None
        if state.plan:
            params = message.get("params")
            cursor = params.get("cursor") if isinstance(params, dict) else None
            page = page_number(cursor) if record.rpc_method == "tools/list" else None
            fault = state.plan.take(record.rpc_method, record.tool, page, session.id)
            if fault is not None:
                record.fault = fault
                if record.rpc_method == "tools/call" and kind == "request":
                    # The ledger's answer for a faulted call: False unless the handler runs (dispatch says True).
                    record.executed = False
                if HANDSHAKE not in fault.eras:
                    await self._misplaced(state, fault, out)
                    return
                if await self._before_dispatch(state, fault, session, out):
                    return
        if kind != "request":
            record.error = handle_notification(message, session)
            if isinstance(fault, faults.Drop):
                await out.drop()
            else:
                await out.json(202, None)
            return
        await self._answer(state, message, session, out, fault)

    async def _post_batch(self, state: ServerState, batch: list[Any], version: str | None, out: _Response) -> None:
        record = out.record
        if not batch or any(_kind(m) is None for m in batch):
            await out.error(
                400, INVALID_REQUEST, "Invalid Request: a batch must be a non-empty list of JSON-RPC messages"
            )
            return
        if any(m.get("method") == "initialize" for m in batch):
            await out.error(400, INVALID_REQUEST, "Invalid Request: initialize must not be part of a batch")
            return
        session = await self._session(state, out)
        if session is None:
            return
        session.requests += 1
        negotiated = version or session.protocol_version
        record.protocol_version = negotiated
        if negotiated != "2025-03-26":
            await out.error(
                400,
                INVALID_REQUEST,
                f"Invalid Request: batches are only allowed under 2025-03-26, not {negotiated}",
            )
            return
        responses = []
        for message in batch:
            if _kind(message) != "request":
                handle_notification(message, session)
                continue
            call = Call(state, record, session, negotiated)
            response = await dispatch(message, call)
            if response is not CANCELLED:
                responses.append(response)
        if not responses:
            await out.json(202, None)
        elif self._mode(state, record) == "sse":
            await out.start_sse()
            record.response = responses
            for response in responses:
                await out.event(state, response)
            await out.end_sse()
        else:
            await out.json(200, responses)

    async def _initialize(self, state: ServerState, message: dict[str, Any], out: _Response) -> None:
        record = out.record
        fault = state.plan.take("initialize", None, None, None) if state.plan else None
        if fault is not None:
            record.fault = fault
            if HANDSHAKE not in fault.eras:
                await self._misplaced(state, fault, out)
                return
            if await self._before_dispatch(state, fault, None, out):
                return

        def open_session(response: Any) -> None:
            result = response.get("result") if isinstance(response, dict) else None
            if result is None:
                return
            client_info = (record.params or {}).get("clientInfo")
            session = state.sessions.open(
                result["protocolVersion"], client_info if isinstance(client_info, dict) else None
            )
            record.session_id = session.id
            record.protocol_version = session.protocol_version
            out.session_header = [(b"mcp-session-id", session.id.encode())]
            if isinstance(fault, faults.LoseSession):
                state.sessions.end(session.id)

        await self._answer(state, message, None, out, fault, open_session)

    async def _discover_refused(self, state: ServerState, out: _Response) -> None:
        """A server of the handshake era only refuses the 2026-07-28 probe, sending clients to initialize."""
        record = out.record
        record.protocol_version = record.headers.get("mcp-protocol-version")
        fault = state.plan.take("server/discover", None, None, None) if state.plan else None
        if fault is not None:
            record.fault = fault
            refused = _stateless.fault_refusal(state, fault, record.protocol_version)
            if isinstance(fault, faults.DiscoverError) and refused is not None:
                await self._refuse(out, refused)
                return
            if HANDSHAKE not in fault.eras:
                await self._misplaced(state, fault, out)
                return
            if await self._before_dispatch(state, fault, None, out):
                return
        reason = "Method not found: server/discover (this server speaks the handshake era only: send initialize)"
        await out.json(200, error_response(record.rpc_id, METHOD_NOT_FOUND, reason))

    async def _post_stateless(self, state: ServerState, message: Any, kind: str | None, out: _Response) -> None:
        """A 2026-07-28 request: checked, faulted, dispatched, answered; no session is read, made or echoed."""
        record = out.record
        record.era = STATELESS
        record.session_id = None  # an older client's Mcp-Session-Id is ignored, as the spec says
        out.event_ids = False
        params = message.get("params") if kind is not None else None
        meta = params.get("_meta") if isinstance(params, dict) else None
        if not isinstance(meta, dict):
            meta = {}
        version = meta.get(_stateless.VERSION_KEY)
        record.protocol_version = version if isinstance(version, str) else record.headers.get("mcp-protocol-version")
        refused = _stateless.refusal(state, record.headers, message, kind)
        if refused is not None:
            await self._refuse(out, refused)
            return
        if kind == "notification":
            # The era defines no client notifications over HTTP (closing a stream cancels): accepted, dropped.
            await out.json(202, None)
            return
        fault = None
        if state.plan:
            cursor = params.get("cursor") if isinstance(params, dict) else None
            page = None
            if record.rpc_method == "tools/list":
                empty = state.empty_cursor
                page = empty.page if cursor == "" and empty is not None else page_number(cursor)
            fault = state.plan.take(record.rpc_method, record.tool, page, None, STATELESS)
            if fault is not None:
                record.fault = fault
                if record.rpc_method == "tools/call":
                    record.executed = False
                if STATELESS not in fault.eras:
                    await self._misplaced(state, fault, out)
                    return
                refused = _stateless.fault_refusal(state, fault, record.protocol_version)
                if refused is not None:
                    await self._refuse(out, refused)
                    return
                if await self._before_dispatch(state, fault, None, out):
                    return
        call = _stateless.call_for(state, record, meta, fault)
        method = record.rpc_method or ""
        await self._answer(
            state, message, None, out, fault, lambda response: _stateless.decorate(state, method, response), call
        )

    async def _refuse(self, out: _Response, refused: _stateless.Refusal) -> None:
        """Answer a refusal: its status and JSON-RPC error (a bare status when it has no code)."""
        record = out.record
        record.error = refused.message
        if refused.code is None:
            await out.raw(refused.status, b"", None)
            return
        request_id = record.rpc_id if refused.request_id else None
        await out.json(refused.status, error_response(request_id, refused.code, refused.message, refused.data))

    async def _misplaced(self, state: ServerState, fault: faults.Fault, out: _Response) -> None:
        """A fault hit a request of an era it means nothing in: say so loudly, to the client and in `check()`."""
        record = out.record
        reason = faults.misplaced(fault, record.era or HANDSHAKE)
        state.errors.append(faults.MisplacedFault(reason))
        record.error = reason
        await out.json(500, error_response(record.rpc_id, INTERNAL_ERROR, f"mcp-testkit: {reason}"))

    async def _before_dispatch(
        self, state: ServerState, fault: faults.Fault, session: Session | None, out: _Response
    ) -> bool:
        """Apply what a fault does before the request runs; True when that already answered it."""
        if isinstance(fault, faults.Delay):
            await anyio.sleep(fault.seconds)
        elif isinstance(fault, faults.HttpStatus):
            body, content_type = fault.body_bytes()
            headers = [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in fault.headers or ()]
            out.record.response = fault.body if not isinstance(fault.body, bytes) else None
            await out.raw(fault.status, body, content_type, headers)
            return True
        elif isinstance(fault, faults.Accepted):
            await out.json(202, None)
            return True
        elif isinstance(fault, faults.Drop) and not fault.after_execution:
            await out.drop()
            return True
        elif isinstance(fault, faults.LoseSession) and session is not None:
            state.sessions.end(session.id)
            session.outbox.put(None)
            await out.error(state.sessions.unknown_status, INVALID_REQUEST, SESSION_NOT_FOUND)
            return True
        elif isinstance(fault, faults.Restart):
            for lost in state.sessions.alive:
                lost.outbox.put(None)
            state.sessions.end_all()
            state.sessions.unknown_status = fault.unknown_session_status
            if session is not None:
                await out.error(fault.unknown_session_status, INVALID_REQUEST, SESSION_NOT_FOUND)
                return True
        elif isinstance(fault, faults.ExpireSession) and session is not None:
            session.expires_after = session.requests + fault.after_requests
        return False

    async def _answer(
        self,
        state: ServerState,
        message: dict[str, Any],
        session: Session | None,
        out: _Response,
        fault: faults.Fault | None,
        on_response: Callable[[Any], None] | None = None,
        call: Call | None = None,
    ) -> None:
        """Run a request and frame its answer (JSON or SSE), applying what a fault does afterwards."""
        record = out.record
        if call is None:
            call = Call(state, record, session, record.protocol_version or DEFAULT_VERSION, fault=fault)
        if isinstance(fault, (faults.EndStream, faults.MalformedSse, faults.BreakStream)):
            sse = True
        elif isinstance(fault, (faults.ListChanged, faults.CatalogueChange)) and (
            session is None or not session.outbox.streaming
        ):
            # No GET stream to carry list_changed: it rides on this page's own SSE stream, or it is lost.
            sse = True
        else:
            sse = self._mode(state, record) == "sse" and not isinstance(fault, faults.WrongContentType)
        if sse and call.era != STATELESS:
            out.plan = _stream_plan(state, record, session, fault)
            if out.plan is not None and (out.plan.prime or out.plan.break_after == 0):
                await out.start_sse()  # before the request runs: a client can resume from the start
        if sse:

            async def notify(notification: dict[str, Any]) -> None:
                await out.start_sse()
                await out.event(state, notification)

            call.notify = notify
            if session is not None and session.outbox.queue and not session.outbox.streaming:
                await out.start_sse()
                await self._drain_outbox(state, session, out)
        elif session is not None:
            call.notify = session.outbox.put_async
        response = await dispatch(message, call)
        if isinstance(fault, faults.LateAnswer):
            await anyio.sleep(fault.seconds)
        if on_response is not None:
            on_response(response)
        status = 200
        if call.era == STATELESS:
            status = _stateless.error_status(response)
            shapes_stream = isinstance(fault, (faults.EndStream, faults.MalformedSse, faults.TruncateBody))
            if status != 200 and sse and not shapes_stream and not out.streaming:
                sse = False  # an error before any event: JSON with its status, so a 404 or 400 reaches the client
        if response is CANCELLED:
            # Nothing may be sent for a cancelled request; an SSE stream that ends empty says just that.
            await out.end_sse()
        elif isinstance(fault, faults.Drop):
            await out.drop()
        elif sse:
            await self._stream_answer(state, response, fault, out)
        elif isinstance(fault, faults.TruncateBody):
            body = _dumps(response)
            await out.raw(200, body[: len(body) // 2], _JSON)
        elif isinstance(fault, faults.WrongContentType):
            await out.json(status, response, content_type=fault.content_type.encode("latin-1"))
        else:
            await out.json(status, response)

    async def _stream_answer(
        self, state: ServerState, response: Any, fault: faults.Fault | None, out: _Response
    ) -> None:
        await out.start_sse()
        if isinstance(fault, faults.MalformedSse):
            frame = out.frame(state, b"{this is not json")
            await out.send({"type": "http.response.body", "body": frame, "more_body": True})
        elif isinstance(fault, faults.TruncateBody):
            frame = out.frame(state, _dumps(response))[:-2]
            await out.send({"type": "http.response.body", "body": frame[: len(frame) // 2], "more_body": True})
        elif not isinstance(fault, faults.EndStream):
            await out.event(state, response, answer=True)
        await out.end_sse()

    @staticmethod
    def _mode(state: ServerState, record: Record) -> str:
        mode = state.response_mode
        return mode(record) if callable(mode) else mode  # type: ignore[no-any-return]

    @staticmethod
    async def _drain_outbox(state: ServerState, session: Session, out: _Response) -> None:
        """Send queued server notifications on this response when no GET stream carries them."""
        outbox = session.outbox
        while outbox.queue and not outbox.streaming:
            message = outbox.queue.popleft()
            if message is not None:
                await out.event(state, message)

    async def _stateless_refuses(self, state: ServerState, out: _Response) -> bool:
        """GET and DELETE of an older client to a server in the stateless era: 405 (no stream, no session)."""
        record = out.record
        if not _stateless.serves_stateless(state, record.headers, None):
            record.era = HANDSHAKE
            return False
        record.era = STATELESS
        record.session_id = None
        await out.error(
            405,
            INVALID_REQUEST,
            f"HTTP {record.http_method} has no meaning in the stateless era (2026-07-28): "
            "it has no stream and no session; POST each request",
            [(b"allow", b"POST")],
        )
        return True

    async def _get(self, state: ServerState, receive: Receive, out: _Response) -> None:
        if await self._stateless_refuses(state, out):
            return
        if not _accepts(out.record.headers.get("accept", ""), "text/event-stream"):
            await out.error(406, INVALID_REQUEST, "Not Acceptable: a GET stream needs Accept: text/event-stream")
            return
        last_event_id = out.record.headers.get("last-event-id")
        if last_event_id is not None:
            await self._resume(state, receive, out, last_event_id)
            return
        if not state.get_stream:
            await out.error(
                405,
                INVALID_REQUEST,
                f"this server offers no GET stream ({self.get_stream_hint} opens one)",
                [(b"allow", b"POST, DELETE" if state.allow_delete else b"POST")],
            )
            return
        session = await self._session(state, out)
        if session is None:
            return
        out.record.protocol_version = out.record.headers.get("mcp-protocol-version") or session.protocol_version
        outbox = session.outbox
        if outbox.streaming:
            await out.error(409, INVALID_REQUEST, "Conflict: this session already has a GET stream open")
            return
        outbox.streaming = True
        try:
            await out.start_sse()
            async with anyio.create_task_group() as group:
                group.start_soon(cancel_on_disconnect, receive, group.cancel_scope)
                while True:
                    await outbox.wait()
                    message = outbox.queue.popleft()
                    if message is None:
                        break
                    await out.event(state, message)
                group.cancel_scope.cancel()
            await out.end_sse()
        finally:
            outbox.streaming = False

    async def _resume(self, state: ServerState, receive: Receive, out: _Response, last_event_id: str) -> None:
        """A GET with `Last-Event-ID`: replay what its stream sent after that event, then follow it to its end."""
        session = await self._session(state, out)
        if session is None:
            return
        record = out.record
        record.protocol_version = record.headers.get("mcp-protocol-version") or session.protocol_version
        found = session.events.find(last_event_id) if session.events is not None else None
        if found is None:
            await out.error(
                400,
                INVALID_REQUEST,
                f"Bad Request: Last-Event-ID {last_event_id[:64]!r} names no event of a resumable stream of this "
                "session, so there is nothing to replay (TestMcpServer(resumable=True) keeps the events of POST "
                "streams, and a BreakStream fault those of the stream it breaks)",
            )
            return
        stream, cursor = found
        await out.start_sse()
        async with anyio.create_task_group() as group:
            group.start_soon(cancel_on_disconnect, receive, group.cancel_scope)
            while True:
                for event in stream.after(cursor):
                    await out.send({"type": "http.response.body", "body": event.frame, "more_body": True})
                    cursor = event.event_id
                    if event.answer is not None:
                        record.response = None
                        record._response_raw = event.answer
                if stream.done:
                    break
                await stream.changed()
            group.cancel_scope.cancel()
        await out.end_sse()

    async def _delete(self, state: ServerState, out: _Response) -> None:
        if await self._stateless_refuses(state, out):
            return
        if not state.allow_delete:
            await out.error(
                405,
                INVALID_REQUEST,
                "this server does not let clients end sessions",
                [(b"allow", b"GET, POST")],
            )
            return
        session = await self._session(state, out)
        if session is None:
            return
        state.sessions.end(session.id)
        session.outbox.put(None)
        await out.json(200, None)


def _stream_plan(
    state: ServerState, record: Record, session: Session | None, fault: faults.Fault | None
) -> StreamPlan | None:
    """What happens to a handshake-era POST's SSE stream: kept for replay when the server is resumable or a
    `BreakStream` breaks it (in a session: `initialize` has none yet), primed when resumable from 2025-11-25."""
    breaks = fault if isinstance(fault, faults.BreakStream) else None
    if not state.resumable and breaks is None:
        return None
    plan = StreamPlan(state.event_ids, retry_ms=state.retry_ms)
    if session is not None:
        if session.events is None:
            session.events = EventLog()
        plan.log = session.events
        plan.stream = session.events.open(record.seq)
        # Clients before 2025-11-25 may not expect an event with empty data, as the SDK's server reasons too.
        plan.prime = state.resumable and (record.protocol_version or DEFAULT_VERSION) >= "2025-11-25"
    if breaks is not None:
        plan.break_after, plan.break_retry_ms = breaks.after_events, breaks.retry_ms
    return plan


def _describe(record: Record, message: dict[str, Any]) -> None:
    """Copy the JSON-RPC method, id and tool of a message into its record (the rest is decoded on demand)."""
    method = message.get("method")
    record.rpc_method = method if isinstance(method, str) else None
    record.rpc_id = message.get("id")
    if record.rpc_method == "tools/call":
        params = message.get("params")
        name = params.get("name") if isinstance(params, dict) else None
        record.tool = name if isinstance(name, str) else None


def _kind(message: Any) -> str | None:
    """'request', 'notification' or 'response' for a JSON-RPC 2.0 message, None for anything else."""
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return None
    method = message.get("method")
    if method is not None:
        if not isinstance(method, str):
            return None
        if "id" not in message:
            return "notification"
        request_id = message["id"]
        return "request" if isinstance(request_id, (str, int)) and not isinstance(request_id, bool) else None
    if "id" in message and ("result" in message or "error" in message):
        return "response"
    return None


async def _refuse_credentials(out: _Response, name: str, status: int, scope: Scope, missing: bool) -> None:
    """401 (or 403) with an OAuth-style body and challenge; never echoes what the client sent."""
    if status == 403:
        error, description = "insufficient_scope", f"the {name} header does not grant access to this server"
        challenge = 'Bearer error="insufficient_scope"'
    else:
        error = "invalid_token"
        description = f"{'missing' if missing else 'wrong'} {name} header"
        server = dict(scope.get("headers", [])).get(b"host", b"127.0.0.1").decode("latin-1")
        challenge = f'Bearer resource_metadata="http://{server}/.well-known/oauth-protected-resource"'
    out.record.error = description
    await out.json(
        status,
        {"error": error, "error_description": description},
        [(b"www-authenticate", challenge.encode())],
    )


Refusal = tuple[int, int, str, Any]
"""(HTTP status, JSON-RPC code, message, extra): extra is response headers, or for 401 (required header, missing)."""


def _admit(journal: Any, record: Record) -> None:
    """Number the record and put it in the journal, once."""
    if not record.seq:
        record.seq = journal._next_seq()
        journal._append(record)


def _refusal(state: ServerState, scope: Scope, headers: Mapping[str, str]) -> Refusal | None:
    """Why the request is refused before its body is read (path, Host, Origin, required headers), or None."""
    if scope["path"] != state.path:
        return 404, INVALID_REQUEST, f"no MCP endpoint at {scope['path']}: the endpoint is {state.path}", None
    hosts = [value for name, value in scope["headers"] if name == b"host"]
    if len(hosts) > 1 or (not hosts and scope.get("http_version", "1.1") != "1.0"):
        problem = "more than one Host header" if hosts else "no Host header"
        return 400, INVALID_REQUEST, f"Bad Request: {problem} (RFC 9112 wants exactly one)", None
    allowed = state.allowed_hosts
    host = headers.get("host")
    if host is not None and "*" not in allowed and _hostname(host).lower() not in allowed:
        return 421, INVALID_REQUEST, f"Host {host!r} is not a loopback name (DNS rebinding protection)", None
    origin = headers.get("origin")
    if (
        origin is not None
        and "*" not in allowed
        and _hostname(origin.partition("://")[2].split("/", 1)[0]).lower() not in allowed
    ):
        return 403, INVALID_REQUEST, f"Origin {origin!r} is not allowed (DNS rebinding protection)", None
    for required in tuple(state.required.values()):  # a snapshot: scripting may add one from another thread
        value = headers.get(required.name)
        if value is None or not hmac.compare_digest(value.encode(), required.value.encode()):
            return 401, INVALID_REQUEST, "", (required, value is None)
    return None


async def _read(state: ServerState, scope: Scope, receive: Receive, out: _Response) -> Refusal | None:
    """Read and decode a POST body into the record; the refusal (413, 408) when it is too big or too slow."""
    record = out.record
    limit = state.max_body
    close = [(b"connection", b"close")]  # the rest of the body is never read: this connection is done
    declared = _declared_length_of(record)
    if declared is not None and declared > limit:
        message = f"Payload Too Large: the body (Content-Length {declared}) exceeds max_body ({limit} bytes); not read"
        return 413, INVALID_REQUEST, message, close
    body, size = await read_body(receive, limit)
    if scope.get(BODY_TIMED_OUT):  # set by the server's protocol when the body took longer than body_timeout
        message = f"Request Timeout: the body did not arrive within {state.body_timeout} s (body_timeout)"
        return 408, INVALID_REQUEST, message, close
    record.body = body
    if size is not None:
        message = f"Payload Too Large: the body exceeds max_body ({limit} bytes); not read past {size} bytes"
        return 413, INVALID_REQUEST, message, close
    if body:
        # Decoded before the other checks, so that even a refused request shows what it asked for.
        try:
            out.message = loads(body)
        except JsonError as exc:
            out.parse_error = str(exc)
        else:
            if isinstance(out.message, dict):
                _describe(record, out.message)
    return None


def _declared_length_of(record: Record) -> int | None:
    value = record.headers.get("content-length")
    if value is None:
        return None
    try:
        return int(value)
    except ValueError:
        return None


async def _crashed(state: ServerState, out: _Response, exc: Exception) -> None:
    """The last resort: a crash of ours is a journaled -32603/500 (if nothing was sent yet) and fails `check()`."""
    record = out.record
    detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    crash = ServerCrash(f"mcp-testkit failed on request #{record.seq} ({record.summary()}): {detail}")
    crash.__cause__ = exc
    state.errors.append(crash)
    message = f"Internal error: mcp-testkit failed on this request ({detail}); please report it"
    if not out.started:
        await out.error(500, INTERNAL_ERROR, message)
        return
    record.error = message
    if out.streaming:
        try:
            await out.send({"type": "http.response.body", "body": b""})
        except Exception:  # the connection is gone too
            pass
