"""The events a session keeps of its resumable SSE streams (handshake era), so that a GET with `Last-Event-ID`
replays what came after that event on the stream it belongs to, then follows the stream to its end.

Event ids are numbers unique across the server, so an id names one event of one stream. A session
keeps at most `MAX_BYTES` of events; finished streams are forgotten oldest first. The plan of one stream
and its frames are the framing's (`server/_framing/_streams.py`); the replaying GET is the era's (`_handshake.py`).
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field

import anyio

__all__ = ["MAX_BYTES", "EventLog", "ResumableStream", "StoredEvent"]

MAX_BYTES = 1024 * 1024
"""How many bytes of events one session keeps for replay (1 MiB)."""


@dataclass(frozen=True)
class StoredEvent:
    """One event as it was framed for the wire; `answer` holds the JSON-RPC response it carries, if it does."""

    event_id: int
    frame: bytes
    answer: bytes | None = None


@dataclass(eq=False)
class ResumableStream:
    """The events of one POST's SSE stream, and whether the stream has ended (its answer sent, or given up)."""

    request_seq: int
    """The journal number of the request whose stream this is."""
    events: list[StoredEvent] = field(default_factory=list)
    done: bool = False
    size: int = 0
    """The bytes of its events."""
    _changed: anyio.Event | None = field(default=None, repr=False)

    def add(self, event: StoredEvent) -> None:
        self.events.append(event)
        self.size += len(event.frame)
        self._wake()

    def finish(self) -> None:
        if not self.done:
            self.done = True
            self._wake()

    def after(self, event_id: int) -> list[StoredEvent]:
        """The events sent after `event_id`, in order."""
        return [event for event in self.events if event.event_id > event_id]

    async def changed(self) -> None:
        """Return at the next event or at the end of the stream."""
        if self._changed is None:
            self._changed = anyio.Event()
        await self._changed.wait()

    def _wake(self) -> None:
        changed, self._changed = self._changed, None
        if changed is not None:
            changed.set()


class EventLog:
    """A session's resumable streams, by the ids of their events; used on the server's event loop only."""

    def __init__(self, max_bytes: int = MAX_BYTES) -> None:
        self._streams: OrderedDict[int, ResumableStream] = OrderedDict()
        self._max_bytes = max_bytes
        self._bytes = 0

    def open(self, request_seq: int) -> ResumableStream:
        """A new stream to keep, for the request numbered `request_seq`."""
        stream = ResumableStream(request_seq)
        self._streams[request_seq] = stream
        return stream

    def add(self, stream: ResumableStream, event: StoredEvent) -> None:
        """Keep an event of `stream`; over the limit, forget finished streams, oldest first."""
        stream.add(event)
        self._bytes += len(event.frame)
        if self._bytes > self._max_bytes:
            self._trim()

    def find(self, last_event_id: str) -> tuple[ResumableStream, int] | None:
        """The stream an event id names and the id as a number; None for an id of no kept stream."""
        try:
            event_id = int(last_event_id.strip())
        except ValueError:
            return None
        for stream in self._streams.values():
            if any(event.event_id == event_id for event in stream.events):
                return stream, event_id
        return None

    def _trim(self) -> None:
        for seq, stream in list(self._streams.items()):
            if self._bytes <= self._max_bytes:
                break
            if stream.done:
                self._bytes -= stream.size
                del self._streams[seq]
