"""A push decoder for ``text/event-stream`` bodies, fed chunk by chunk so the caller owns the iteration.

Shared by the reference bridge and the cassettes' recording proxy, which can both be pointed at any
server: an event is bounded (`max_event_chars`), so a server that sends an event without end costs a
clear `SseEventTooLarge`, not all the memory there is.
"""

from __future__ import annotations

import codecs
import json
import re
from dataclasses import dataclass, field
from typing import Any

__all__ = ["MAX_EVENT_CHARS", "SseDecoder", "SseEvent", "SseEventTooLarge", "json_message"]

_LINE_BREAK = re.compile(r"\r\n|\r|\n")

MAX_EVENT_CHARS = 64 * 1024 * 1024
"""The default bound on one event (its data lines and any unfinished line): 64 Mi characters."""


class SseEventTooLarge(ValueError):
    """An SSE event grew past the decoder's bound before it ended."""

    def __init__(self, limit: int) -> None:
        super().__init__(
            f"an SSE event passed {limit} characters without ending (max_event_chars); "
            "the server sends an event without end, or one larger than this client accepts"
        )
        self.limit = limit


@dataclass(frozen=True)
class SseEvent:
    """One dispatched event: its type (``message`` by default) and its data lines joined by newlines."""

    event: str
    data: str


@dataclass
class SseDecoder:
    """Turns body bytes into events; a decoder, not a generator, so no iterator is left open on return.

    It also keeps what a client needs to resume a broken stream: the last event id and the `retry:`
    reconnection time in milliseconds (both carried over when a stream is resumed on a new response).
    """

    last_event_id: str = ""
    retry_ms: int | None = None
    max_event_chars: int | None = None
    """The bound on one event; None: `MAX_EVENT_CHARS` as the module has it when the decoder is fed."""
    _text: codecs.IncrementalDecoder = field(
        default_factory=lambda: codecs.getincrementaldecoder("utf-8-sig")(errors="replace")
    )
    _pending: list[str] = field(default_factory=list)
    """The unfinished line, in the pieces it arrived in: joined only once a line break comes, so that a long line
    (a 1 MiB JSON answer arrives in dozens of chunks) is not searched again at every chunk."""
    _pending_chars: int = 0
    _event: str = ""
    _id: str | None = None
    _data: list[str] = field(default_factory=list)
    _size: int = 0

    def resumed(self) -> SseDecoder:
        """A decoder for the stream's next response, carrying its last event id and reconnection time."""
        return SseDecoder(self.last_event_id, self.retry_ms, self.max_event_chars)

    def feed(self, chunk: bytes) -> list[SseEvent]:
        """The events completed by ``chunk``; `SseEventTooLarge` once an event passes `max_event_chars`."""
        new = self._text.decode(chunk)
        pending = self._pending
        if "\n" not in new and "\r" not in new and not (pending and pending[-1].endswith("\r")):
            if new:
                pending.append(new)
                self._pending_chars += len(new)
            if self._size + self._pending_chars > self._limit():
                raise SseEventTooLarge(self._limit())
            return []  # no line ends here
        text = "".join(pending) + new
        # A '\r' at the very end may be the first half of '\r\n': hold it back with its line.
        held = "\r" if text.endswith("\r") else ""
        lines = _LINE_BREAK.split(text[: len(text) - len(held)])
        rest = lines.pop() + held
        self._pending = [rest] if rest else []
        self._pending_chars = len(rest)
        events = []
        for line in lines:
            event = self._line(line)
            if event is not None:
                events.append(event)
        if self._size + self._pending_chars > self._limit():
            raise SseEventTooLarge(self._limit())
        return events

    def _limit(self) -> int:
        return MAX_EVENT_CHARS if self.max_event_chars is None else self.max_event_chars

    def _line(self, line: str) -> SseEvent | None:
        if not line:
            if self._id is not None:  # the last event id is set at each dispatch, with data or without
                self.last_event_id, self._id = self._id, None
            if not self._data:
                self._event, self._size = "", 0
                return None
            event = SseEvent(self._event or "message", "\n".join(self._data))
            self._event, self._data, self._size = "", [], 0
            return event
        if line.startswith(":"):
            return None
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "event":
            self._event = value
        elif name == "data":
            self._size += len(value) + 1
            if self._size > self._limit():
                raise SseEventTooLarge(self._limit())
            self._data.append(value)
        elif name == "id" and "\0" not in value:
            self._id = value
        elif name == "retry" and value.isascii() and value.isdigit():
            self.retry_ms = int(value)
        return None


def json_message(data: str) -> dict[str, Any] | None:
    """An event's data as a JSON object (a JSON-RPC message), or None for empty data, data that is not JSON or
    JSON that is not an object: what a client reading a server's stream skips."""
    if not data:
        return None
    try:
        message = json.loads(data)
    except ValueError:
        return None
    return message if isinstance(message, dict) else None
