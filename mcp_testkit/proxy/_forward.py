"""The proxy's link to a Streamable HTTP upstream: one pooled `httpx2.AsyncClient` for the proxy's life, every
request sent to the one configured URL, and an upstream that is down, slow or breaks off answered as the fault it is.

Written as an ASGI app (the request body already read and handed in by `receive`), so the fault layer in front of
it (`_endpoint.py`) treats it exactly as it treats the stdio gateway.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any, Protocol

import anyio

from mcp_testkit._wire.asgi import Receive, Scope, Send, cancel_on_disconnect, read_body
from mcp_testkit._wire.strict_json import JsonError
from mcp_testkit._wire.strict_json import loads as strict_loads
from mcp_testkit.proxy._bounds import EventTooLarge, WholeEvents, over_limit
from mcp_testkit.proxy._http11 import UpstreamClosed, UpstreamTooLarge, never_sent
from mcp_testkit.upstream import MAX_UPSTREAM_BODY, MAX_UPSTREAM_HEAD, MAX_UPSTREAM_HEADERS

__all__ = [
    "LOST",
    "NOT_FORWARDED",
    "NOT_RETURNED",
    "UNSENT",
    "UPSTREAM_KEY",
    "BrokenOff",
    "HttpForwarder",
    "Recorder",
    "Seen",
    "gateway_error",
    "marked",
    "upstream_error",
]

NOT_FORWARDED = frozenset(
    {"host", "content-length", "connection", "keep-alive", "transfer-encoding", "te", "upgrade", "accept-encoding"}
)
"""Hop-by-hop headers, and those httpx2 sets itself; the rest pass through (the request goes to the one upstream URL
whatever a header names)."""
NOT_RETURNED = frozenset({"content-length", "connection", "keep-alive", "transfer-encoding", "content-encoding"})
_NOT_FORWARDED = frozenset(name.encode() for name in NOT_FORWARDED)
_NOT_RETURNED = frozenset(name.encode() for name in NOT_RETURNED)
BODY_KEY = "mcp_testkit.body"
"""The key of a forwarded request's scope holding its body, already read by the proxy's endpoint."""
UNRECORDED_KEY = "mcp_testkit.unrecorded"
"""Set in the scope of a request the proxy makes itself (a DELETE of a session a fault lost): never recorded."""
DECODED_KEY = "mcp_testkit.decoded"
"""The key of a JSON answer's body message holding the answer as the forwarder decoded it (checking it is JSON):
the endpoint journals it without decoding it again. ASGI servers ignore keys they do not know."""
UPSTREAM_KEY = "mcp_testkit.upstream"
"""The key, on a message of an answer a link makes itself (the forwarder's 502 or 504, the stdio gateway's error for
a process that gave no answer), of what became of the request upstream: `UNSENT` or `LOST`. The upstream's own
answers have none; the journal's `executed` is read from it."""
UNSENT = "unsent"
"""The request never reached the upstream (no connection was made): the upstream cannot have run it."""
LOST = "lost"
"""The request was sent, and no whole answer came back: the upstream may have run it (nobody can tell)."""
_MAX_BODY = 64 * 1024 * 1024
_ENDING_S = 10.0
"""How long `close()` gives the DELETEs of the sessions left open upstream."""
_CLOSING_S = 5.0
"""How long `close()` then gives the pool to close its connections."""


def upstream_error(request_id: Any, message: str) -> dict[str, Any]:
    """The JSON-RPC error a client gets for what went wrong upstream: -32603 (internal error), the proxy's words."""
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": -32603, "message": message}}


def marked(send: Send, upstream: str) -> Send:
    """`send`, each message of it marked with what became of the request upstream (`UPSTREAM_KEY`): for an answer a
    link makes itself, as the stdio gateway's to a call its process took and never answered."""

    async def sending(message: Any) -> None:
        await send({**message, UPSTREAM_KEY: upstream})

    return sending


