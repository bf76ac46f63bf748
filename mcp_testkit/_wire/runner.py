"""Serving the app with uvicorn on loopback: in a background thread, or as a task of the running loop.

The fence around uvicorn's internals: this module subclasses private classes of uvicorn (its httptools and
h11 protocols, ``uvicorn.Server``), overrides some of their methods and reads some of their attributes,
none of which uvicorn promises to keep. pyproject.toml therefore pins uvicorn to ``UVICORN_TESTED``, the
releases this module was tested with, and ``UVICORN_INTERNALS`` lists every internal it relies on: the
methods it overrides or calls with their parameters, the attributes it reads, and the names it adds, which
uvicorn must not use itself. The canary (``tests/test_runner.py``) checks the installed uvicorn against that
list, so a release that changes one fails it naming the change ("uvicorn 0.60.0 changed
H11Protocol.data_received(self, data) ...") rather than as a hang or a silent loss of the bounds below.
To widen the pin: install the new release, run the canary and the server tests, then raise the bound in
both places (pyproject.toml and ``UVICORN_TESTED``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import threading
from collections.abc import Callable, Generator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

__all__ = [
    "BODY_TIMED_OUT",
    "MAX_HEADERS",
    "MAX_HEADER_LINE",
    "STOPPING",
    "UVICORN_INTERNALS",
    "UVICORN_TESTED",
    "HeadLimits",
    "Refused",
    "Runner",
    "UvicornInternal",
    "bind",
]

_START_TIMEOUT_S = 10.0
_LINGER_S = 1.0
"""How long a connection refused with 431 is still read (and its bytes dropped) before it is closed, so that
the client, still sending, reads the 431 rather than a connection reset."""
MAX_HEADERS = 64 * 1024
"""The default bound on a request's head (request line and headers together), in bytes."""
MAX_HEADER_LINE = 8 * 1024
"""The default bound on one line of a request's head (a header, or the request line), in bytes."""
BODY_TIMED_OUT = "mcp_testkit.body_timed_out"
"""Set in a request's ASGI scope when its body did not arrive within body_timeout_s (the app answers 408)."""
STOPPING = "mcp-testkit: the server is stopping"
"""The message of the cancellation of a request still running when the server stops; the app closes its
connection quietly on it, where uvicorn would log the cancellation with a traceback."""

UVICORN_TESTED = ">=0.50,<0.55"
"""The uvicorn releases this module is tested with: pyproject.toml pins the same range. Before 0.36 there is
no ``Config.get_loop_factory`` (``Runner.start_thread`` calls it); before 0.50 uvicorn's default websockets
protocol imports ``websockets.legacy``, whose DeprecationWarning fails a test run that makes warnings errors."""


@dataclass(frozen=True)
class UvicornInternal:
    """One private class of uvicorn as this module uses it: the methods it overrides or calls (each with its
    parameter names), the keywords it passes, the attributes it reads, and the names its subclass adds."""

    path: str
    methods: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    keywords: tuple[str, ...] = ()
    reads: tuple[str, ...] = ()
    adds: tuple[str, ...] = ()


_PROTOCOL_METHODS = {
    "connection_made": ("self", "transport"),
    "send_400_response": ("self", "msg"),
    "data_received": ("self", "data"),
    "connection_lost": ("self", "exc"),
}
_PROTOCOL_READS = ("cycle", "loop", "transport")
_PROTOCOL_ADDS = (
    "header_timeout_s",
    "body_timeout_s",
    "max_headers",
    "max_header_line",
    "on_refused",
    "parser_name",
    "_header_deadline",
    "_head_since",
    "_body_deadline",
    "_arm",
    "_disarm",
    "_stop_timer",
    "_headers_too_slow",
    "_body_too_slow",
    "_head",
    "_line",
    "_tail",
    "_start",
    "_refused",
    "_head_fits",
    "_refuse_head",
)
_CYCLE_READS = ("scope", "more_body", "response_complete", "message_event")

