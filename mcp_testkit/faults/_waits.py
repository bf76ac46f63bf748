"""The faults of waits and sizes (`faults.NeverAnswer`, `Dribble`, `ProgressOnly`, `HugeResult`, `StopReading`).

`mcp_testkit.faults` re-exports them and is the module to import; what they do lives in `server/_effects/_waits.py`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from mcp_testkit.faults._base import Fault, _positive, _rate

__all__ = ["Dribble", "HugeResult", "NeverAnswer", "ProgressOnly", "StopReading"]


@dataclass(frozen=True)
class NeverAnswer(Fault):
    """Send the answer's headers (200, JSON or SSE as the server answers), then nothing: no body, no end.

    The request does not run. The connection stays open until the client gives up (or the server stops):
    a client without a timeout waits for good. Over stdio nothing is written for the request.
    """


@dataclass(frozen=True)
class Dribble(Fault):
    """Run the request, then send its answer (a JSON body, an SSE event or a stdio line) in small writes at
    `bytes_per_s`: every byte arrives, too slowly for a client that bounds the whole call.

    Over stdio other answers may be written between the pieces; use it there with one call in flight.
    """

    bytes_per_s: float = 64.0
    answers_in_the_end: ClassVar[bool] = True

    def __post_init__(self) -> None:
        _rate(self.bytes_per_s, "Dribble bytes_per_s")


@dataclass(frozen=True)
class ProgressOnly(Fault):
    """Send `notifications/progress` for the call every `interval_s`, and never its answer; the call does not run.

    The progress carries the request's `progressToken` (a request without one gets an SSE stream that stays
    open with nothing on it). Over HTTP the answer goes as SSE; over stdio the notifications are lines.
    The notifications go on until the client leaves: a client that lets progress extend its wait without
    a maximum waits for good.
    """

    interval_s: float = 0.5
    default_method: ClassVar[str] = "tools/call"
    extends_waits: ClassVar[bool] = True

    def __post_init__(self) -> None:
        _positive(self.interval_s, "ProgressOnly interval_s")
        if not self.interval_s > 0:
            raise ValueError("ProgressOnly interval_s must be > 0 seconds")


_HUGE_MAX = 64 * 1024 * 1024
"""The largest `HugeResult` size: 64 MiB."""


@dataclass(frozen=True)
class HugeResult(Fault):
    """Run the call, then answer it with one text block of `size` bytes (at most 64 MiB), written in pieces.

    The server never builds the answer whole: it writes the JSON around the text and the text in chunks
    (a JSON body with its Content-Length, one SSE event, or one stdio line). Note that the SDK client
    refuses an SSE event over 1 MiB, so answer as JSON to test a bridge's own limit. `sse` chooses the framing:
    True SSE, False JSON, None as the server answers (its `response_mode`).
    """

    size: int = 2 * 1024 * 1024
    sse: bool | None = None
    default_method: ClassVar[str] = "tools/call"

    def __post_init__(self) -> None:
        if not isinstance(self.size, int) or isinstance(self.size, bool) or not 0 <= self.size <= _HUGE_MAX:
            raise ValueError(
                f"HugeResult size must be an int of bytes from 0 to {_HUGE_MAX} (64 MiB), not {self.size!r}"
            )
        if self.sse not in (None, True, False):
            raise ValueError(f"HugeResult sse must be True (SSE), False (JSON) or None (the server's) not {self.sse!r}")


@dataclass(frozen=True)
class StopReading(Fault):
    """Over stdio: stop reading input at this request, and never answer it; later lines stay unread.

    Once the pipe's buffer is full a client's writes block, so only a client that bounds its writes too
    gets out. The process ends on a signal (or when its stdin is closed and the client kills it).
    """

    stdio_only: ClassVar[bool] = True