async def gateway_error(send: Send, status: int, request_id: Any, message: str, upstream: str = LOST) -> None:
    """Answer 502 or 504 with a JSON-RPC error naming what the upstream did; `upstream` says whether it may have
    read the request (`LOST`) or cannot have (`UNSENT`)."""
    body = json.dumps(upstream_error(request_id, message), separators=(",", ":")).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers, UPSTREAM_KEY: upstream})
    await send({"type": "http.response.body", "body": body})


class HttpForwarder:
    """ASGI app: each request sent on to `url` (never anywhere else) with `headers` added, its answer streamed back.

    Statuses, headers and SSE streams pass through as they come. The client is made on the serving loop at the
    first request and kept (pooled connections); `close()` closes it from any thread, on asyncio or trio.
    """

    def __init__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        timeout_s: float = 30.0,
        recorder: Recorder | None = None,
        max_head: int = MAX_UPSTREAM_HEAD,
        max_headers: int = MAX_UPSTREAM_HEADERS,
        max_body: int = MAX_UPSTREAM_BODY,
    ) -> None:
        """`max_head`, `max_headers` and `max_body` bound an answer's head, its header lines, and its body (a JSON
        one) or each of its events (an SSE one): an answer past one is a 502 naming it, its connection closed."""
        self.url = url
        self.max_head, self.max_headers, self.max_body = max_head, max_headers, max_body
        self.recorder = recorder
        """Where each exchange is kept as it was seen (a cassette's tape), or None: nothing kept, nothing decoded."""
        self.headers = {name.lower(): value for name, value in (headers or {}).items()}
        for name, value in self.headers.items():
            if any(c in name or c in value for c in "\r\n\0"):
                raise ValueError(f"the header {name!r} for the upstream holds a line break or a NUL: it cannot be sent")
        self._added = [(name.encode("latin-1"), value.encode("latin-1")) for name, value in self.headers.items()]
        self._replaced = _NOT_FORWARDED | {name for name, _ in self._added}
        self.timeout_s = timeout_s
        """How long the upstream may take to begin its answer (the status and headers) before the client gets 504."""
        self._client: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._trio: Any = None
        """The trio run the client was made on (its `TrioToken`), when it was made on trio."""

    def _pooled(self) -> Any:
        """The pool of upstream connections, made on the serving loop at the first request and kept: this module's
        own HTTP/1.1 client on asyncio, an `httpx2.AsyncClient` on any other loop (trio, in-process)."""
        if self._client is None:
            import sniffio

            from mcp_testkit._wire.tls import tls_context

            library = sniffio.current_async_library()
            if library == "asyncio":
                from mcp_testkit.proxy._http11 import Http11Pool

                self._client = Http11Pool(
                    self.url, ssl=tls_context(), max_head=self.max_head, max_headers=self.max_headers,
                    max_body=self.max_body,
                )  # fmt: skip
            else:
                import httpx2

                from mcp_testkit.proxy._http11 import REUSE_S

                limits = httpx2.Limits(max_connections=200, max_keepalive_connections=50, keepalive_expiry=REUSE_S)
                timeout = httpx2.Timeout(self.timeout_s, read=None)
                self._client = httpx2.AsyncClient(
                    timeout=timeout, follow_redirects=False, verify=tls_context(), limits=limits
                )
                if library == "trio":
                    import trio

                    self._trio = trio.lowlevel.current_trio_token()
            with contextlib.suppress(RuntimeError):
                self._loop = asyncio.get_running_loop()
        return self._client

    async def _request(self, method: str, sent: list[tuple[bytes, bytes]], body: bytes) -> Any:
        """The upstream's answer to a request (its head read): an `Answer`, or an httpx2 response behind the same
        face. OSError or UpstreamClosed when the upstream did not answer, TimeoutError when it took over
        `timeout_s` to begin."""
        from mcp_testkit.proxy._http11 import ConnectTimeout, Http11Pool, NeverSent, UpstreamClosed

        client = self._pooled()
        if isinstance(client, Http11Pool):
            return await client.request(method, sent, body, self.timeout_s)
        import httpx2

        request = client.build_request(method, self.url, content=body or None, headers=sent)
        try:
            with anyio.fail_after(self.timeout_s):
                return _HttpxAnswer(await client.send(request, stream=True), self.max_body)
        except (httpx2.ConnectTimeout, httpx2.PoolTimeout):
            raise ConnectTimeout() from None  # no connection: the request was never written
        except httpx2.ConnectError as exc:
            raise NeverSent(f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__) from None
        except httpx2.HTTPError as exc:
            # httpcore2 sends a request once: it takes another connection (ConnectionNotAvailable) only before
            # writing a byte, and retries only connecting (`retries`, 0 here). A request it wrote and lost is here.
            raise UpstreamClosed(f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__) from None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        body = scope.get(BODY_KEY)
        if body is None:
            body, _ = await read_body(receive, _MAX_BODY) if scope["method"] == "POST" else (b"", None)
        request_id = scope.get("mcp_testkit.rpc_id")
        replaced = self._replaced
        # Header names come in lowercase from the ASGI server; as bytes they go on without decoding.
        sent = [(name, value) for name, value in scope.get("headers", ()) if name.lower() not in replaced]
        sent.extend(self._added)
        recorder = None if UNRECORDED_KEY in scope else self.recorder
        seen = None if recorder is None else Seen(scope["method"], body, sent)
        token = None if recorder is None else recorder.begin()
        try:
            try:
                response = await self._request(scope["method"], sent, body)
            except TimeoutError as exc:
                why = f"chaos proxy: upstream {self.url} did not answer within {self.timeout_s:g} s"
                _failed(seen, 504, f"the upstream did not answer within {self.timeout_s:g} s")
                await gateway_error(send, 504, request_id, why, UNSENT if never_sent(exc) else LOST)
                return
            except UpstreamTooLarge as exc:
                _failed(seen, 502, f"the upstream answered over a limit: {exc}")
                await gateway_error(send, 502, request_id, over_limit(self.url, str(exc)))
                return
            except (OSError, UpstreamClosed) as exc:
                why = str(exc) if isinstance(exc, UpstreamClosed) else f"{type(exc).__name__}: {exc}"
                why = why or type(exc).__name__
                _failed(seen, 502, f"the upstream did not answer: {why}")
                message = f"chaos proxy: upstream {self.url} did not answer ({why})"
                await gateway_error(send, 502, request_id, message, UNSENT if never_sent(exc) else LOST)
                return
            try:
                await self._relay(response, request_id, receive, send, seen)
            finally:
                await response.aclose()
        finally:
            if recorder is not None:
                recorder.keep(token, seen)

    async def _relay(self, response: Any, request_id: Any, receive: Receive, send: Send, seen: Seen | None) -> None:
        answered = response.headers
        if seen is not None:
            seen.status, seen.raw_answered = response.status, answered
        if not 200 <= response.status < 600:  # 101 on trio (the asyncio pool refuses it), 999: nothing to pass on
            what = f"answered HTTP {response.status}, " + (
                "which is no final answer to a request that asked for no upgrade" if response.status < 200
                else "which is no HTTP status (RFC 9110 has 100 to 599)"
            )  # fmt: skip
            _failed(seen, 502, f"the upstream {what}")
            await gateway_error(send, 502, request_id, f"chaos proxy: upstream {self.url} {what}")
            return
        if not response.header(b"content-type").startswith(b"text/event-stream"):
            try:
                raw = await response.read()
            except UpstreamTooLarge as exc:
                _failed(seen, 502, f"the upstream answered over a limit: {exc}")
                await gateway_error(send, 502, request_id, over_limit(self.url, str(exc)))
                return
            except UpstreamClosed as exc:
                _failed(seen, 502, f"the upstream broke off its answer: {exc}")
                why = f"chaos proxy: upstream {self.url} broke off its answer ({exc})"
                await gateway_error(send, 502, request_id, why)
                return
            if seen is not None:
                seen.json_body(raw)
            try:
                decoded = _json_answer(response, raw)
            except JsonError as exc:  # deep, non-finite, not JSON: said, never passed on nor a traceback
                what = f"answered HTTP {response.status} with a body that is not JSON-RPC: {exc}"
                if seen is not None:
                    seen.error = f"the upstream {what}"
                await gateway_error(send, 502, request_id, f"chaos proxy: upstream {self.url} {what}")
                return
            returned = [(name, value) for name, value in answered if name not in _NOT_RETURNED]
            head = [(b"content-length", b"%d" % len(raw)), *returned]
            await send({"type": "http.response.start", "status": response.status, "headers": head})
            await send({"type": "http.response.body", "body": raw, DECODED_KEY: decoded})
            return
        await _relay_events(response, self.url, self.max_body, request_id, receive, send, seen)

    async def aclose(self) -> None:
        """Close the pooled connections from the loop serving the proxy (in-process on a loop other than asyncio,
        where `close()` from another thread cannot reach them)."""
        client, self._client, self._loop, self._trio = self._client, None, None, None
        if client is not None:
            await client.aclose()

    def close(self, first: Callable[[], Awaitable[None]] | None = None) -> None:
        """Close the pooled connections on the loop that made them, asyncio's or trio's (from any thread, before that
        loop stops); `first` runs there before, on the pool still open (the proxy DELETEs the sessions left open
        upstream). Each step is bounded (`_ENDING_S`, `_CLOSING_S`); called on that very loop, the closing is left
        running there."""
        client, loop, token = self._client, self._loop, self._trio
        if client is None or (loop is None and token is None) or (loop is not None and loop.is_closed()):
            self._client = self._loop = self._trio = None
            return

        async def shut() -> None:
            try:
                if first is not None:
                    with anyio.move_on_after(_ENDING_S), contextlib.suppress(Exception):
                        await first()
            finally:
                self._client = self._loop = self._trio = None
                with anyio.move_on_after(_CLOSING_S, shield=True):
                    await client.aclose()

        if token is not None:
            _close_on_trio(shut, token)
            return
        assert loop is not None
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:  # served in-process on this very loop: close it there, without waiting on ourselves
            loop.create_task(shut())
            return
        future = asyncio.run_coroutine_threadsafe(shut(), loop)
        try:
            future.result(_ENDING_S + _CLOSING_S)
        except (concurrent.futures.TimeoutError, RuntimeError):
            future.cancel()