UVICORN_INTERNALS = (
    *(
        UvicornInternal(
            f"uvicorn.protocols.http.{module}.{protocol}",
            methods=_PROTOCOL_METHODS,
            reads=_PROTOCOL_READS,
            adds=_PROTOCOL_ADDS,
        )
        for module, protocol in (("httptools_impl", "HttpToolsProtocol"), ("h11_impl", "H11Protocol"))
    ),
    UvicornInternal("uvicorn.protocols.http.httptools_impl.RequestResponseCycle", reads=_CYCLE_READS),
    UvicornInternal("uvicorn.protocols.http.h11_impl.RequestResponseCycle", reads=_CYCLE_READS),
    UvicornInternal(
        "uvicorn.server.Server",
        methods={
            "__init__": ("self", "config"),
            "capture_signals": ("self",),
            "startup": ("self", "sockets"),
            "shutdown": ("self", "sockets"),
            "main_loop": ("self",),
            "on_tick": ("self", "counter"),
            "serve": ("self", "sockets"),
        },
        reads=("config", "should_exit", "server_state", "servers"),
        adds=("ready", "_wake", "_loop", "on_ready", "stop"),
    ),
    UvicornInternal("uvicorn.server.ServerState", reads=("connections", "tasks")),
    UvicornInternal(
        "uvicorn.config.Config",
        methods={"get_loop_factory": ("self",)},
        keywords=(
            "app",
            "lifespan",
            "log_level",
            "access_log",
            "http",
            "timeout_keep_alive",
            "timeout_graceful_shutdown",
            "date_header",
            "server_header",
            "proxy_headers",
            "h11_max_incomplete_event_size",
        ),
    ),
)
"""Every uvicorn internal this module relies on, for the canary to check the installed uvicorn against."""


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket on `host:port` (port 0: a free one), so the URL is known before uvicorn runs."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(512)
        sock.setblocking(False)
    except OSError:
        sock.close()
        raise
    return sock


@dataclass(frozen=True)
class Refused:
    """A request the server refused before its app saw it: its method and target as far as they were read
    ("" when they were not), the status sent, and why."""

    method: str
    target: str
    status: int
    message: str


@dataclass(frozen=True)
class HeadLimits:
    """The bounds on a request's head, and who hears of a request refused for passing them (in the server's
    thread; it must not block)."""

    max_headers: int = MAX_HEADERS
    max_header_line: int = MAX_HEADER_LINE
    on_refused: Callable[[Refused], None] | None = None


def _request_line(start: bytes) -> tuple[str, str]:
    """The method and target of the first bytes of a request head, printable and short ("" when not there)."""
    parts = start.split(b"\n", 1)[0].rstrip(b"\r").split(b" ")
    method = parts[0].decode("latin-1") if parts[0].isalpha() and len(parts[0]) <= 16 else ""
    target = parts[1][:200].decode("latin-1") if method and len(parts) > 1 else ""
    return method, target if target.isprintable() else target.encode("unicode_escape").decode("ascii")


def _refusal_bytes(status: int, reason: str, message: str) -> bytes:
    body = json.dumps({"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": message}}).encode()
    head = (
        f"HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\ncontent-length: {len(body)}\r\n"
        "connection: close\r\n\r\n"
    )
    return head.encode("ascii") + body


if TYPE_CHECKING:
    _Protocol = asyncio.Protocol
else:
    _Protocol = object  # at run time uvicorn's protocol comes after it (`_protocol`)


