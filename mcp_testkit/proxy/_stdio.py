"""Streamable HTTP in front of a stdio MCP server: the chaos proxy's link to an upstream that is a command.

`StdioGateway` is an ASGI app the proxy's endpoint forwards to as it forwards to an HTTP upstream: `initialize`
starts a server process (one per session, at most `max_processes`), each request is written to its process and the
answer read back, and DELETE ends both. The processes are `mcp_testkit.upstream`'s `StdioUpstream` links, which
record what they see on a `Tape`.
"""

from __future__ import annotations

import functools
import json
import secrets
import time
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any, TextIO

import anyio
import anyio.from_thread
import anyio.to_thread

from mcp_testkit._wire.asgi import Receive, Scope, Send, lifespan, read_body
from mcp_testkit._wire.eras import HANDSHAKE_VERSIONS, STATELESS_VERSIONS, VERSION_KEY, error_status
from mcp_testkit._wire.origin import LOOPBACK_NAMES, rebinding_refusal
from mcp_testkit._wire.strict_json import JsonError
from mcp_testkit._wire.strict_json import loads as strict_loads
from mcp_testkit.proxy._forward import LOST, marked
from mcp_testkit.proxy._turn import NOTE_KEY
from mcp_testkit.upstream import MAX_PROCESSES, MAX_UPSTREAM_BODY, START_TIMEOUT_S, StdioUpstream, Tape, UpstreamError

__all__ = ["MAX_PROCESSES", "START_TIMEOUT_S", "StdioGateway"]

_JSON = b"application/json"
MAX_BODY = 64 * 1024 * 1024
"""The largest request body the proxy passes on: a live server may take more than the fake's 4 MiB."""
_KEPT_ENDINGS = 1024
"""How many ended sessions the gateway remembers how they ended (for the journal of their later requests)."""


def _json_body(message: Any) -> bytes:
    return json.dumps(message, separators=(",", ":")).encode()


async def _answer(
    send: Send, status: int, payload: Any, headers: Sequence[tuple[bytes, bytes]] = (), note: str | None = None
) -> None:
    """Answer `payload` as JSON (nothing for None); `note` is what the journal's record of it says went wrong."""
    body = b"" if payload is None else _json_body(payload)
    raw = [(b"content-length", str(len(body)).encode()), *headers]
    if body:
        raw.append((b"content-type", _JSON))
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body, **({NOTE_KEY: note} if note else {})})


