"""Recording: the chaos proxy on 127.0.0.1 in front of a live server, keeping every exchange, and writing them
as a cassette when it stops.

In front of a Streamable HTTP server the proxy passes each request through untouched (statuses,
headers, SSE streams as they come) and records it at the JSON-RPC level; in front of a stdio server
it serves Streamable HTTP itself through its `StdioGateway`, one server
process per session. Either way a client points at the proxy as it would at the server.
"""

from __future__ import annotations

import threading
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TextIO

import anyio
import anyio.to_thread

from mcp_testkit._wire.binding import warn_if_remote
from mcp_testkit.cassettes._format import Cassette
from mcp_testkit.cassettes._redact import Redactor, Scrub, save
from mcp_testkit.upstream import (
    MAX_PROCESSES,
    MAX_UPSTREAM_BODY,
    MAX_UPSTREAM_HEAD,
    MAX_UPSTREAM_HEADERS,
    START_TIMEOUT_S,
    Exchange,
    HttpInfo,
    Tape,
    check_startable,
    describe_upstream,
    era_of,
    kept_headers,
    split_messages,
    version_of,
)

__all__ = ["Recording", "TapeRecorder", "record"]


class TapeRecorder:
    """What the chaos proxy's forwarder hands each exchange to when recording: kept on `tape` at the JSON-RPC level.

    The proxy passes each request through untouched (statuses, headers, SSE streams as they come); this keeps what
    it saw as bytes, and `flush()` (when the recording stops) turns each into an `Exchange` on the tape: the
    decoding costs no request its time. A stdio server's exchanges go on the same `tape`, from its gateway.
    """

    def __init__(self, tape: Tape) -> None:
        self.tape = tape
        self._seen: list[tuple[tuple[int, float], float, tuple[Any, ...]]] = []
        """(the number and start `begin` gave, when it ended by `time.monotonic()`, what was seen `frozen()`), per
        exchange: tuples the garbage collector stops tracking, however long the recording"""
        self._thaw: Any = None
        self._lock = threading.Lock()

    def begin(self) -> tuple[int, float]:
        return self.tape.start()

    def keep(self, token: tuple[int, float], seen: Any) -> None:
        """Keep what the forwarder saw, and when it ended; kept even when the stream was cancelled (what came before
        was seen). Only a list's append, one step the interpreter never splits: the lock is `flush`'s."""
        if self._thaw is None:
            self._thaw = type(seen).thawed
        self._seen.append((token, time.monotonic(), seen.frozen()))

    def flush(self) -> None:
        """Put every exchange kept so far on the tape."""
        with self._lock:
            kept, self._seen = self._seen, []
        # ms since the tape started, as Tape.elapsed_ms reckons them, at the time each exchange ended
        started_ms = self.tape.elapsed_ms(0.0) - (time.monotonic() * 1000)
        for (seq, at), ended, seen in kept:
            elapsed_ms = max(0.0, round(ended * 1000 + started_ms - at, 1))
            self.tape.add(_exchange(seq, at, elapsed_ms, self._thaw(seen)))


def _exchange(seq: int, at: float, elapsed_ms: float, seen: Any) -> Exchange:
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
        start_timeout_s: float = START_TIMEOUT_S,
        upstream_stderr: TextIO | None = None,
        max_upstream_head: int = MAX_UPSTREAM_HEAD,
        max_upstream_headers: int = MAX_UPSTREAM_HEADERS,
        max_upstream_body: int = MAX_UPSTREAM_BODY,
    ) -> None:
        """A `host` that is not loopback warns (`RemoteHostWarning`) unless `allow_remote`. A `command` must start
        and answer `initialize` within `start_timeout_s` when the recording starts (`UpstreamError` otherwise); its
        stderr is passed through to `upstream_stderr` when given, else kept off the terminal."""
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
            start_timeout_s=start_timeout_s, upstream_stderr=upstream_stderr, max_upstream_head=max_upstream_head,
            max_upstream_headers=max_upstream_headers, max_upstream_body=max_upstream_body,
        )  # fmt: skip

    @property
    def url(self) -> str:
        """The proxy's endpoint, e.g. `http://127.0.0.1:PORT/mcp`."""
        if not self.proxy.started:
            raise RuntimeError("the recording proxy is not started")
        return self.proxy.url

    def start(self) -> None:
        """Serve the proxy from a background thread; returns once it accepts connections (`UpstreamError` first
        when a command exits or does not answer `initialize`)."""
        self.proxy.start()

    def stop(self) -> Cassette:
        """Stop the proxy (and stdio servers), then redact, scan and write the cassette; the cassette written."""
        self.proxy.stop()
        self.recorder.flush()
        return save(Cassette.from_tape(self.tape, self.upstream), self.out, self.redactor)


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
    start_timeout_s: float = START_TIMEOUT_S,
    upstream_stderr: TextIO | None = None,
    max_upstream_head: int = MAX_UPSTREAM_HEAD,
    max_upstream_headers: int = MAX_UPSTREAM_HEADERS,
    max_upstream_body: int = MAX_UPSTREAM_BODY,
) -> AsyncIterator[str]:
    """Record a live server while the block runs: yields the proxy's URL, writes the cassette `out` on exit.

    `upstream` is a Streamable HTTP URL; `command` instead runs a stdio server (one process per
    session, at most `max_processes` at once). `headers` are sent to the upstream on every request
    (their values are redacted);
    `redact` are regular expressions whose matches in bodies become `<redacted:N>` placeholders;
    `scrub` is called with each JSON-RPC message before it is written and returns the message to write.
    A `command` that exits, or does not answer `initialize` within `start_timeout_s`, raises `UpstreamError` (its
    message ends with the line of its stderr that says why) before anything is served or written; the command's
    stderr is kept off the terminal unless `upstream_stderr` (e.g. `sys.stderr`) is given to pass it through.
    `max_upstream_head`, `max_upstream_headers` and `max_upstream_body` bound what the server sends, as the chaos
    proxy's do: an answer past one gets the client a 502 naming it.
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
        start_timeout_s=start_timeout_s,
        upstream_stderr=upstream_stderr,
        max_upstream_head=max_upstream_head,
        max_upstream_headers=max_upstream_headers,
        max_upstream_body=max_upstream_body,
    )
    await anyio.to_thread.run_sync(recording.start)
    try:
        yield recording.url
    finally:
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(recording.stop)