class _BoundedHttp(_Protocol):
    """What the toolkit adds to uvicorn's HTTP protocol (placed before it in the class `_protocol` makes): bounds on
    the time a request's headers and body take and on the bytes of its head. Its settings are class attributes,
    set per server by `_protocol`."""

    header_timeout_s: float
    body_timeout_s: float
    max_headers: int
    max_header_line: int
    on_refused: Callable[[Refused], None] | None
    parser_name: str
    loop: Any
    transport: Any
    cycle: Any
    """The last three are uvicorn's protocol's own."""

    _header_deadline: asyncio.TimerHandle | None = None
    _head_since: float | None = None
    """The loop's time when the head now awaited began; None while none is awaited."""
    _body_deadline: asyncio.TimerHandle | None = None
    _head: int | None = None
    """Bytes of the request head received so far; None while the head is complete (a body may follow)."""
    _line = 0
    """Bytes of the head's last, unfinished line."""
    _tail = b""
    _start = b""
    _refused = False

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)
        self._arm()

    def data_received(self, data: bytes) -> None:
        if self._refused:
            return  # read and dropped until the connection closes: see _LINGER_S
        cycle = self.cycle
        if self._head_since is None and (cycle is None or cycle.response_complete):
            self._arm()  # the first bytes of a next request on a kept-alive connection
        if self._head is None and (cycle is None or cycle.response_complete or not cycle.more_body):
            self._head, self._line, self._tail, self._start = 0, 0, b"", data[:256]
        if self._head is not None and not self._head_fits(data):
            return
        super().data_received(data)
        if self.cycle is not cycle:  # its headers are complete: the request is under way
            self._head = None
            self._disarm()
            if self.cycle.more_body and self._body_deadline is None:
                self._body_deadline = self.loop.call_later(self.body_timeout_s, self._body_too_slow, self.cycle)
        if self._body_deadline is not None and not self.cycle.more_body:
            self._body_deadline.cancel()
            self._body_deadline = None

    def _head_fits(self, data: bytes) -> bool:
        """Count the head's bytes in `data`; False (and a 431 sent) when they pass a bound."""
        head = self._head or 0
        end = data.find(b"\r\n\r\n")
        if end >= 0:
            size = end + 4
        else:
            joined = self._tail + data[:3]
            at = joined.find(b"\r\n\r\n")
            size = at + 4 - len(self._tail) if at >= 0 else len(data)
        bare = data.find(b"\n\n", 0, size)  # a head ended by bare line feeds, which parsers accept too
        if bare >= 0:
            size = bare + 2
        if head + size > self.max_header_line:  # only then can a line be too long
            lines = data[:size].split(b"\n")
            longest = max([self._line + len(lines[0]), *map(len, lines[1:-1])]) if len(lines) > 1 else 0
            self._line = len(lines[-1]) + (self._line if len(lines) == 1 else 0)
            if max(longest, self._line) > self.max_header_line:
                self._refuse_head(f"a header line is over max_header_line ({self.max_header_line} bytes)")
                return False
        else:
            newline = data.rfind(b"\n", 0, size)
            self._line = size - newline - 1 if newline >= 0 else self._line + size
        self._head = head + size
        if self._head > self.max_headers:
            self._refuse_head(f"the request line and headers are over max_headers ({self.max_headers} bytes)")
            return False
        self._tail = data[-3:]
        return True

    def _refuse_head(self, why: str) -> None:
        message = f"Request Header Fields Too Large: {why}; the request was not read"
        self._refused, self._head = True, None
        self._disarm()
        cycle = self.cycle
        if cycle is not None and not cycle.response_complete:
            # A head pipelined behind a response still being sent (a GET stream): a 431 would land inside
            # that response, so the connection is closed instead, with nothing sent and nothing journaled.
            self.transport.close()
            return
        self.transport.write(_refusal_bytes(431, "Request Header Fields Too Large", message))
        self.loop.call_later(_LINGER_S, self.transport.close)
        if self.on_refused is not None:
            self.on_refused(Refused(*_request_line(self._start), 431, message))
        self._start = b""

    def send_400_response(self, msg: str) -> None:
        # The parser refused the request (uvicorn has logged its warning): a JSON-RPC error, as every
        # other refusal, and a record for the journal, of as much of the request line as came.
        message = (
            f"Bad Request: the HTTP parser ({self.parser_name}) refused the request: a malformed request line or "
            "header (control bytes, a duplicate Content-Length, Content-Length with Transfer-Encoding, an unknown "
            "method, ...)"
        )
        self._refused, self._head = True, None
        self.transport.write(_refusal_bytes(400, "Bad Request", message))
        self.transport.close()
        if self.on_refused is not None:
            self.on_refused(Refused(*_request_line(self._start), 400, message))
        self._start = b""

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_timer()
        if self._body_deadline is not None:
            self._body_deadline.cancel()
            self._body_deadline = None
        super().connection_lost(exc)

    def _body_too_slow(self, cycle: Any) -> None:
        self._body_deadline = None
        if cycle.more_body and not cycle.response_complete:
            cycle.scope[BODY_TIMED_OUT] = True
            cycle.more_body = False  # what came so far is all the app gets; it answers 408
            cycle.message_event.set()

    def _arm(self) -> None:
        # One timer per connection rather than one per request (a timer made and cancelled costs every
        # request): it fires at the first head's deadline and, if the head then waiting began later,
        # waits again until that head's own deadline.
        self._head_since = self.loop.time()
        if self._header_deadline is None:
            self._header_deadline = self.loop.call_later(self.header_timeout_s, self._headers_too_slow)

    def _disarm(self) -> None:
        self._head_since = None

    def _stop_timer(self) -> None:
        self._head_since = None
        if self._header_deadline is not None:
            self._header_deadline.cancel()
            self._header_deadline = None

    def _headers_too_slow(self) -> None:
        self._header_deadline = None
        since = self._head_since
        if since is None:
            return  # no head waits (it came in time): the next one arms the timer again
        left = since + self.header_timeout_s - self.loop.time()
        if left > 0:
            self._header_deadline = self.loop.call_later(left, self._headers_too_slow)
        elif not self.transport.is_closing():
            self.transport.close()