async def _relay_events(
    response: Any, url: str, max_body: int, request_id: Any, receive: Receive, send: Send, seen: Seen | None
) -> None:
    """Pass an SSE answer on in whole events, each at most `max_body` bytes (`WholeEvents`): past it the client's
    stream ends with an error event naming the bound, and the answer is cancelled at its next wait (so that each
    generator under it ends, on trio's httpx2 client too)."""
    if seen is not None:
        seen.framing = "sse"
    returned = [(name, value) for name, value in response.headers if name not in _NOT_RETURNED]
    await send({"type": "http.response.start", "status": response.status, "headers": returned})
    ended = broken = False
    events = WholeEvents(max_body)
    async with anyio.create_task_group() as group:
        group.start_soon(cancel_on_disconnect, receive, group.cancel_scope)
        try:
            async for piece in response.pieces():
                if ended:
                    continue  # past the bound, until the cancel lands
                try:
                    chunk = events.feed(piece)
                except EventTooLarge as exc:
                    await _event_too_large(url, str(exc), request_id, send, seen)
                    ended = True
                    group.cancel_scope.cancel()
                    continue
                if chunk:
                    await send({"type": "http.response.body", "body": chunk, "more_body": True})
                    if seen is not None:
                        seen.feed(chunk)
        except UpstreamClosed as exc:
            if not ended:  # else the client's stream ended at the bound already
                if seen is not None:
                    seen.error = f"the upstream broke off its answer: {exc}"
                broken = True
        if not ended and not broken:
            chunk = events.rest()
            if chunk:
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
                if seen is not None:
                    seen.feed(chunk)
            await send({"type": "http.response.body", "body": b""})
            ended = True
        group.cancel_scope.cancel()
    if broken:
        # The upstream broke off its stream: so does the proxy, the same connection behaviour. Raised outside the
        # task group, which would wrap it in an exception group the endpoint does not catch (a logged traceback).
        raise BrokenOff(url)
    if not ended and seen is not None and seen.error is None:
        seen.left = True


