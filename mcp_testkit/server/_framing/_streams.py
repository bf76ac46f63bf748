"""An SSE event as the fake frames it, and the plan of one POST's SSE stream: its events kept for replay, a priming
event first, a scripted break (handshake era; the events kept are the session's `_state/_events.py`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mcp_testkit.server._state._events import EventLog, ResumableStream, StoredEvent

__all__ = ["StreamPlan", "sse_frame"]


def sse_frame(event_id: int | None, data: bytes, retry_ms: int | None = None) -> bytes:
    """One SSE event: a `message` carrying `data`, or with no data a priming event (an id and an empty `data`)."""
    if retry_ms is None and data:  # every answer and notification: the hot path, one formatting
        if event_id is None:
            return b"event: message\ndata: %s\n\n" % data
        return b"event: message\nid: %d\ndata: %s\n\n" % (event_id, data)
    head = b"" if not data else b"event: message\n"
    if event_id is not None:
        head += b"id: %d\n" % event_id
    if retry_ms is not None:
        head += b"retry: %d\n" % retry_ms
    return head + b"data: %s\n\n" % data


@dataclass(eq=False)
class StreamPlan:
    """What happens to one POST's SSE stream: its events kept for replay, a priming event first, a break.

    `break_after` events are sent, then `retry: break_retry_ms` (if set), then the connection's response
    ends without ending the stream: the rest of its events are only kept, for a GET with `Last-Event-ID`.
    """

    next_id: Callable[[], int]
    log: EventLog | None = None
    stream: ResumableStream | None = None
    prime: bool = False
    retry_ms: int | None = None
    """The `retry:` of the priming event."""
    break_after: int | None = None
    break_retry_ms: int | None = None
    sent: int = 0
    broken: bool = False

    def keep(self, event: StoredEvent) -> None:
        if self.log is not None and self.stream is not None:
            self.log.add(self.stream, event)
