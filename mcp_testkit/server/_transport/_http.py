"""The HTTP transport both eras share: refusals before the body, body reading, the response and its framing.

Everything HTTP lives here: headers, statuses, framing as JSON or SSE. `McpApp` (`_app.py`) checks
path, Host, Origin and required headers with `refusal` before it reads a body (only up to
`max_body`; the server's protocol bounds the time with `body_timeout`), then routes the request to
its era (`_handshake.py` or `_stateless.py`), which calls `answer` to run it and frame the answer.
Written as bare ASGI because it sits on every request of every test.
"""

from __future__ import annotations

import functools
import hmac
import traceback
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from mcp_testkit import faults
from mcp_testkit._wire.answer import Answer
from mcp_testkit._wire.asgi import BODY_PREFIX, Receive, Scope, Send, cancel_on_disconnect, lifespan, read_body
from mcp_testkit._wire.connection import SocketWire
from mcp_testkit._wire.eras import HANDSHAKE
from mcp_testkit._wire.origin import hostname
from mcp_testkit._wire.runner import BODY_TIMED_OUT
from mcp_testkit._wire.strict_json import JsonError, loads
from mcp_testkit.server._dispatch._protocol import (
    CANCELLED,
    INTERNAL_ERROR,
    INVALID_REQUEST,
    PARSE_ERROR,
    Call,
    dispatch,
    dumps,
    error_response,
)
from mcp_testkit.server._effects import effect_of
from mcp_testkit.server._framing._streams import StreamPlan, sse_frame
from mcp_testkit.server._state._events import StoredEvent

if TYPE_CHECKING:
    from mcp_testkit._wire.headers import Headers
    from mcp_testkit.journal import Record
    from mcp_testkit.server._effects import Effect
    from mcp_testkit.server._state import ServerState
    from mcp_testkit.server._state._sessions import Session

__all__ = [
    "JOURNAL_PREFIX",
    "Blocked",
    "Receive",
    "Response",
    "Scope",
    "Send",
    "ServerCrash",
    "accepts",
    "admit",
    "answer",
    "blocked",
    "cancel_on_disconnect",
    "crashed",
    "describe",
    "faulted",
    "header",
    "kind_of",
    "lifespan",
    "read",
    "read_body",
    "refuse_credentials",
    "usable_post",
]


_NO_BUFFERING = ((b"x-accel-buffering", b"no"),)
"""2026-07-28's SSE answers carry no event ids, and this header: so that no proxy holds the events back."""

JOURNAL_PREFIX = BODY_PREFIX
"""How many bytes of a body refused for its size the journal keeps."""

header: Callable[[Headers, str], str | None] = dict.get
"""A request header by its lower-case name: `Headers` keeps names lower-case, so the transport and the eras,
which name headers in lower case, look them up directly (`Headers.get` lower-cases every name it is given)."""


class ServerCrash(Exception):
    """mcp-testkit itself failed on a request (a bug of ours): answered -32603/500, kept for `server.check()`."""


@functools.lru_cache(maxsize=256)
def _foreign(host: str, allowed: frozenset[str]) -> bool:
    """Whether a Host header names no allowed host; a client sends the same one every time."""
    return "*" not in allowed and hostname(host).lower() not in allowed


def accepts(accept: str, wanted: str) -> bool:
    """Whether an Accept header's value lists `wanted` (or a wildcard that covers it)."""
    kind = wanted.split("/", 1)[0]
    for part in accept.split(","):
        media = part.split(";", 1)[0].strip().lower()
        if media in (wanted, "*/*", f"{kind}/*"):
            return True
    return False


@functools.lru_cache(maxsize=64)
def _accepts_both(accept: str) -> bool:
    """Whether a POST's Accept lists both JSON and SSE; clients send the same value every time."""
    return accepts(accept, "application/json") and accepts(accept, "text/event-stream")