async def _event_too_large(url: str, why: str, request_id: Any, send: Send, seen: Seen | None) -> None:
    """End an SSE answer whose event passed the bound: the event is never passed on, the client's stream ends
    after an error event naming the bound (for a request; a GET stream just ends), and the upstream's connection
    closes (the answer is closed unfinished)."""
    if seen is not None:
        seen.error = f"the upstream answered over a limit: {why}"
    if request_id is not None:
        data = json.dumps(upstream_error(request_id, over_limit(url, why)), separators=(",", ":")).encode()
        frame = b"event: message\ndata: " + data + b"\n\n"
        await send({"type": "http.response.body", "body": frame, "more_body": True, UPSTREAM_KEY: LOST})
    await send({"type": "http.response.body", "body": b""})


def _close_on_trio(shut: Callable[[], Awaitable[None]], token: Any) -> None:
    """Run `shut` on the trio run of `token`: as a system task when called from that run's own thread (a sync
    `stop()` inside the served loop, which cannot wait on itself), else from this thread, waiting for it. On a run
    that has ended nothing can run it any more: the client is dropped unclosed, as it was before trio was known here."""
    import trio

    try:
        here = trio.lowlevel.current_trio_token()
    except RuntimeError:
        here = None
    if here is token:

        async def quietly() -> None:
            with contextlib.suppress(Exception):  # a system task's exception would crash the whole run
                await shut()

        trio.lowlevel.spawn_system_task(quietly)
        return
    with contextlib.suppress(trio.RunFinishedError, RuntimeError):  # RuntimeError: called inside another trio run
        trio.from_thread.run(shut, trio_token=token)


