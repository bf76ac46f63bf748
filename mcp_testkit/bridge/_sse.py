"""A push decoder for ``text/event-stream`` bodies, fed chunk by chunk so the caller owns the iteration."""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass, field

__all__ = ["SseDecoder", "SseEvent"]

_LINE_BREAK = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True)
class SseEvent:
    """One dispatched event: its type (``message`` by default) and its data lines joined by newlines."""

    event: str
    data: str


@dataclass
class SseDecoder:
    """Turns body bytes into events; a decoder, not a generator, so no iterator is left open on return."""

    _text: codecs.IncrementalDecoder = field(
        default_factory=lambda: codecs.getincrementaldecoder("utf-8-sig")(errors="replace")
    )
    _pending: str = ""
    _event: str = ""
    _data: list[str] = field(default_factory=list)

    def feed(self, chunk: bytes) -> list[SseEvent]:
        """The events completed by ``chunk``."""
        text = self._pending + self._text.decode(chunk)
        # A '\r' at the very end may be the first half of '\r\n': hold it back with its line.
        held = "\r" if text.endswith("\r") else ""
        lines = _LINE_BREAK.split(text[: len(text) - len(held)])
        self._pending = lines.pop() + held
        events = []
        for line in lines:
            event = self._line(line)
            if event is not None:
                events.append(event)
        return events

    def _line(self, line: str) -> SseEvent | None:
        if not line:
            if not self._data:
                self._event = ""
                return None
            event = SseEvent(self._event or "message", "\n".join(self._data))
            self._event, self._data = "", []
            return event
        if line.startswith(":"):
            return None
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "event":
            self._event = value
        elif name == "data":
            self._data.append(value)
        return None
