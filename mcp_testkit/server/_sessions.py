"""The session table: ids issued by `initialize`, which are alive, and losing or restarting them."""

from __future__ import annotations

import secrets
import threading
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.from_thread
import anyio.lowlevel

__all__ = ["Outbox", "Session", "SessionTable"]


class Outbox:
    """Messages for a session's GET stream; `put` may be called from any thread."""

    def __init__(self) -> None:
        # Bounded: with no stream to carry them, old notifications give way to new ones.
        self.queue: deque[dict[str, Any] | None] = deque(maxlen=256)
        self._event: anyio.Event | None = None
        self._thread: int | None = None
        self._token: Any = None
        self.streaming = False
        """Whether a GET stream is open to carry these messages."""

    def put(self, message: dict[str, Any] | None) -> None:
        """Queue a message (None closes the stream) and wake the stream that waits for it."""
        self.queue.append(message)
        event = self._event
        if event is None:
            return
        if threading.get_ident() == self._thread:
            event.set()
            return
        try:
            anyio.from_thread.run_sync(event.set, token=self._token)
        except RuntimeError:  # the loop that waits is gone; the message stays queued
            pass

    async def put_async(self, message: dict[str, Any]) -> None:
        """Queue a notification for the GET stream, if one is open; otherwise it is not sent."""
        if self.streaming:
            self.put(message)

    async def wait(self) -> None:
        """Return once a message is queued."""
        if self.queue:
            return
        self._thread = threading.get_ident()
        self._token = anyio.lowlevel.current_token()
        self._event = anyio.Event()
        try:
            if not self.queue:
                await self._event.wait()
        finally:
            self._event = None


@dataclass(eq=False)
class Session:
    """One session issued by `initialize`."""

    id: str
    protocol_version: str
    client_info: dict[str, Any] | None = None
    alive: bool = True
    opened_at: float = field(default_factory=time.time)
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

    def __repr__(self) -> str:
        state = "alive" if self.alive else "ended"
        return f"<Session {self.id[:8]} {self.protocol_version} {state} requests={self.requests}>"


class SessionTable:
    """Every session issued, alive or not, in issue order."""

    def __init__(self) -> None:
        self._sessions: dict[str, Session] = {}
        self.unknown_status = 404
        """What an unknown or ended session id is answered with: 404 (the spec) or 400 (old SDK servers)."""

    def open(self, protocol_version: str, client_info: dict[str, Any] | None = None) -> Session:
        session = Session(secrets.token_hex(16), protocol_version, client_info)
        self._sessions[session.id] = session
        return session

    def get(self, session_id: str) -> Session | None:
        """The live session with that id, or None."""
        session = self._sessions.get(session_id)
        return session if session is not None and session.alive else None

    def end(self, session_id: str) -> bool:
        session = self._sessions.get(session_id)
        if session is None or not session.alive:
            return False
        session.alive = False
        return True

    def end_all(self) -> None:
        for session in self._sessions.values():
            session.alive = False

    def __iter__(self) -> Iterator[Session]:
        return iter(list(self._sessions.values()))

    def __len__(self) -> int:
        return len(self._sessions)

    @property
    def alive(self) -> list[Session]:
        return [s for s in self._sessions.values() if s.alive]

    def __repr__(self) -> str:
        return f"<SessionTable {len(self.alive)} alive of {len(self._sessions)}>"