def _protocol(header_timeout_s: float, body_timeout_s: float, limits: HeadLimits, h11: bool = False) -> type[Any]:
    """uvicorn's HTTP protocol (httptools, else h11), plus bounds on the time a request's headers and body take,
    and on the bytes of its head.

    uvicorn closes a kept-alive connection that idles between requests, but not one that never
    finishes sending headers (or never sends anything), nor a body that trickles in: slowloris
    clients would keep their sockets, and the server's descriptors, forever. The body's bound is
    kept here rather than in the app, where a cancel scope per request would cost every request:
    when it passes, the body ends early and the scope is marked, and the app answers 408.

    Nor does uvicorn bound a head with httptools (which joins the pieces of a long header again and
    again: a 200 MB header took 42 s), and h11's bound answers 400: the head's bytes are counted here,
    before the parser sees them, and a head over `max_headers`, or a line of it over `max_header_line`,
    is answered 431 and the connection closed.
    """
    if h11:
        from uvicorn.protocols.http.h11_impl import H11Protocol as base
    else:
        try:
            from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol as base  # type: ignore[assignment]
        except ImportError:
            from uvicorn.protocols.http.h11_impl import H11Protocol as base
    settings = {
        "header_timeout_s": header_timeout_s,
        "body_timeout_s": body_timeout_s,
        "max_headers": limits.max_headers,
        "max_header_line": limits.max_header_line,
        "on_refused": None if limits.on_refused is None else staticmethod(limits.on_refused),
        "parser_name": "h11" if base.__name__ == "H11Protocol" else "httptools",
    }
    return type("Protocol", (_BoundedHttp, base), settings)


def _config(
    app: Any, header_timeout_s: float, body_timeout_s: float, idle_timeout_s: float, limits: HeadLimits, h11: bool
) -> Any:
    import uvicorn

    return uvicorn.Config(
        app,
        lifespan="off",
        log_level="warning",
        access_log=False,
        http=_protocol(header_timeout_s, body_timeout_s, limits, h11),
        h11_max_incomplete_event_size=limits.max_headers + 1,  # the bound above answers first, with its 431
        timeout_keep_alive=idle_timeout_s,  # type: ignore[arg-type]
        timeout_graceful_shutdown=2,
        date_header=False,
        server_header=False,
        # No X-Forwarded-For/-Proto rewriting of the client's address: a test server has no proxy in front of it
        # to trust, and the middleware costs every request a layer of the app.
        proxy_headers=False,
    )


def _server_class() -> Any:
    import uvicorn

    class Server(uvicorn.Server):
        """uvicorn that reports start-up, stops at once when told, and leaves signals alone."""

        def __init__(self, config: Any) -> None:
            super().__init__(config)
            self.ready = threading.Event()
            self._wake: asyncio.Event | None = None
            self._loop: asyncio.AbstractEventLoop | None = None
            self.on_ready: Any = None

        @contextlib.contextmanager
        def capture_signals(self) -> Generator[None, None, None]:
            yield  # Ctrl-C belongs to the test runner, not to the fake server.

        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            self._loop = asyncio.get_running_loop()
            self._wake = asyncio.Event()
            await super().startup(sockets=sockets)
            self.ready.set()
            if self.on_ready is not None:
                self.on_ready()

        async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
            tasks = list(self.server_state.tasks)
            if tasks:
                # A request still running (a Delay, a slow tool) may finish within the grace; then it is
                # ended, quietly (see STOPPING).
                for connection in list(self.server_state.connections):
                    connection.shutdown()
                _, running = await asyncio.wait(tasks, timeout=self.config.timeout_graceful_shutdown)
                for task in running:
                    task.cancel(msg=STOPPING)
                if running:
                    await asyncio.wait(running, timeout=_START_TIMEOUT_S)
            if self.server_state.connections or self.server_state.tasks:
                await super().shutdown(sockets=sockets)
                return
            # Nothing open: uvicorn's fixed 0.1 s wait for connections to finish would be pure cost.
            for server in self.servers:
                server.close()
            for server in self.servers:
                await server.wait_closed()

        async def main_loop(self) -> None:
            await self.on_tick(0)
            assert self._wake is not None
            while not self.should_exit:
                await self._wake.wait()

        def stop(self) -> None:
            self.should_exit = True
            loop, wake = self._loop, self._wake
            if loop is not None and wake is not None and not loop.is_closed():
                with contextlib.suppress(RuntimeError):
                    loop.call_soon_threadsafe(wake.set)

    return Server


