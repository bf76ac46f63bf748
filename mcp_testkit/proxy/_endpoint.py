"""The proxy's MCP endpoint: the checks, the journal and the fault plan in front of the upstream's link.

Each request is checked as `TestMcpServer` checks one (path, Host and Origin before anything is read, forwarded
or a credential added; Content-Type and a bounded body on a POST), journaled, matched against the fault plan, and
then forwarded to the upstream's link (`HttpForwarder` or the stdio gateway, both ASGI). Without a fault the
answer streams straight through; a fault that must see the answer holds it (`Held`) and acts on it.
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, Any

from mcp_testkit import faults
from mcp_testkit._wire.asgi import Receive, Scope, Send, lifespan, read_body
from mcp_testkit._wire.eras import HANDSHAKE, STATELESS, STATELESS_VERSIONS, VERSION_KEY, error_status
from mcp_testkit._wire.headers import Headers
from mcp_testkit._wire.origin import LOOPBACK_NAMES, rebinding_refusal
from mcp_testkit.faults import request_target
from mcp_testkit.journal import Record
from mcp_testkit.proxy._forward import BODY_KEY, DECODED_KEY, UNRECORDED_KEY, UNSENT, UPSTREAM_KEY, BrokenOff
from mcp_testkit.proxy._own import SESSION_NOT_FOUND, Pages, Sessions, own_effect
from mcp_testkit.proxy._streams import BrokenStreams
from mcp_testkit.proxy._turn import NOTE_KEY, Held, ProxyTurn, decode, dumps
from mcp_testkit.server.effects import Effect, effect_of

if TYPE_CHECKING:
    from mcp_testkit.journal import Journal

__all__ = ["ProxyEndpoint"]

_INVALID_REQUEST = -32600
END_TIMEOUT_S = 5.0
"""How long the proxy gives the upstream, at most, to end the sessions it DELETEs there at once (best effort)."""


async def _never_disconnects() -> Any:
    import anyio

    await anyio.sleep_forever()


class _Call:
    """What a server effect's `answer` reads of the request: its record."""

    def __init__(self, record: Record) -> None:
        self.record = record


def upstream_executed(status: int, answer: Any, upstream: str | None) -> bool | None:
    """What the upstream did with a `tools/call`, from what came back (whatever a fault then did to the bytes):
    True when it answered the call, False when it never received it (`UNSENT`) or refused it with a 4xx, None when
    nobody can tell (the request was sent and no answer came: a dropped connection, a cut answer, a 5xx)."""
    if upstream is not None:
        return False if upstream == UNSENT else None
    if 400 <= status < 500:
        return False
    return True if answer is not None and status < 300 else None


def _holds(effect: Effect[Any]) -> bool:
    """Whether the effect acts on the answer (so the proxy must hold it back rather than stream it through)."""
    kind = type(effect)
    return kind.send is not Effect.send or kind.after is not Effect.after or kind.sse is not Effect.sse