def _refusal(message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": message}}


def _decode(body: bytes) -> Any:
    """A message, decoded as strictly as the server decodes one; None for what is not JSON of the wire."""
    try:
        return strict_loads(body) if body else None
    except JsonError:
        return None


def _headers(scope: Scope) -> list[tuple[str, str]]:
    return [(k.decode("latin-1").lower(), v.decode("latin-1")) for k, v in scope.get("headers", [])]


_PROBE = {
    "jsonrpc": "2.0", "id": "mcp-testkit-probe", "method": "initialize",
    "params": {"protocolVersion": HANDSHAKE_VERSIONS[-1], "capabilities": {},
               "clientInfo": {"name": "mcp-testkit-probe", "version": "0.1.0"}},
}  # fmt: skip


class _Endpoint:
    """An ASGI app serving one endpoint path: lifespan answered, other paths refused with 404, and a POST
    body over `max_body` bytes refused with 413 (nothing is sent upstream, nothing recorded)."""

    path: str
    max_body: int = MAX_BODY
    allowed_hosts: frozenset[str] = frozenset(LOOPBACK_NAMES)
    """The Host and Origin names accepted: a request naming another is refused before anything is forwarded,
    so a page a browser loaded from elsewhere never reaches the upstream with the user's credential."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        if scope["path"] != self.path:
            await _answer(send, 404, _refusal(f"the recording proxy serves only {self.path}, not {scope['path']}"))
            return
        refused = rebinding_refusal(scope["headers"], scope.get("http_version", "1.1"), self.allowed_hosts)
        if refused is not None:
            await _answer(send, refused[0], _refusal(refused[1]), [(b"connection", b"close")])
            return
        await self._handle(scope, receive, send)

    async def _body(self, scope: Scope, receive: Receive, send: Send) -> bytes | None:
        """The request body; None, with a 415 or 413 sent, when it is not JSON or too big."""
        content_type = dict(_headers(scope)).get("content-type", "")
        if content_type.split(";", 1)[0].strip().lower() != "application/json":
            await _answer(send, 415, _refusal("Unsupported Media Type: Content-Type must be application/json"))
            return None
        body, read = await read_body(receive, self.max_body)
        if read is None:
            return body
        await _answer(
            send,
            413,
            _refusal(f"the recording proxy passes bodies up to {self.max_body:,} bytes; this one has {read:,} or more"),
        )
        return None

    async def _handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        raise NotImplementedError


class StdioGateway(_Endpoint):
    """ASGI app: Streamable HTTP in front of a stdio server, one server process per session.

    `initialize` starts a process and opens a session on it; DELETE ends both. An answer comes as
    JSON, or as SSE when the server sent notifications or requests before it (a client's answer to
    a server request is POSTed back as usual and written to the process).

    A 2026-07-28 request (no session; its version in `_meta` or the `MCP-Protocol-Version` header)
    goes to one process shared by every such request, started at the first, one request at a time
    so that clients' ids never collide on it; an error answer gets the status the era gives its code.

    A process that exits ends its session at once: its slot is free, and the session's next request gets
    404 (as a restarted server's would), its journal record saying how the process ended; a shared one
    is started again at the next request.
    """

    max_line = MAX_UPSTREAM_BODY
    """The bound on one stdout line of a process: one past it ends the process, and the call it answered gets 502."""

    def __init__(
        self, command: Sequence[str], tape: Any, *, path: str = "/mcp", max_processes: int = MAX_PROCESSES,
        stderr: TextIO | None = None,
    ) -> None:  # fmt: skip
        """`tape` (a recording's `Tape`) is where the processes record each exchange they see; `stderr`, when given,
        is where their stderr is passed through (it is kept off it, a tail kept for errors, by default)."""
        if max_processes < 1:
            raise ValueError(f"max_processes must be at least 1, not {max_processes}")
        self.command = list(command)
        self.tape = tape
        self.path = path
        self.max_processes = max_processes
        self.stderr = stderr
        self._starting = 0
        self._links: dict[str, Any] = {}
        """Each session's server process (a `StdioUpstream`), by the session id the gateway gave it."""
        self._shared: Any = None
        self._shared_lock: anyio.Lock | None = None
        self._endings: OrderedDict[str, str] = OrderedDict()
        """How each session whose process exited ended, by its id (the newest `_KEPT_ENDINGS`)."""

    def probe(self, timeout_s: float = START_TIMEOUT_S) -> None:
        """`UpstreamError` unless the command starts and answers `initialize` within `timeout_s`: said once, before
        the proxy serves, rather than to every client. The probe's process is closed at once; nothing it said is
        recorded or journaled, and its stderr's tail is the error's `stderr`."""
        started = time.monotonic()
        link = self._shown(StdioUpstream(self.command, tape=Tape(), timeout_s=timeout_s))
        try:
            exchange = link.send(_PROBE)
            timed_out = exchange.response is None and time.monotonic() - started >= timeout_s
        finally:
            link.close()
        if exchange.response is not None:
            return
        described = link.describe()
        if timed_out:
            what = f"did not answer initialize within {timeout_s:g} s"
        elif link.exit_status is not None and link.exit_status < 0:
            what = f"was ended by signal {-link.exit_status} before answering initialize"
        else:
            what = f"exited with status {link.exit_status} before answering initialize"
        events = [event for kept in link.tape.exchanges for event in kept.events]  # its own lines, and the probe's
        wrote = next((e["unparsed"] for e in events if isinstance(e, dict) and "unparsed" in e), None)
        said = link.stderr.last()
        notes = [f"on stdout it wrote {wrote[:60]!r}, which is not JSON-RPC"] if wrote is not None else []
        notes += [] if said else ["it wrote nothing on stderr"]
        what += (f" ({'; '.join(notes)})" if notes else "") + (f": {said}" if said else "")
        raise UpstreamError(f"the upstream command `{described}` {what}", stderr=link.stderr.lines())

    async def _handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = dict(_headers(scope))
        method = scope["method"]
        if method == "GET":
            await _answer(send, 405, _refusal("no GET stream: a stdio server's own messages are recorded"),
                          [(b"allow", b"POST, DELETE")])  # fmt: skip
            return
        if method not in ("POST", "DELETE"):
            await _answer(send, 405, _refusal(f"HTTP {method} is not supported"), [(b"allow", b"POST, DELETE")])
            return
        session_id = headers.get("mcp-session-id")
        if session_id is not None:
            await self._end_if_exited(session_id)
        if method == "DELETE":
            link = self._links.pop(session_id or "", None)
            if link is None:
                await _answer(send, 404, _refusal("Session not found"), note=self._endings.get(session_id or ""))
                return
            await anyio.to_thread.run_sync(link.close)
            await _answer(send, 200, None)
            return
        body = await self._body(scope, receive, send)
        if body is None:
            return
        message = _decode(body)
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            await _answer(send, 400, _refusal("Invalid Request: the body is not a JSON-RPC 2.0 message"))
            return
        if message.get("method") == "initialize":
            await self._initialize(message, send)
            return
        if session_id is None and _is_stateless(headers, message):
            await self._stateless(message, send)
            return
        link = self._links.get(session_id or "")
        if link is None:
            status = 400 if session_id is None else 404
            refusal = _refusal("Missing Mcp-Session-Id" if status == 400 else "Session not found")
            await _answer(send, status, refusal, note=self._endings.get(session_id or ""))
            return
        session = [(b"mcp-session-id", (session_id or "").encode())]
        if "method" not in message or "id" not in message:
            await anyio.to_thread.run_sync(lambda: link.send(message))
            await _answer(send, 202, None, session)
            return
        await self._request(link, message, send, session, session_id=session_id)

    async def _end_if_exited(self, session_id: str) -> None:
        """End the session whose process exited: its link closed, how it ended kept for the journal."""
        link = self._links.get(session_id)
        if link is None or link.exited is None:
            return
        del self._links[session_id]
        said = f": {last}" if (last := link.stderr.last()) else ""
        self._endings[session_id] = f"the session's stdio server process {link.exited}{said}"
        while len(self._endings) > _KEPT_ENDINGS:
            self._endings.popitem(last=False)
        await anyio.to_thread.run_sync(link.close)

    async def _start(self, send: Send) -> Any:
        """A new server process; None, with the reason sent, when it cannot start (502) or too many run (503)."""
        for session_id in [key for key, link in self._links.items() if link.exited is not None]:
            await self._end_if_exited(session_id)  # a process that exited holds no slot
        running = len(self._links) + self._starting + (self._shared is not None)
        if running >= self.max_processes:
            message = (
                f"the recording proxy runs at most {self.max_processes} server processes (one per session) and "
                f"{running} are running: end a session with DELETE, or raise max_processes (--max-processes)"
            )
            await _answer(send, 503, {"jsonrpc": "2.0", "id": None, "error": {"code": -32603, "message": message}})
            return None
        self._starting += 1
        try:
            started = functools.partial(StdioUpstream, self.command, tape=self.tape, max_line=self.max_line)
            return self._shown(await anyio.to_thread.run_sync(started))
        except UpstreamError as exc:
            await _answer(send, 502, {"jsonrpc": "2.0", "id": None, "error": {"code": -32603, "message": str(exc)}})
            return None
        finally:
            self._starting -= 1

    def _shown(self, link: Any) -> Any:
        if self.stderr is not None:
            link.stderr.show(self.stderr)
        return link

    async def _initialize(self, message: dict[str, Any], send: Send) -> None:
        link = await self._start(send)
        if link is None:
            return
        exchange = await anyio.to_thread.run_sync(lambda: link.send(message))
        if exchange.result is None:
            await anyio.to_thread.run_sync(link.close)
            reply = exchange.response or _refusal(f"the stdio server did not answer initialize: {exchange.error}")
            await _answer(send, 200 if exchange.response is not None else 502, reply)
            return
        session_id = secrets.token_hex(16)
        self._links[session_id] = link
        await _answer(send, 200, exchange.response, [(b"mcp-session-id", session_id.encode())])

    async def _stateless(self, message: dict[str, Any], send: Send) -> None:
        if self._shared_lock is None:
            self._shared_lock = anyio.Lock()
        async with self._shared_lock:
            if self._shared is not None and self._shared.exited is not None:
                ended, self._shared = self._shared, None
                await anyio.to_thread.run_sync(ended.close)
            if self._shared is None:
                self._shared = await self._start(send)
                if self._shared is None:
                    return
            link = self._shared
            if "method" not in message or "id" not in message:
                await anyio.to_thread.run_sync(lambda: link.send(message))
                await _answer(send, 202, None)
                return
            await self._request(link, message, send, [], stateless=True)

    async def _request(
        self,
        link: Any,
        message: dict[str, Any],
        send: Send,
        session: list[tuple[bytes, bytes]],
        *,
        stateless: bool = False,
        session_id: str | None = None,
    ) -> None:
        sender, inbox = anyio.create_memory_object_stream[Any](16)
        strays = link.strays

        def relay(event: Any) -> None:
            anyio.from_thread.run(sender.send, ("event", event))

        def run() -> None:
            exchange = link.send(message, on_event=relay)
            anyio.from_thread.run(sender.send, ("answer", exchange))

        streaming = False
        async with anyio.create_task_group() as group, inbox:
            group.start_soon(anyio.to_thread.run_sync, run)
            async for kind, item in inbox:
                if kind == "event":
                    if not streaming:
                        streaming = True
                        headers = [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache"), *session]
                        await send({"type": "http.response.start", "status": 200, "headers": headers})
                    await _event(send, item)
                    continue
                exchange = item
                if exchange.response is None:  # the process took the request and gave no answer: it may have run it
                    send = marked(send, LOST)
                reply = exchange.response or {
                    "jsonrpc": "2.0",
                    "id": message.get("id"),
                    "error": {"code": -32603, "message": f"the stdio server did not answer: {exchange.error}"},
                }
                note = _note(link, link.strays - strays)
                if session_id is not None:
                    await self._end_if_exited(session_id)
                if streaming:
                    await _event(send, reply)
                    await send({"type": "http.response.body", "body": b"", **({NOTE_KEY: note} if note else {})})
                else:
                    status = 502 if exchange.response is None and link.over_limit else None
                    await _answer(send, status or (error_status(reply) if stateless else 200), reply, session, note)
                break
        await sender.aclose()

    def close(self) -> None:
        """Stop every server process still running."""
        links, self._links = list(self._links.values()), {}
        if self._shared is not None:
            links.append(self._shared)
            self._shared = None
        for link in links:
            link.close()


def _note(link: Any, strays: int) -> str | None:
    """What the journal's record of a request says went wrong on the process besides its answer, if anything."""
    notes = []
    if link.exited is not None:
        said = f": {last}" if (last := link.stderr.last()) else ""
        notes.append(f"the stdio server process {link.exited}{said}")
    if strays:
        lines = f"{strays} line{'s' * (strays != 1)} on stdout that {'is' if strays == 1 else 'are'}"
        notes.append(f"the stdio server wrote {lines} not JSON-RPC (kept out of the answer), "
                     f"the last: {link.stray[-1][:80]!r}")  # fmt: skip
    return "; ".join(notes) or None


def _is_stateless(headers: Mapping[str, str], message: Mapping[str, Any]) -> bool:
    """Whether a request without a session is of the 2026-07-28 era: by its version header, or its `_meta`."""
    if headers.get("mcp-protocol-version") in STATELESS_VERSIONS:
        return True
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    return isinstance(meta, dict) and meta.get(VERSION_KEY) in STATELESS_VERSIONS


async def _event(send: Send, message: Any) -> None:
    frame = b"event: message\ndata: " + _json_body(message) + b"\n\n"
    await send({"type": "http.response.body", "body": frame, "more_body": True})
