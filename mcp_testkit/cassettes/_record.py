"""Recording: a proxy on 127.0.0.1 in front of a live server that keeps every exchange, and writes them
as a cassette when it stops.

In front of a Streamable HTTP server the proxy passes each request through untouched (statuses,
headers, SSE streams as they come) and records it at the JSON-RPC level; in front of a stdio server
it serves Streamable HTTP itself, one server process per session. Either way a client points at the
proxy as it would at the server.
"""

from __future__ import annotations

import json
import secrets
import threading
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import anyio.from_thread
import anyio.to_thread

from mcp_testkit._asgi import Receive, Scope, Send, lifespan, read_body
from mcp_testkit._binding import warn_if_remote
from mcp_testkit._eras import STATELESS_VERSIONS, VERSION_KEY, error_status
from mcp_testkit._json import JsonError
from mcp_testkit._json import loads as strict_loads
from mcp_testkit._origin import LOOPBACK_NAMES, rebinding_refusal
from mcp_testkit.cassettes._format import Cassette, Exchange, Tape, era_of, split_messages, version_of
from mcp_testkit.cassettes._redact import Redactor, Scrub, kept_headers, save
from mcp_testkit.cassettes._upstream import StdioUpstream, UpstreamError, check_startable, describe_upstream

__all__ = ["Recording", "StdioGateway", "TapeRecorder", "record"]

_JSON = b"application/json"
MAX_BODY = 64 * 1024 * 1024
"""The largest request body the proxy passes on: a live server may take more than the fake's 4 MiB."""


def _json_body(message: Any) -> bytes:
    return json.dumps(message, separators=(",", ":")).encode()


async def _answer(send: Send, status: int, payload: Any, headers: Sequence[tuple[bytes, bytes]] = ()) -> None:
    body = b"" if payload is None else _json_body(payload)
    raw = [(b"content-length", str(len(body)).encode()), *headers]
    if body:
        raw.append((b"content-type", _JSON))
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body})


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


MAX_PROCESSES = 8
"""How many stdio server processes a recording proxy runs at once by default: one per session of the handshake
era (a stdio server takes one `initialize`), one shared by every 2026-07-28 request."""


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


class TapeRecorder:
    """What the chaos proxy's forwarder hands each exchange to when recording: kept on `tape` at the JSON-RPC level.

    The proxy passes each request through untouched (statuses, headers, SSE streams as they come); this keeps what
    it saw as bytes, and `flush()` (when the recording stops) turns each into an `Exchange` on the tape: the
    decoding costs no request its time. A stdio server's exchanges go on the same `tape`, from its gateway.
    """

    def __init__(self, tape: Tape) -> None:
        self.tape = tape
        self._seen: list[tuple[int, float, float, Any]] = []
        self._lock = threading.Lock()

    def begin(self) -> tuple[int, float]:
        return self.tape.start()

    def keep(self, token: tuple[int, float], seen: Any) -> None:
        """Keep what the forwarder saw; kept even when the stream was cancelled (what came before was seen)."""
        seq, at = token
        with self._lock:
            self._seen.append((seq, at, self.tape.elapsed_ms(at), seen))

    def flush(self) -> None:
        """Put every exchange kept so far on the tape."""
        with self._lock:
            kept, self._seen = self._seen, []
        for seq, at, elapsed_ms, seen in kept:
            self.tape.add(_exchange(seq, at, elapsed_ms, seen))


def _exchange(seq: int, at: float, elapsed_ms: float, seen: Any) -> Exchange:
    from mcp_testkit.cassettes._format import HttpInfo

    seen.decode()
    message, messages, error = seen.message, seen.messages, seen.error
    if seen.framing == "sse":
        response, events = split_messages(message, messages)
        if seen.left and error is None and response is None and message is not None:
            error = "the client closed the stream before the server answered"
    else:
        response, events = (messages[0] if messages else None), []
    sent, answered = seen.sent, seen.answered
    version = version_of(message, sent.get("mcp-protocol-version"), response)
    session = sent.get("mcp-session-id") or dict(answered).get("mcp-session-id")
    http = HttpInfo(seen.method, seen.status, seen.framing, kept_headers(sent.items()),
                    kept_headers(answered, response=True))  # fmt: skip
    return Exchange(seq, at, elapsed_ms, "http", era_of(version), version, message, response,
                    session=session, http=http, events=events, body=seen.text, error=error)  # fmt: skip


