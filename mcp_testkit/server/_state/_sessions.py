"""The session table: ids issued by `initialize`, which are alive, and losing or restarting them."""

from __future__ import annotations

import contextlib
import secrets
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio
import sniffio

from mcp_testkit._renamed import renamed_attribute, renamed_keywords

if TYPE_CHECKING:
    from mcp_testkit.server._state._events import EventLog

__all__ = ["SESSION_NOT_FOUND", "Outbox", "Session", "SessionTable"]

SESSION_NOT_FOUND = "Session not found: it has ended; re-initialize (send initialize without Mcp-Session-Id)"
"""The 404 message: it starts as the SDK's own does, then says what a client should do."""


def _waker(event: anyio.Event) -> Callable[[], None]:
    """A function that sets `event` from any thread without waiting for its event loop.

    Scripting runs on the test's thread, sometimes under the server's lock, while the loop may be
    busy or even blocked on that very lock: a wake-up that waited for the loop could deadlock.
    """
    if sniffio.current_async_library() == "trio":
        import trio

        token = trio.lowlevel.current_trio_token()

        def wake_trio() -> None:
            with contextlib.suppress(trio.RunFinishedError):
                token.run_sync_soon(event.set)

        return wake_trio
    import asyncio

    loop = asyncio.get_running_loop()

    def wake() -> None:
        with contextlib.suppress(RuntimeError):  # the loop is closed: the message stays queued
            loop.call_soon_threadsafe(event.set)

    return wake


class Outbox:
    """Messages for a session's GET stream; `put` may be called from any thread and never blocks."""

    def __init__(self) -> None:
        # Bounded: with no stream to carry them, old notifications give way to new ones.
        self.queue: deque[dict[str, Any] | None] = deque(maxlen=256)
        self._event: anyio.Event | None = None
        self._thread: int | None = None
        self._wake: Callable[[], None] | None = None
        self.streaming = False
        """Whether a GET stream is open to carry these messages."""

    def put(self, message: dict[str, Any] | None) -> None:
        """Queue a message (None closes the stream) and wake the stream that waits for it, without waiting."""
        self.queue.append(message)
        event, wake = self._event, self._wake
        if event is None or wake is None:
            return
        if threading.get_ident() == self._thread:
            event.set()
        else:
            wake()

    async def put_async(self, message: dict[str, Any]) -> None:
        """Queue a notification for the GET stream, if one is open; otherwise it is not sent."""
        if self.streaming:
            self.put(message)

    async def wait(self) -> None:
        """Return once a message is queued."""
        if self.queue:
            return
        event = anyio.Event()
        self._thread = threading.get_ident()
        self._wake = _waker(event)
        self._event = event
        try:
            if not self.queue:  # a put() between the first check and here found no event to set
                await event.wait()
        finally:
            self._event = None
            self._wake = None


@dataclass(eq=False)
class Session:
    """One session issued by `initialize`."""

    id: str
    protocol_version: str
    client_info: dict[str, Any] | None = None
    alive: bool = True
    opened_at: float = field(default_factory=time.time)
    last_seen: float = field(default_factory=time.monotonic, repr=False)
    """When a request last named this session (monotonic clock); idle eviction goes by it."""
    requests: int = 0
    """Requests seen on this session after `initialize`."""
    expires_after: int | None = None
    """When set, the session ends once it has seen this many requests."""
    initialized: bool = False
    """Whether the client sent `notifications/initialized`."""
    log_level: str | None = None
    inflight: dict[Any, Any] = field(default_factory=dict, repr=False)
    """Cancel scopes of the calls running on this session, by JSON-RPC id."""
    outbox: Outbox = field(default_factory=lambda: Outbox(), repr=False)
    """Server notifications waiting for a stream to carry them."""
    events: EventLog | None = field(default=None, repr=False)
    """The events of its resumable SSE streams, for a GET with `Last-Event-ID` to replay (made at the first)."""
    client_capabilities: dict[str, Any] = field(default_factory=dict, repr=False)
    """What the client declared in `initialize`: which input requests (elicitation, sampling, roots) it answers."""
    in_flight: dict[Any, int] = field(default_factory=dict, repr=False)
    """The ids of the client's requests this session is answering now, each with how many carry it (the referee's
    `id-in-flight`)."""
    waiting: dict[Any, Any] = field(default_factory=dict, repr=False)
    """Server-to-client input requests waiting for the client's response, by JSON-RPC id (`_dispatch/_input.py`)."""
    subscriptions: set[str] = field(default_factory=set, repr=False)
    """The resource URIs it subscribed to (`resources/subscribe`), told of each `update_resource`."""
    tool_state: dict[str, Any] = field(default_factory=dict, repr=False)
    """What tool handlers keep in this session (`ToolContext.session_state`): gone with the session."""

    def __repr__(self) -> str:
        state = "alive" if self.alive else "ended"
        return f"<Session {self.id[:8]} {self.protocol_version} {state} requests={self.requests}>"