class Runner:
    """One uvicorn server for an app, on a socket bound before it starts."""

    def __init__(
        self,
        app: Any,
        host: str,
        port: int,
        *,
        header_timeout_s: float,
        body_timeout_s: float,
        idle_timeout_s: float,
        limits: HeadLimits | None = None,
        h11: bool = False,
    ) -> None:
        """`h11`: uvicorn's h11 parser rather than httptools (both are tested)."""
        config = _config(app, header_timeout_s, body_timeout_s, idle_timeout_s, limits or HeadLimits(), h11)
        self._server = _server_class()(config)
        self.socket = bind(host, port)
        self.port: int = self.socket.getsockname()[1]
        self._thread: threading.Thread | None = None
        self._task: asyncio.Task[None] | None = None
        self._error: BaseException | None = None

    # -- in a thread -------------------------------------------------------------------------------

    def start_thread(self, name: str) -> None:
        """Serve in a daemon thread with its own event loop; returns once uvicorn accepts connections."""

        def run() -> None:
            loop_factory = self._server.config.get_loop_factory()
            loop = loop_factory() if loop_factory is not None else asyncio.new_event_loop()
            try:
                loop.run_until_complete(self._server.serve(sockets=[self.socket]))
            except BaseException as exc:  # reported to the thread that started us
                self._error = exc
            finally:
                self._server.ready.set()
                with contextlib.suppress(Exception):
                    loop.run_until_complete(loop.shutdown_asyncgens())
                loop.close()

        self._thread = threading.Thread(target=run, name=f"mcp-testkit-server-{name}", daemon=True)
        self._thread.start()
        if not self._server.ready.wait(_START_TIMEOUT_S):
            self.stop()
            raise RuntimeError(f"server {name!r} did not start within {_START_TIMEOUT_S} s")
        self._raise_start_error(name)

    # -- as a task ---------------------------------------------------------------------------------

    async def start_task(self, name: str) -> None:
        """Serve as a task of the running asyncio loop; returns once uvicorn accepts connections."""
        loop = asyncio.get_running_loop()
        started = asyncio.Event()
        self._server.on_ready = started.set
        self._task = loop.create_task(self._server.serve(sockets=[self.socket]), name=f"mcp-testkit-server-{name}")
        waiter = loop.create_task(started.wait())
        done, _ = await asyncio.wait(
            {self._task, waiter}, timeout=_START_TIMEOUT_S, return_when=asyncio.FIRST_COMPLETED
        )
        if waiter not in done:
            waiter.cancel()
            if self._task in done:
                self._error = self._task.exception() or RuntimeError("uvicorn exited during start-up")
                self._task = None
            else:
                await self.stop_task()
                raise RuntimeError(f"server {name!r} did not start within {_START_TIMEOUT_S} s")
        self._raise_start_error(name)

    async def stop_task(self) -> None:
        self._server.stop()
        if self._task is not None:
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await asyncio.wait_for(self._task, timeout=_START_TIMEOUT_S)
            self._task = None
        self.socket.close()

    # -- common ------------------------------------------------------------------------------------

    def stop(self) -> None:
        """Stop serving and close the socket; waits for the thread to end."""
        self._server.stop()
        if self._thread is not None:
            self._thread.join(_START_TIMEOUT_S)
            self._thread = None
        self.socket.close()

    def _raise_start_error(self, name: str) -> None:
        if self._error is not None:
            error, self._error = self._error, None
            self.socket.close()
            raise RuntimeError(f"server {name!r} failed to start: {error!r}") from error