class ProxyEndpoint:
    """ASGI app: the proxy's endpoint at `path`, in front of `link` (the upstream, as an ASGI app)."""

    def __init__(self, link: Any, journal: Journal, plan: faults.FaultPlan, *, path: str = "/mcp") -> None:
        self.link = link
        self.journal = journal
        self.plan = plan
        self.path = path
        self.max_body = 64 * 1024 * 1024
        self.allowed_hosts: frozenset[str] = frozenset(LOOPBACK_NAMES)
        self.sessions = Sessions()
        self.pages = Pages()
        self.errors: list[BaseException] = []
        self.broken = BrokenStreams()
        self._lock = threading.Lock()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        headers = Headers(scope["headers"])
        record = Record(0, time.time(), scope["method"], scope["path"], headers, b"")
        record.session_id = headers.get("mcp-session-id")
        turn = ProxyTurn(send, record, receive)
        try:
            await self._serve(scope, receive, turn, headers)
            if self.sessions.ending:  # a fault lost a session: the client has its answer, the upstream ends it
                await self.end_upstream(self.sessions.to_end())
        except BrokenOff as exc:
            if not turn.started:
                raise
            await turn.drop(f"the upstream broke off its answer: {exc}")
        finally:
            if not record.seq:
                self._admit(record)
            self.journal.writer.finish(record)

    def _admit(self, record: Record) -> None:
        with self._lock:
            self.journal.writer.begin(record)

    async def _serve(self, scope: Scope, receive: Receive, turn: ProxyTurn, headers: Headers) -> None:
        record = turn.record
        if scope["path"] != self.path:
            self._admit(record)
            await turn.error(404, _INVALID_REQUEST, f"the chaos proxy serves only {self.path}, not {scope['path']}")
            return
        refused = rebinding_refusal(scope["headers"], scope.get("http_version", "1.1"), self.allowed_hosts)
        if refused is not None:
            self._admit(record)
            await turn.error(refused[0], _INVALID_REQUEST, refused[1], [(b"connection", b"close")])
            return
        method = scope["method"]
        body, message = b"", None
        if method == "POST":
            content_type = headers.get("content-type", "")
            if content_type.split(";", 1)[0].strip().lower() != "application/json":
                self._admit(record)
                await turn.error(415, _INVALID_REQUEST, "Unsupported Media Type: Content-Type must be application/json")
                return
            body, over = await read_body(receive, self.max_body)
            record.body = body
            if over is not None:
                self._admit(record)
                await turn.error(413, _INVALID_REQUEST, f"the chaos proxy passes bodies up to {self.max_body:,} bytes")
                return
            message = record.message = decode(body)  # decoded once: the record's fields and the faults read it
        elif method not in ("GET", "DELETE"):
            self._admit(record)
            allow = [(b"allow", b"GET, POST, DELETE")]
            await turn.error(405, _INVALID_REQUEST, f"HTTP {method} is not supported", allow)
            return
        self._describe(record, headers, message)
        self._admit(record)
        lost = self.sessions.status_of(record.session_id)
        if lost is not None:
            await self._refuse(turn, lost, SESSION_NOT_FOUND)
            return
        if method == "GET":
            resumed = headers.get("last-event-id")
            if resumed is not None and await self.broken.resume(turn, resumed):
                return
        page = self.pages.page_of(record.params) if record.rpc_method == "tools/list" else None
        if record.rpc_method == "tools/list" and isinstance(message, dict):
            body = self._empty_cursor(message, body)
        fault = None
        if isinstance(message, dict) and isinstance(message.get("method"), str):
            named = request_target(record.rpc_method, record.params, record.tool)
            fault = self.plan.take(record.rpc_method, named, page, record.session_id, record.era or HANDSHAKE)
        record.fault = fault
        if fault is not None and record.era is not None and record.era not in fault.eras:
            error = faults.MisplacedFault(faults.misplaced(fault, record.era))
            self.errors.append(error)
            await self._refuse(turn, 400, str(error))
            return
        await self._apply(fault, scope, receive, turn, body, page)

    @staticmethod
    async def _refuse(turn: ProxyTurn, status: int, message: str) -> None:
        """Answer a request the upstream never sees with a JSON-RPC error: a call refused so ran nothing."""
        if turn.record.rpc_method == "tools/call":
            turn.record.executed = False
        await turn.error(status, _INVALID_REQUEST, message)

    def _describe(self, record: Record, headers: Headers, message: Any) -> None:
        version = headers.get("mcp-protocol-version")
        if isinstance(message, dict):
            method = message.get("method")
            record.rpc_method = method if isinstance(method, str) else None
            record.rpc_id = message.get("id")
            params = message.get("params")
            if record.rpc_method == "tools/call" and isinstance(params, dict) and isinstance(params.get("name"), str):
                record.tool = params["name"]
            meta = params.get("_meta") if isinstance(params, dict) else None
            if isinstance(meta, dict) and isinstance(meta.get(VERSION_KEY), str):
                version = version or meta[VERSION_KEY]
            if record.rpc_method == "initialize" and isinstance(params, dict):
                version = version or params.get("protocolVersion")
        record.protocol_version = version if isinstance(version, str) else None
        record.era = STATELESS if version in STATELESS_VERSIONS else HANDSHAKE

    def _empty_cursor(self, message: dict[str, Any], body: bytes) -> bytes:
        """A stateless walk sending back the "" an `EmptyCursor` put on a page gets the page the upstream meant."""
        params = message.get("params")
        target = self.pages.empty
        if target is None or not isinstance(params, dict) or params.get("cursor") != "":
            return body
        return dumps({**message, "params": {**params, "cursor": target}})

    # -- ending upstream sessions ----------------------------------------------------------------------

    async def end_upstream(self, sessions: dict[str, str | None]) -> None:
        """DELETE each of `sessions` upstream, as its client would have: best effort (the answers and failures
        are dropped, nothing is journaled or recorded), all of them within `END_TIMEOUT_S`."""
        import anyio

        if not sessions:
            return
        with anyio.move_on_after(END_TIMEOUT_S):
            for session_id, version in sessions.items():
                headers = [(b"host", b"127.0.0.1"), (b"mcp-session-id", session_id.encode("latin-1"))]
                if version is not None:
                    headers.append((b"mcp-protocol-version", version.encode("latin-1")))
                scope = {
                    "type": "http", "method": "DELETE", "path": self.path, "raw_path": self.path.encode(),
                    "query_string": b"", "headers": headers, "http_version": "1.1",
                    "mcp_testkit.rpc_id": None, BODY_KEY: b"", UNRECORDED_KEY: True,
                }  # fmt: skip
                try:
                    await self.link(scope, _never_disconnects, Held().send)
                except Exception:  # best effort: a failure here is the upstream's, not the client's
                    continue

    async def end_all_upstream(self) -> None:
        """DELETE upstream every session still open there (the proxy stops)."""
        await self.end_upstream(self.sessions.open_ones())

    # -- forwarding ---------------------------------------------------------------------------------

    async def _forward(self, scope: Scope, receive: Receive, send: Any, body: bytes, request_id: Any) -> None:
        sent = False

        async def replay() -> Any:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.link({**scope, "mcp_testkit.rpc_id": request_id, BODY_KEY: body}, replay, send)

    async def _apply(
        self, fault: faults.Fault | None, scope: Scope, receive: Receive, turn: ProxyTurn, body: bytes, page: int | None
    ) -> None:
        go = Forwarding(self, scope, receive, turn, body, page)
        if fault is None:
            await go.through()
            return
        own = own_effect(fault)
        if own is not None:
            await own.act(go)
            return
        effect = effect_of(fault)
        assert effect is not None
        turn.shape(effect)
        record = turn.record
        if await effect.before(turn, None, None):  # type: ignore[arg-type]
            if record.rpc_method == "tools/call":
                record.executed = False  # answered (or dropped) before the upstream saw it
            return
        call: Any = _Call(record)
        replaced = effect.answer(record.rpc_id, record.rpc_method or "", call)
        if replaced is None and record.rpc_method == "tools/list":
            replaced = await effect.before_page(call, record.rpc_id, (record.params or {}).get("cursor"))
        if replaced is not None:
            if record.rpc_method == "tools/call" and record.executed is None:
                record.executed = False
            status = error_status(replaced) if record.era == STATELESS else 200
            if not _holds(effect) or not await effect.send(turn, None, status, replaced, False):  # type: ignore[arg-type]
                await turn.answer(status, [], replaced, sse=False)
            return
        if record.rpc_id is None and record.rpc_method is not None:
            await self._forward(scope, receive, Held().send, body, None)  # a notification: it reaches the upstream
            if not await effect.after_notification(turn):
                await turn.raw(202, b"", None)
            return
        if not _holds(effect):
            await go.through()
            return
        held = await go.held()
        await effect.after()
        answer, _ = held.split(record.rpc_id)
        self.pages.learn(page, answer)
        turn.session_header = _session_header(held)
        chosen = effect.sse(None)
        sse = held.sse if chosen is None else chosen
        if answer is None or not await effect.send(turn, None, held.status, answer, sse):  # type: ignore[arg-type]
            await go.pass_on(held)


