"""A keep-alive HTTP/1.1 client for the proxy's upstream, on asyncio's transports with httptools' parser.

The proxy sits on every request of a test: a general client costs it most of its time per call (its layers of
streams, pools and models). This one writes a request's bytes as they are, parses the answer in C, streams the
body as it comes and keeps connections open for the next request. It speaks to the one upstream it was made for.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import socket
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import urlsplit

__all__ = [
    "REUSE_S",
    "Answer",
    "ConnectTimeout",
    "Http11Pool",
    "NeverSent",
    "UpstreamClosed",
    "UpstreamTooLarge",
    "never_sent",
]

_CLOSE_WAIT_S = 1.0
"""How long closing the pool waits for its transports to close (one turn of the loop, as a rule)."""

_PAUSE_AT = 1024 * 1024
"""Bytes of an answer held unread before the connection stops reading (the client reads too slowly)."""
REUSE_S = 1.0
"""How long a connection may have been idle and still be reused. A POST is never sent twice, so one written as the
upstream closes an idle connection (its keep-alive timeout: 2 s for gunicorn, 5 s for uvicorn and Node) is a lost
answer: a connection idle longer is closed and a new one made instead."""


class UpstreamClosed(Exception):
    """The upstream closed the connection, or sent what is not HTTP, before its answer ended."""


class UpstreamTooLarge(UpstreamClosed):
    """The upstream's answer passed one of the proxy's bounds on it (its head, its header lines, its body): the
    connection is closed at once, and the message names the bound."""


class NeverSent(UpstreamClosed):
    """The request never left the proxy (the pool is closing): the upstream cannot have read it."""


class ConnectTimeout(TimeoutError):
    """No connection to the upstream was made in time: the request was never sent."""


def never_sent(exc: BaseException) -> bool:
    """Whether `exc`, from `Http11Pool.request`, says the upstream cannot have read the request: no connection was
    made (refused, unreachable, timed out, the pool closing). Any other failure came after the request was written."""
    if isinstance(exc, (NeverSent, ConnectTimeout)):
        return True
    return isinstance(exc, OSError) and not isinstance(exc, TimeoutError)  # OSError comes only from connecting


class Answer:
    """One answer as it arrives: its status and headers, then its body in pieces."""

    def __init__(self, connection: _Connection) -> None:
        self._connection = connection
        self.status = 0
        self.headers: list[tuple[bytes, bytes]] = []
        """As they came, as bytes, each name in lowercase (passed on to the client without decoding)."""
        self._pieces: collections.deque[bytes] = collections.deque()
        self._held = 0
        self.started = False
        """Whether a byte of the answer arrived (a GET or DELETE on a reused connection is resent only before that)."""
        self.complete = False
        self.error: str | None = None
        self.too_large = False
        """Whether the answer ended because it passed a bound (`error` names it)."""
        self._head: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._more: asyncio.Future[None] | None = None

    # -- fed by the connection --------------------------------------------------------------------

    def _headed(self) -> None:
        if not self._head.done():
            self._head.set_result(None)

    def _push(self, piece: bytes) -> None:
        self._pieces.append(piece)
        self._held += len(piece)
        if self._held > _PAUSE_AT:
            self._connection.pause()
        self._wake()

    def _end(self, error: str | None = None, *, too_large: bool = False) -> None:
        if self.complete or self.error is not None:
            return
        if error is None:
            self.complete = True
        else:
            self.error, self.too_large = error, too_large
        if not self._head.done():
            self._head.set_exception(self._failure())
        self._wake()

    def _failure(self) -> UpstreamClosed:
        return (UpstreamTooLarge if self.too_large else UpstreamClosed)(self.error or "no answer")

    def _time_out(self) -> None:
        if not self._head.done():
            self._head.set_exception(TimeoutError())

    def _wake(self) -> None:
        if self._more is not None and not self._more.done():
            self._more.set_result(None)

    # -- read by the proxy ------------------------------------------------------------------------

    async def head(self) -> None:
        """Wait for the status and headers; UpstreamClosed when the connection ended first."""
        await self._head

    def header(self, name: bytes) -> bytes:
        for key, value in self.headers:
            if key == name:
                return value
        return b""

    async def pieces(self) -> AsyncIterator[bytes]:
        """The body as it comes; UpstreamClosed when the connection ends before the body does."""
        while True:
            while self._pieces:
                piece = self._pieces.popleft()
                self._held -= len(piece)
                if self._held <= _PAUSE_AT:
                    self._connection.resume()
                yield piece
            if self.complete:
                return
            if self.error is not None:
                raise self._failure()
            self._more = asyncio.get_running_loop().create_future()
            await self._more

    async def read(self) -> bytes:
        if self.complete:  # the usual case of a JSON answer: it came with its head, no generator needed
            pieces, self._pieces, self._held = self._pieces, collections.deque(), 0
            self._connection.resume()
            return b"".join(pieces)
        return b"".join([piece async for piece in self.pieces()])

    async def aclose(self) -> None:
        """Done with the answer: its connection goes back to the pool when the answer ended cleanly."""
        self._connection.finished(self)


class _Connection(asyncio.Protocol):
    """One connection to the upstream, with httptools' parser fed by what arrives."""

    def __init__(self, pool: Http11Pool) -> None:
        import httptools

        self.pool = pool
        self.parser = httptools.HttpResponseParser(self)
        self.transport: asyncio.Transport | None = None
        self.answer: Answer | None = None
        self.lost = False
        self.paused = False
        self.reused = False
        self.close_delimited = False
        self.keep_alive = False
        self.idle_since = 0.0
        self.gone: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        """Done when the transport is closed for good (`connection_lost`): the pool's closing waits for it, so the
        loop never closes on a transport still open."""
        self._counted()

    def _counted(self) -> None:
        """Counts of a new answer, which `data_received` and the parser's callbacks hold against the pool's bounds."""
        self.head_raw = 0
        """Bytes received while the answer's head had not ended (a header without end grows in the parser)."""
        self.head_size = 0
        """Bytes of the answer's header lines parsed so far."""
        self.body_size = 0
        self.max_body: int | None = None
        """The bound on this answer's body: the pool's for a JSON answer, none for an SSE one (whose events the
        forwarder bounds one by one)."""
        self.over: str | None = None
        """The bound the answer passed, in words, once it did."""
        self.refused: str | None = None
        """Why the answer is no answer HTTP allows here (a 101 to a request without an upgrade), once it is not."""
        self.interim = False
        """Whether the message being parsed is an interim answer (1xx: 100 Continue, 103 Early Hints), which the
        final one follows on the same connection."""

    # -- asyncio ----------------------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        sock = transport.get_extra_info("socket")
        if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
            # A request is one write and waits for its answer: never let it sit for a delayed ACK (Nagle).
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def data_received(self, data: bytes) -> None:
        import httptools

        if self.answer is None:
            self.lost = True  # bytes nobody asked for: this connection cannot be trusted again
            self._close()
            return
        answer = self.answer
        answer.started = True
        heading = not answer._head.done()
        if heading:
            self.head_raw += len(data)
        try:
            self.parser.feed_data(data)
            if heading and not answer._head.done() and self.head_raw > self.pool.max_head:
                self._over(f"its head passed {self.pool.max_head:,} bytes without ending", "max_upstream_head")
        except (httptools.HttpParserError, UpstreamTooLarge) as exc:
            if self.over is not None:
                answer._end(self.over, too_large=True)
            elif self.refused is not None:
                answer._end(self.refused)
            else:
                answer._end(f"the upstream's answer is not HTTP: {exc}")
            self.lost = True
            self._close()

    def eof_received(self) -> None:
        self.lost = True  # the upstream closed its side: never reused (the transport closes itself)

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = True
        self.pool._forget(self)
        if not self.gone.done():
            self.gone.set_result(None)
        answer = self.answer
        if answer is not None:
            if self.close_delimited and answer._head.done():
                answer._end()  # a body without length nor chunks ends when the connection does
            else:
                answer._end("the upstream closed the connection before its answer ended")

    def pause(self) -> None:
        if not self.paused and self.transport is not None:
            self.paused = True
            self.transport.pause_reading()

    def resume(self) -> None:
        if self.paused and self.transport is not None and not self.lost:
            self.paused = False
            self.transport.resume_reading()

    # -- httptools --------------------------------------------------------------------------------

    def _over(self, what: str, option: str) -> None:
        """Stop at a bound the answer passed: raised out of the parser, which `data_received` turns into the
        answer's end and the connection's close."""
        self.over = f"{what} ({option})"
        raise UpstreamTooLarge(self.over)

    def on_header(self, name: bytes, value: bytes) -> None:
        assert self.answer is not None
        headers = self.answer.headers
        headers.append((name.lower(), value))
        pool = self.pool
        if len(headers) > pool.max_headers:
            self._over(f"it sent more than {pool.max_headers} header lines", "max_upstream_headers")
        self.head_size += len(name) + len(value) + 4  # with ": " and the line break
        if self.head_size > pool.max_head:
            self._over(f"its head passed {pool.max_head:,} bytes", "max_upstream_head")

    def on_headers_complete(self) -> None:
        answer = self.answer
        assert answer is not None
        status = self.parser.get_status_code()
        if status == 101:  # raised out of the parser, which `data_received` turns into the answer's end
            self.refused = "it answered 101 Switching Protocols to a request that asked for no upgrade"
            raise UpstreamClosed(self.refused)
        if status < 200:  # an interim answer: its headers are not the answer's, the final one follows
            self.interim = True
            answer.headers.clear()
            return
        answer.status = status
        names = {name for name, _ in answer.headers}
        self.keep_alive = self.parser.should_keep_alive()  # asked now: after the message, llhttp says False
        self.close_delimited = b"content-length" not in names and b"transfer-encoding" not in names
        if not answer.header(b"content-type").startswith(b"text/event-stream"):
            self.max_body = limit = self.pool.max_body
            declared = answer.header(b"content-length").strip()
            if declared.isdigit() and int(declared) > limit:
                what = f"its body of {int(declared):,} bytes (Content-Length) is over {limit:,}"
                self._over(what, "max_upstream_body")
        answer._headed()

    def on_body(self, body: bytes) -> None:
        assert self.answer is not None
        self.body_size += len(body)
        if self.max_body is not None and self.body_size > self.max_body:
            self._over(f"its body passed {self.max_body:,} bytes", "max_upstream_body")
        self.answer._push(bytes(body))

    def on_message_complete(self) -> None:
        assert self.answer is not None
        if self.interim:
            self.interim = False
            return
        self.close_delimited = False
        self.answer._end()

    # -- the pool's -------------------------------------------------------------------------------

    def send(self, head: bytes, body: bytes) -> Answer:
        import httptools

        self.parser = httptools.HttpResponseParser(self)
        self._counted()
        answer = self.answer = Answer(self)
        assert self.transport is not None
        self.transport.write(head + body if len(body) < 65536 else head)
        if len(body) >= 65536:
            self.transport.write(body)
        return answer

    def finished(self, answer: Answer) -> None:
        if answer is not self.answer:
            return
        self.answer = None
        pool = self.pool
        keep = answer.complete and not self.lost and not self.paused and len(pool._idle) < pool.idle_limit
        if keep and self.keep_alive:
            self.reused = True
            self.idle_since = asyncio.get_running_loop().time()
            pool._idle.append(self)
        else:
            self._close()

    def _close(self) -> None:
        if self.transport is not None:
            self.transport.close()