class Response(Answer):
    """Sends one HTTP answer of the fake and writes what was sent into the record (`Answer` frames it)."""

    __slots__ = ("event_ids", "headers", "message", "parse_error", "plan")

    refusal_unran = True
    dumps = staticmethod(dumps)

    def __init__(self, send: Send, record: Record, headers: Headers, receive: Receive | None = None) -> None:
        Answer.__init__(self, send, record, receive)
        self.headers = headers
        """The request's headers (the record's): read with `header`, which skips the lower-casing of `Headers.get`."""
        self.event_ids = True
        """Whether SSE events carry an `id:` (the stateless era has no resumable streams, so none)."""
        self.message: Any = None
        """The decoded body; kept here rather than in the record, which keeps only the bytes."""
        self.parse_error: str | None = None
        self.plan: StreamPlan | None = None
        """For an SSE answer of the handshake era: events kept for resumption, priming, a scripted break."""

    async def start_sse(self) -> None:
        if self.streaming:
            return
        await self.open_sse(() if self.event_ids else _NO_BUFFERING)
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
        data = dumps(message)
        if answer:
            self.record.keep_response(data)
        if self.plan is not None:
            await self._emit(self.plan, state.event_ids(), data, answer=answer)
            return
        await self.send({"type": "http.response.body", "body": self.frame(state, data), "more_body": True})

    async def last_event(self, state: ServerState, response: Any) -> None:
        """Send the answer as the SSE stream's last event and end the stream: one body message for both when
        no plan keeps or breaks the stream (the same bytes on the wire, one send fewer)."""
        if self.plan is not None:
            await self.start_sse()
            await self.event(state, response, answer=True)
            await self.end_sse()
            return
        await self.start_sse()
        data = dumps(response)
        self.record.keep_response(data)
        await self.send({"type": "http.response.body", "body": self.frame(state, data)})

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


# -- before the era ---------------------------------------------------------------------------------


def describe(record: Record, message: dict[str, Any]) -> None:
    """Copy the JSON-RPC method, id and tool of a message into its record (the rest is decoded on demand)."""
    method = message.get("method")
    record.rpc_method = method if isinstance(method, str) else None
    record.rpc_id = message.get("id")
    if record.rpc_method == "tools/call":
        params = message.get("params")
        name = params.get("name") if isinstance(params, dict) else None
        record.tool = name if isinstance(name, str) else None


def kind_of(message: Any) -> str | None:
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


async def refuse_credentials(out: Response, name: str, status: int, scope: Scope, missing: bool) -> None:
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


Blocked = tuple[int, int, str, Any]
"""(HTTP status, JSON-RPC code, message, extra): extra is response headers, or for 401 (required header, missing)."""


def admit(journal: Any, record: Record) -> None:
    """Number the record and put it in the journal, once."""
    if not record.seq:
        journal.writer.begin(record)


def blocked(state: ServerState, scope: Scope, headers: Headers) -> Blocked | None:
    """Why the request is refused before its body is read (path, Host, Origin, required headers), or None."""
    if scope["path"] != state.path:
        return 404, INVALID_REQUEST, f"no MCP endpoint at {scope['path']}: the endpoint is {state.path}", None
    raw = scope["headers"]
    host = header(headers, "host")
    if len(headers) == len(raw):  # no name sent twice: one Host header at most, sent as `host` or not
        hosts = 0 if host is None or (b"host", host.encode("latin-1")) not in raw else 1
    else:
        hosts = [name for name, _ in raw].count(b"host")
    if hosts > 1 or (not hosts and scope.get("http_version", "1.1") != "1.0"):
        problem = "more than one Host header" if hosts else "no Host header"
        return 400, INVALID_REQUEST, f"Bad Request: {problem} (RFC 9112 wants exactly one)", None
    allowed = state.allowed_hosts
    if host is not None and _foreign(host, allowed):
        return 421, INVALID_REQUEST, f"Host {host!r} is not a loopback name (DNS rebinding protection)", None
    origin = header(headers, "origin")
    if (
        origin is not None
        and "*" not in allowed
        and hostname(origin.partition("://")[2].split("/", 1)[0]).lower() not in allowed
    ):
        return 403, INVALID_REQUEST, f"Origin {origin!r} is not allowed (DNS rebinding protection)", None
    for required in tuple(state.required.values()):  # a snapshot: scripting may add one from another thread
        value = headers.get(required.name)
        if value is None or not hmac.compare_digest(value.encode(), required.value.encode()):
            return 401, INVALID_REQUEST, "", (required, value is None)
    return None


async def read(state: ServerState, scope: Scope, receive: Receive, out: Response) -> Blocked | None:
    """Read and decode a POST body into the record; the refusal (413, 408) when it is too big or too slow."""
    record = out.record
    limit = state.max_body
    close = _CLOSE
    declared = _declared_length_of(out.headers)
    if declared is not None and declared > limit:
        message = f"Payload Too Large: the body (Content-Length {declared}) exceeds max_body ({limit} bytes); not read"
        return 413, INVALID_REQUEST, message, close
    body, size = await read_body(receive, limit)
    if scope.get(BODY_TIMED_OUT):  # set by the server's protocol when the body took longer than body_timeout
        message = f"Request Timeout: the body did not arrive within {state.body_timeout} s (body_timeout_s)"
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
                describe(record, out.message)
    return None


_CLOSE = ((b"connection", b"close"),)
"""The headers of a 413 or 408: the rest of the body is never read, so this connection is done."""