class Forwarding:
    """One request on its way to the upstream: forwarded with its answer streamed back, or held for a fault."""

    def __init__(
        self, endpoint: ProxyEndpoint, scope: Scope, receive: Receive, turn: ProxyTurn, body: bytes, page: int | None
    ) -> None:
        self.endpoint, self.scope, self.receive, self.turn, self.body, self.page = (
            endpoint, scope, receive, turn, body, page
        )  # fmt: skip
        self.sessions = endpoint.sessions
        self.pages = endpoint.pages
        self.broken = endpoint.broken

    async def through(self) -> None:
        """Forward the request and stream the answer straight back, journaling what it was."""
        watch = _Watch(self.turn, self.endpoint, self.page)
        receive = _listening(self.receive, self.turn)
        await self.endpoint._forward(self.scope, receive, watch.send, self.body, self.turn.record.rpc_id)
        watch.finish()

    async def held(self) -> Held:
        """Forward the request; the upstream's whole answer, held back (not ended when the upstream broke off)."""
        held = Held()
        record = self.turn.record
        try:
            await self.endpoint._forward(self.scope, self.receive, held.send, self.body, record.rpc_id)
        except BrokenOff:
            held.ended = False
        if record.rpc_method == "tools/call":
            record.executed = upstream_executed(held.status, held.split(record.rpc_id)[0], held.upstream)
        return held

    async def pass_on(self, held: Held) -> None:
        """Send a held answer on as the upstream sent it."""
        record = self.turn.record
        answer, _ = held.split(record.rpc_id)
        self.pages.learn(self.page, answer)
        if answer is not None:
            record.keep_response(dumps(answer))
        await self.turn.pass_on({"type": "http.response.start", "status": held.status, "headers": held.headers})
        await self.turn.pass_on({"type": "http.response.body", "body": b"".join(held.chunks)})

    async def refuse(self, status: int) -> None:
        await self.endpoint._refuse(self.turn, status, SESSION_NOT_FOUND)

    def unchanged(self) -> None:
        record = self.turn.record
        if record.fault is not None:
            self.endpoint.plan.give_back(record.fault)
        record.fault = None