class StdioGateway(_Endpoint):
    """ASGI app: Streamable HTTP in front of a stdio server, one server process per session.

    `initialize` starts a process and opens a session on it; DELETE ends both. An answer comes as
    JSON, or as SSE when the server sent notifications or requests before it (a client's answer to
    a server request is POSTed back as usual and written to the process).

    A 2026-07-28 request (no session; its version in `_meta` or the `MCP-Protocol-Version` header)
    goes to one process shared by every such request, started at the first, one request at a time
    so that clients' ids never collide on it; an error answer gets the status the era gives its code.
    """

    def __init__(
        self, command: Sequence[str], tape: Tape, *, path: str = "/mcp", max_processes: int = MAX_PROCESSES
    ) -> None:
        if max_processes < 1:
            raise ValueError(f"max_processes must be at least 1, not {max_processes}")
        self.command = list(command)
        self.tape = tape
        self.path = path
        self.max_processes = max_processes
        self._starting = 0
        self._links: dict[str, StdioUpstream] = {}
        self._shared: StdioUpstream | None = None
        self._shared_lock: anyio.Lock | None = None

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
        if method == "DELETE":
            link = self._links.pop(session_id or "", None)
            if link is None:
                await _answer(send, 404, _refusal("Session not found"))
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
            await _answer(send, status, _refusal("Missing Mcp-Session-Id" if status == 400 else "Session not found"))
            return
        session = [(b"mcp-session-id", (session_id or "").encode())]
        if "method" not in message or "id" not in message:
            await anyio.to_thread.run_sync(lambda: link.send(message))
            await _answer(send, 202, None, session)
            return
        await self._request(link, message, send, session)

    async def _start(self, send: Send) -> StdioUpstream | None:
        """A new server process; None, with the reason sent, when it cannot start (502) or too many run (503)."""
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
            return await anyio.to_thread.run_sync(lambda: StdioUpstream(self.command, tape=self.tape))
        except UpstreamError as exc:
            await _answer(send, 502, {"jsonrpc": "2.0", "id": None, "error": {"code": -32603, "message": str(exc)}})
            return None
        finally:
            self._starting -= 1

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
        link: StdioUpstream,
        message: dict[str, Any],
        send: Send,
        session: list[tuple[bytes, bytes]],
        *,
        stateless: bool = False,
    ) -> None:
        sender, inbox = anyio.create_memory_object_stream[Any](16)

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
                exchange: Exchange = item
                reply = exchange.response or {
                    "jsonrpc": "2.0",
                    "id": message.get("id"),
                    "error": {"code": -32603, "message": f"the stdio server did not answer: {exchange.error}"},
                }
                if streaming:
                    await _event(send, reply)
                    await send({"type": "http.response.body", "body": b""})
                else:
                    await _answer(send, error_status(reply) if stateless else 200, reply, session)
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


class Recording:
    """A recording proxy on 127.0.0.1 and the cassette it writes when stopped; blocking, for the CLI and `record`."""

    def __init__(
        self,
        upstream: str | None = None,
        *,
        out: str | Path,
        command: Sequence[str] | None = None,
        headers: Mapping[str, str] | None = None,
        redact: Sequence[str] = (),
        known_shapes: bool = True,
        host: str = "127.0.0.1",
        port: int = 0,
        path: str = "/mcp",
        max_processes: int = MAX_PROCESSES,
        scrub: Scrub | None = None,
        allow_remote: bool = False,
    ) -> None:
        """A `host` that is not loopback warns (`RemoteHostWarning`) unless `allow_remote`."""
        warn_if_remote(host, "the recording proxy", allow_remote=allow_remote)
        if (upstream is None) == (command is None):
            raise ValueError("record needs exactly one upstream: a URL, or a command for a stdio server")
        if upstream is not None and not upstream.startswith(("http://", "https://")):
            raise ValueError(f"the upstream must be an http:// or https:// URL, not {describe_upstream(upstream)!r}")
        self.out = Path(out)
        self.headers = dict(headers or {})
        self.redactor = Redactor(redact, known_shapes=known_shapes, scrub=scrub)
        for name, value in self.headers.items():
            self.redactor.header(name, value)
        self.tape = Tape()
        self.upstream: dict[str, Any]
        if command is not None:
            check_startable(command)
            self.upstream = {"transport": "stdio", "command": list(command)}
        else:
            assert upstream is not None
            self.upstream = {"transport": "http", "url": upstream}
        self.described = describe_upstream(upstream, command)
        from mcp_testkit.proxy import ChaosProxy

        self.recorder = TapeRecorder(self.tape)
        # The chaos proxy with recording on, and no fault: one proxy, one copy of forwarding and framing.
        self.proxy = ChaosProxy(
            upstream, upstream_command=command, headers=self.headers, host=host, port=port, path=path,
            max_processes=max_processes, journal_limit=1, allow_remote=True, recording=self.recorder,
        )  # fmt: skip

    @property
    def url(self) -> str:
        """The proxy's endpoint, e.g. `http://127.0.0.1:PORT/mcp`."""
        if not self.proxy.started:
            raise RuntimeError("the recording proxy is not started")
        return self.proxy.url

    def start(self) -> None:
        """Serve the proxy from a background thread; returns once it accepts connections."""
        self.proxy.start()

    def stop(self) -> Cassette:
        """Stop the proxy (and stdio servers), then redact, scan and write the cassette; the cassette written."""
        self.proxy.stop()
        self.recorder.flush()
        return save(self.tape.cassette(self.upstream), self.out, self.redactor)


@asynccontextmanager
async def record(
    upstream: str | None = None,
    *,
    out: str | Path,
    command: Sequence[str] | None = None,
    headers: Mapping[str, str] | None = None,
    redact: Sequence[str] = (),
    known_shapes: bool = True,
    port: int = 0,
    path: str = "/mcp",
    max_processes: int = MAX_PROCESSES,
    scrub: Scrub | None = None,
) -> AsyncIterator[str]:
    """Record a live server while the block runs: yields the proxy's URL, writes the cassette `out` on exit.

    `upstream` is a Streamable HTTP URL; `command` instead runs a stdio server (one process per
    session, at most `max_processes` at once). `headers` are sent to the upstream on every request
    (their values are redacted);
    `redact` are regular expressions whose matches in bodies become `<redacted:N>` placeholders;
    `scrub` is called with each JSON-RPC message before it is written and returns the message to write.
    """
    recording = Recording(
        upstream,
        out=out,
        command=command,
        headers=headers,
        redact=redact,
        known_shapes=known_shapes,
        port=port,
        path=path,
        max_processes=max_processes,
        scrub=scrub,
    )
    await anyio.to_thread.run_sync(recording.start)
    try:
        yield recording.url
    finally:
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(recording.stop)