class _HttpxAnswer:
    """An httpx2 streamed response with the face of `_http11.Answer` (on loops other than asyncio)."""

    def __init__(self, response: Any, max_body: int) -> None:
        self._response = response
        self.status: int = response.status_code
        self.headers = [(name.lower(), value) for name, value in response.headers.raw]
        self.max_body = max_body
        """The bound on a JSON answer's body (`read`); h11 bounds the head itself (16 KiB)."""

    def header(self, name: bytes) -> bytes:
        return next((value for key, value in self.headers if key == name), b"")

    async def pieces(self) -> AsyncIterator[bytes]:
        import httpx2

        from mcp_testkit.proxy._http11 import UpstreamClosed

        try:
            async for chunk in self._response.aiter_raw():
                yield chunk
        except httpx2.HTTPError as exc:
            raise UpstreamClosed(f"{type(exc).__name__}: {exc}") from None

    async def read(self) -> bytes:
        pieces, size = [], 0
        with anyio.CancelScope() as scope:
            async for piece in self.pieces():
                size += len(piece)
                if size > self.max_body:
                    # Cancelled at httpx2's next wait rather than left here: each of its generators then ends.
                    scope.cancel()
                    continue
                pieces.append(piece)
        if size > self.max_body:
            raise UpstreamTooLarge(f"its body passed {self.max_body:,} bytes (max_upstream_body)")
        return b"".join(pieces)

    async def aclose(self) -> None:
        await self._response.aclose()


class Recorder(Protocol):
    """What keeps the exchanges a forwarder sees: `begin` as a request arrives, `keep` once it is over."""

    def begin(self) -> Any: ...

    def keep(self, token: Any, seen: Any) -> None: ...