_NOT_DECODED: Any = object()
_DRAIN_S = 30.0
"""How long the upstream's answer to a request is still read after a fault of the proxy's closed the client's
connection, so that the journal says what the upstream did (a fault of bytes cuts the client off, not the upstream)."""


def _listening(receive: Receive, turn: ProxyTurn) -> Receive:
    """`receive`, with the client's disconnect held back while the upstream still answers a request whose client a
    fault of the proxy's cut off (`turn.dropped`): a client that leaves ends the forwarding, the proxy's own cut does
    not (within `_DRAIN_S`)."""

    async def listening() -> Any:
        message = await receive()
        if message["type"] == "http.disconnect" and turn.dropped and turn.record.rpc_id is not None:
            import anyio

            await anyio.sleep(_DRAIN_S)
        return message

    return listening


def _session_header(held: Held) -> list[tuple[bytes, bytes]]:
    return [(k, v) for k, v in held.headers if k == b"mcp-session-id"]


class _Watch:
    """Passes the upstream's answer on as it comes, and keeps what the journal needs of it: the record is complete
    before the answer's last bytes go on, so a client that has its answer finds the journal saying what it was."""

    def __init__(self, turn: ProxyTurn, endpoint: ProxyEndpoint, page: int | None) -> None:
        self.turn, self.endpoint, self.page = turn, endpoint, page
        self.finished = False
        self.sse = False
        self.session: str | None = None
        self.chunks: list[bytes] = []
        self.size = 0
        self.status = 0
        """The upstream's status (or the forwarder's own 502 or 504), whatever a fault then sent the client."""
        self.upstream: str | None = None
        self.decoded: Any = _NOT_DECODED
        """A JSON answer as the forwarder decoded it, when it did."""

    async def send(self, message: Any) -> None:
        self.upstream = message.get(UPSTREAM_KEY, self.upstream)
        if message["type"] == "http.response.start":
            self.status = message["status"]
            for name, value in message.get("headers", []):
                if name == b"content-type":
                    self.sse = value.startswith(b"text/event-stream")
                elif name == b"mcp-session-id":
                    self.session = value.decode("latin-1")
        elif message["type"] == "http.response.body" and self.size < 1024 * 1024:
            chunk = message.get("body", b"")
            self.chunks.append(chunk)
            self.size += len(chunk)
            self.decoded = message.get(DECODED_KEY, _NOT_DECODED)
            note = message.get(NOTE_KEY)
            if note is not None and self.turn.record.error is None:
                self.turn.record.error = note
        if message["type"] == "http.response.body" and not message.get("more_body", False):
            self.finish()
        await self.turn.pass_on(message)

    def finish(self) -> None:
        """Journal what the answer was (once): at its last bytes, or when the forwarding ended without them."""
        if self.finished:
            return
        self.finished = True
        endpoint, page, record = self.endpoint, self.page, self.turn.record
        if record.rpc_method == "initialize" and self.session is not None and record.status == 200:
            endpoint.sessions.opened(self.session, record.protocol_version)
        elif record.http_method == "DELETE" and record.session_id is not None and (record.status or 500) < 300:
            endpoint.sessions.ended(record.session_id)
        if record.rpc_id is None:
            return
        decoded = self.decoded
        if not self.sse and len(self.chunks) == 1 and decoded is not _NOT_DECODED:
            # A JSON answer the forwarder decoded: journaled as the bytes it came in, decoded on first read.
            answers = isinstance(decoded, dict) and "method" not in decoded and decoded.get("id") == record.rpc_id
            answer = decoded if answers else None
            if answer is not None:
                record.keep_response(self.chunks[0])
        else:
            held = Held(record.status or 0, [(b"content-type", b"text/event-stream")] if self.sse else [], self.chunks)
            answer, _ = held.split(record.rpc_id)
            if answer is not None:
                record.keep_response(dumps(answer))
        if answer is not None and page is not None:
            endpoint.pages.learn(page, answer)
        if record.rpc_method == "tools/call":
            record.executed = upstream_executed(self.status, answer, self.upstream)