class Http11Pool:
    """Keep-alive connections to one upstream URL (http or https), made on the running asyncio loop."""

    def __init__(
        self, url: str, *, ssl: Any = None, idle: int = 64, max_head: int = 64 * 1024, max_headers: int = 100,
        max_body: int = 16 * 1024 * 1024,
    ) -> None:  # fmt: skip
        """`max_head` bytes of an answer's head, `max_headers` header lines and `max_body` bytes of a JSON answer's
        body (an SSE answer's is unbounded here): an answer that passes one ends in `UpstreamTooLarge`."""
        parts = urlsplit(url)
        self.host = parts.hostname or "127.0.0.1"
        self.port = parts.port or (443 if parts.scheme == "https" else 80)
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        default = (parts.scheme, self.port) in (("http", 80), ("https", 443))
        authority = (parts.netloc.rpartition("@")[2] if not default else parts.hostname) or self.host
        self.target = target.encode("latin-1")
        self.authority = authority.encode("latin-1")
        self.ssl = ssl if parts.scheme == "https" else None
        self.idle_limit = idle
        self.max_head, self.max_headers, self.max_body = max_head, max_headers, max_body
        self._idle: list[_Connection] = []
        self._all: set[_Connection] = set()
        self._closed = False

    def _forget(self, connection: _Connection) -> None:
        self._all.discard(connection)
        if connection in self._idle:
            self._idle.remove(connection)

    async def _connect(self) -> _Connection:
        if self._closed:
            raise NeverSent("the proxy is stopping: it opens no new connection upstream")
        loop = asyncio.get_running_loop()
        _, connection = await loop.create_connection(lambda: _Connection(self), self.host, self.port, ssl=self.ssl)
        if self._closed:  # closed while this one was being made: nobody would close it later
            connection._close()
            raise NeverSent("the proxy is stopping: it opens no new connection upstream")
        self._all.add(connection)
        return connection

    def _head(self, method: str, headers: list[tuple[bytes, bytes]], body: bytes) -> bytes:
        """The request's head as bytes: the headers as they came (names and values the client's parser or the
        proxy's own checks already took apart, so no line break is in them)."""
        lines = [b"%s %s HTTP/1.1\r\nhost: %s\r\n" % (method.encode("latin-1"), self.target, self.authority)]
        lines.extend([name + b": " + value + b"\r\n" for name, value in headers])
        if body or method == "POST":
            lines.append(b"content-length: %d\r\n" % len(body))
        lines.append(b"\r\n")
        return b"".join(lines)

    async def request(
        self, method: str, headers: list[tuple[bytes, bytes]], body: bytes, timeout: float | None = None
    ) -> Answer:
        """Send a request and wait for its answer's head; OSError when the upstream cannot be reached,
        UpstreamClosed when it closed the connection first, TimeoutError when the head took over `timeout`
        seconds (timed by one timer of the loop: a cancel scope per request costs more than the rest of it);
        `never_sent` tells which of these left the upstream without the request.

        A request is sent once: the upstream may have read it before it closed the connection, and a POST (a
        JSON-RPC message, a write perhaps) sent again would run twice. Only a GET or DELETE without a body, sent on
        a reused connection that the upstream had closed meanwhile (nothing of an answer came), is sent once more
        on a new one: both are idempotent."""
        loop = asyncio.get_running_loop()
        deadline = None if timeout is None else loop.time() + timeout
        head = self._head(method, headers, body)
        again = method in ("GET", "DELETE") and not body
        while self._idle:
            connection = self._idle.pop()
            if connection.lost or loop.time() - connection.idle_since > REUSE_S:
                connection._close()
                continue
            answer = connection.send(head, body)
            try:
                await self._headed(answer, deadline)
                return answer
            except UpstreamClosed:
                if answer.started or not again:
                    raise
                break  # the upstream closed this idle connection: a new one below
            except BaseException:
                connection._close()  # cancelled or timed out with the answer under way: never reused
                raise
        connection = await self._connected(deadline)
        answer = connection.send(head, body)
        try:
            await self._headed(answer, deadline)
        except BaseException:
            connection._close()
            raise
        return answer

    async def _connected(self, deadline: float | None) -> _Connection:
        """A new connection, made by `deadline` (ConnectTimeout otherwise)."""
        if deadline is None:
            return await self._connect()
        try:
            return await asyncio.wait_for(self._connect(), max(0.0, deadline - asyncio.get_running_loop().time()))
        except TimeoutError:
            raise ConnectTimeout() from None

    @staticmethod
    async def _headed(answer: Answer, deadline: float | None) -> None:
        if deadline is None:
            await answer.head()
            return
        timer = asyncio.get_running_loop().call_at(deadline, answer._time_out)
        try:
            await answer.head()
        finally:
            timer.cancel()

    async def aclose(self) -> None:
        """Close every connection and wait (at most `_CLOSE_WAIT_S`) until each is gone; a request still under way
        then opens no new one. The loop may close right after: no transport is left open on it."""
        self._closed = True
        connections = list(self._all)
        for connection in connections:
            connection._close()
        self._idle.clear()
        self._all.clear()
        going = [connection.gone for connection in connections if not connection.gone.done()]
        if going:
            await asyncio.wait(going, timeout=_CLOSE_WAIT_S)