class Seen:
    """One exchange as the forwarder saw it, for a recorder: the request, the status, the headers each way, the
    answer's bytes, and what went wrong. Kept as bytes while the proxy serves; `decode()` (when the recorder
    writes) gives the answer's framing and messages, so that recording costs a request little more than proxying."""

    __slots__ = ("body", "chunks", "error", "framing", "left", "messages", "method", "raw_answered", "raw_sent",
                 "status", "text")  # fmt: skip

    def __init__(self, method: str, body: bytes, raw_sent: list[tuple[bytes, bytes]]) -> None:
        self.method, self.body, self.raw_sent = method, body, raw_sent
        self.status: int | None = None
        self.raw_answered: list[tuple[bytes, bytes]] = []
        self.framing = "empty"
        self.messages: list[Any] = []
        self.text: str | None = None
        self.error: str | None = None
        self.left = False
        """Whether the client left before the SSE stream ended."""
        self.chunks: list[bytes] = []

    def frozen(self) -> tuple[Any, ...]:
        """What was seen, as one tuple of bytes, strings and numbers, which the garbage collector stops tracking
        the first time it looks: a recording keeps thousands of exchanges until it writes, and tracked ones
        would make every full collection walk them all (as the journal's records once did)."""
        return (self.method, self.body, tuple(self.raw_sent), self.status, tuple(self.raw_answered), self.framing,
                self.error, self.left, tuple(self.chunks))  # fmt: skip

    @classmethod
    def thawed(cls, kept: tuple[Any, ...]) -> Seen:
        """The `Seen` that `frozen()` gave `kept` from."""
        method, body, raw_sent, status, raw_answered, framing, error, left, chunks = kept
        seen = cls(method, body, list(raw_sent))
        seen.status, seen.raw_answered, seen.framing = status, list(raw_answered), framing
        seen.error, seen.left, seen.chunks = error, left, list(chunks)
        return seen

    @property
    def sent(self) -> dict[str, str]:
        """The headers sent upstream, decoded (when the recorder writes, not while the proxy serves)."""
        return {name.decode("latin-1").lower(): value.decode("latin-1") for name, value in self.raw_sent}

    @property
    def answered(self) -> list[tuple[str, str]]:
        """The upstream's answer headers, decoded."""
        return [(name.decode("latin-1"), value.decode("latin-1")) for name, value in self.raw_answered]

    @property
    def message(self) -> Any:
        """The request's message, decoded as strictly as the server decodes one (None for what is not JSON)."""
        return _decoded(self.body)

    def json_body(self, raw: bytes) -> None:
        if raw:
            self.framing = "json"
            self.chunks = [raw]

    def feed(self, chunk: bytes) -> None:
        self.chunks.append(chunk)

    def decode(self) -> None:
        """Decode the answer's bytes into `messages` (and `framing` "text" for a body that is not JSON)."""
        from mcp_testkit._wire.sse import SseDecoder, SseEventTooLarge

        chunks, self.chunks = self.chunks, []
        if self.framing == "json":
            raw = b"".join(chunks)
            decoded = _decoded(raw)
            if decoded is None:
                self.framing, self.text = "text", raw.decode("utf-8", errors="replace")
            else:
                self.messages.append(decoded)
            return
        decoder = SseDecoder()
        for chunk in chunks:
            try:
                events = decoder.feed(chunk)
            except SseEventTooLarge as exc:  # passed on to the client all the same; the record says why it stops
                self.messages.append({"unparsed": str(exc)})
                return
            self.messages.extend(_decoded(e.data.encode()) or {"unparsed": e.data} for e in events if e.data)


def _decoded(body: bytes) -> Any:
    """A message, decoded as strictly as the server decodes one; None for what is not JSON of the wire."""
    from mcp_testkit._wire.strict_json import JsonError, loads

    try:
        return loads(body) if body else None
    except JsonError:
        return None


def _failed(seen: Seen | None, status: int, error: str) -> None:
    if seen is not None:
        seen.status, seen.error = status, error


class BrokenOff(Exception):
    """The upstream broke off an SSE answer midway: the client's connection is broken off too."""

    def __init__(self, url: str) -> None:
        super().__init__(f"upstream {url} broke off its SSE answer")


def _json_answer(response: Any, raw: bytes) -> Any:
    """A non-SSE answer decoded as strictly as a request (None when it is empty, or not JSON on an error status);
    `JsonError` saying why when a client cannot read it (not JSON, NaN or Infinity, nested too deeply).

    A body of another type passes through on an error status (a real server's plain-text 500 is its fault to show);
    a 2xx body that claims JSON and is not, or is neither JSON nor empty, is garbage the client gets a 502 for.
    """
    if not raw:
        return None
    content_type = response.header(b"content-type").split(b";", 1)[0].strip().lower()
    if content_type == b"application/json":
        return strict_loads(raw, "answer")
    if response.status >= 400:
        return None
    raise JsonError(f"a {content_type.decode('latin-1') or 'body without a Content-Type'}, not application/json")