class SessionTable:
    """Every session issued, alive or not, in issue order; safe to use from any thread.

    By default it keeps every session, so a test can inspect them all. For long runs, `limit`
    caps how many it keeps (ended sessions are forgotten first, then the least recently used
    live ones are ended and forgotten) and `idle_timeout_s` ends and forgets live sessions no
    request named for that many seconds (a session with an open GET stream is never idle).
    Both act when a session is opened. A forgotten id is answered like any unknown one.
    """

    idle_timeout = renamed_attribute("idle_timeout", "idle_timeout_s")

    @renamed_keywords(idle_timeout="idle_timeout_s")
    def __init__(self, *, limit: int | None = None, idle_timeout_s: float | None = None) -> None:
        if limit is not None and (not isinstance(limit, int) or limit < 1):
            raise ValueError(f"session_limit must be a positive int or None (keep every session), not {limit!r}")
        if idle_timeout_s is not None and idle_timeout_s < 0:
            raise ValueError(f"session_idle_timeout_s must be >= 0 seconds or None, not {idle_timeout_s!r}")
        self._sessions: dict[str, Session] = {}
        self._lock = threading.Lock()
        self.limit = limit
        self.idle_timeout_s = idle_timeout_s
        self.unknown_status = 404
        """What an unknown or ended session id is answered with: 404 (the spec) or 400 (old SDK servers)."""

    def open(self, protocol_version: str, client_info: dict[str, Any] | None = None) -> Session:
        session = Session(secrets.token_hex(16), protocol_version, client_info)
        with self._lock:
            evicted = self._evict()
            self._sessions[session.id] = session
        for old in evicted:
            old.outbox.put(None)
        return session

    def _evict(self) -> list[Session]:
        """Forget idle and surplus sessions (under the lock); the live ones ended here, whose streams must close."""
        ended: list[Session] = []
        if self.idle_timeout_s is not None:
            oldest = time.monotonic() - self.idle_timeout_s
            for session in list(self._sessions.values()):
                if not session.outbox.streaming and session.last_seen <= oldest:
                    if session.alive:
                        session.alive = False
                        ended.append(session)
                    del self._sessions[session.id]
        if self.limit is not None and len(self._sessions) >= self.limit:
            surplus = len(self._sessions) - self.limit + 1
            gone = [s for s in self._sessions.values() if not s.alive][:surplus]
            if len(gone) < surplus:
                live = sorted((s for s in self._sessions.values() if s.alive), key=lambda s: s.last_seen)
                gone += live[: surplus - len(gone)]
            for session in gone:
                if session.alive:
                    session.alive = False
                    ended.append(session)
                del self._sessions[session.id]
        return ended

    def get(self, session_id: str) -> Session | None:
        """The live session with that id, or None; marks it as just used."""
        session = self._sessions.get(session_id)
        if session is None or not session.alive:
            return None
        session.last_seen = time.monotonic()
        return session

    def end(self, session_id: str) -> bool:
        with self._lock:
            session = self._sessions.get(session_id)
            if session is None or not session.alive:
                return False
            session.alive = False
            return True

    def end_all(self) -> None:
        with self._lock:
            for session in self._sessions.values():
                session.alive = False

    def __iter__(self) -> Iterator[Session]:
        with self._lock:
            return iter(list(self._sessions.values()))

    def __len__(self) -> int:
        return len(self._sessions)

    @property
    def alive(self) -> list[Session]:
        with self._lock:
            return [s for s in self._sessions.values() if s.alive]

    def __repr__(self) -> str:
        return f"<SessionTable {len(self.alive)} alive of {len(self._sessions)}>"