def _declared_length_of(headers: Headers) -> int | None:
    value = header(headers, "content-length")
    if value is None:
        return None
    try:
        return int(value)
    except ValueError:
        return None


async def usable_post(out: Response) -> bool:
    """Whether a POST's Accept, Content-Type and body let it reach its era; answers 406, 415 or 400 if not."""
    record = out.record
    headers = out.headers
    if not _accepts_both(header(headers, "accept") or ""):
        await out.error(
            406,
            INVALID_REQUEST,
            "Not Acceptable: Accept must list both application/json and text/event-stream",
        )
        return False
    content_type = header(headers, "content-type") or ""
    if content_type != "application/json" and content_type.split(";", 1)[0].strip().lower() != "application/json":
        await out.error(415, INVALID_REQUEST, "Unsupported Media Type: Content-Type must be application/json")
        return False
    if out.parse_error is not None or not record.body:
        reason = out.parse_error or "the body is empty"
        await out.error(400, PARSE_ERROR, f"Parse error: {reason}")
        return False
    return True


async def crashed(state: ServerState, out: Response, exc: Exception) -> None:
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


async def faulted(
    state: ServerState, out: Response, fault: faults.Fault, session: Session | None, *, request: bool = True
) -> tuple[Effect[Any] | None, bool]:
    """The effect of the fault that hit this request, after its before-dispatch phase; True when that answered it.

    A fault of another era than the request's is answered as misplaced, loudly, to the client and in `check()`.
    """
    record = out.record
    record.fault = fault
    if request and record.rpc_method == "tools/call":
        # The ledger's answer for a faulted call: False unless the handler runs (dispatch says True).
        record.executed = False
    era = record.era or HANDSHAKE
    if era not in fault.eras:
        reason = faults.misplaced(fault, era)
        state.errors.append(faults.MisplacedFault(reason))
        record.error = reason
        await out.json(500, error_response(record.rpc_id, INTERNAL_ERROR, f"mcp-testkit: {reason}"))
        return None, True
    effect = effect_of(fault)
    assert effect is not None
    out.send = effect.wrap_send(out.send, SocketWire(out))
    return effect, await effect.before(out, state, session)


def _mode(state: ServerState, record: Record) -> str:
    mode = state.response_mode
    return mode(record) if callable(mode) else mode  # type: ignore[no-any-return]


def sse_chosen(state: ServerState, record: Record, effect: Effect[Any] | None, session: Session | None) -> bool:
    """Whether the answer goes as SSE: as the fault wants, else as the server's response mode says."""
    if effect is not None:
        chosen = effect.sse(session)
        if chosen is not None:
            return chosen
    return _mode(state, record) == "sse"


_ASKING = frozenset({"tools/call", "prompts/get"})
"""The requests whose handlers may ask the client for input (`server/_dispatch/_input.py`)."""


async def _to_client(state: ServerState, out: Response, message: dict[str, Any]) -> None:
    """Send a server-to-client request on the request's own stream, switching its answer to SSE if it was JSON."""
    await out.start_sse()
    await out.event(state, message)


async def answer(
    state: ServerState,
    message: dict[str, Any],
    out: Response,
    call: Call,
    effect: Effect[Any] | None,
    *,
    open_stream: Callable[[ServerState, Response, Call, Effect[Any] | None], Awaitable[None]] | None = None,
    settle: Callable[[Any], int] | None = None,
) -> None:
    """Run a request and frame its answer (JSON or SSE), applying what its fault does afterwards.

    The era gives `open_stream`, run before the request when the answer goes as SSE, and `settle`, which
    finishes the response as the era wants and gives its HTTP status (200 without one).
    """
    sse = sse_chosen(state, out.record, effect, call.session)
    if sse:

        async def notify(notification: dict[str, Any]) -> None:
            await out.start_sse()
            await out.event(state, notification)

        call.notify = notify
        if open_stream is not None:
            await open_stream(state, out, call, effect)
    if call.session is not None and out.record.rpc_method in _ASKING:
        call.to_client = functools.partial(_to_client, state, out)
    response = await dispatch(message, call)
    sse = sse or out.streaming  # a tool that asked the client for input switched a JSON answer to SSE
    if effect is not None:
        await effect.after()
    status = 200 if settle is None else settle(response)
    if status != 200 and sse and not out.streaming and not (effect is not None and effect.shapes_answer):
        sse = False  # an error before any event: JSON with its status, so a 404 or 400 reaches the client
    if response is CANCELLED:
        # Nothing may be sent for a cancelled request; an SSE stream that ends empty says just that.
        await out.end_sse()
    elif effect is not None and await effect.send(out, state, status, response, sse):
        return
    elif sse:
        await out.last_event(state, response)
    else:
        await out.json(status, response)
