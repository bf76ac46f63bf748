"""The faults of the connection and its stream (`faults.Drop`, `TruncateBody`, `EndStream`, `MalformedSse`,
`BreakStream`) and of the stdio process (`MalformedLine`, `Exit`, `Crash`): the answer cut, garbled or never sent.

`mcp_testkit.faults` re-exports them and is the module to import; what they do lives in
`server/_effects/_connection.py`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from mcp_testkit._renamed import milliseconds, renamed_keywords
from mcp_testkit._wire.eras import HANDSHAKE
from mcp_testkit.faults._base import Fault

__all__ = ["BreakStream", "Crash", "Drop", "EndStream", "Exit", "MalformedLine", "MalformedSse", "TruncateBody"]


@dataclass(frozen=True)
class Drop(Fault):
    """Close the connection without answering; with `after_execution` the request runs first."""

    after_execution: bool = False


@dataclass(frozen=True)
class TruncateBody(Fault):
    """Run the request, then send only the first half of the JSON answer."""

    transient: ClassVar[bool] = False


@dataclass(frozen=True)
class EndStream(Fault):
    """Run the request, then end its SSE stream before the response event."""


@dataclass(frozen=True)
class MalformedSse(Fault):
    """Run the request, then send an SSE event whose data is not JSON, and end the stream."""

    transient: ClassVar[bool] = False


@dataclass(frozen=True)
class BreakStream(Fault):
    """Answer as SSE and close the connection after `after_events` events without ending the stream.

    The request runs to its end; the events the client did not get (its answer among them) are kept,
    and a GET with `Last-Event-ID` naming the last event it got replays them (resumption). `retry_s`,
    when set, is sent as `retry:` (in whole milliseconds) just before the break. With `after_events=0` the
    client gets no event id, so it cannot resume. On a server built with `resumable=True` the first event is
    the priming one. Handshake era only: the stateless era (2026-07-28) has no event ids.
    """

    after_events: int = 1
    retry_s: float | None = None
    eras: ClassVar[tuple[str, ...]] = (HANDSHAKE,)
    default_method: ClassVar[str] = "tools/call"

    def __post_init__(self) -> None:
        if not isinstance(self.after_events, int) or isinstance(self.after_events, bool) or self.after_events < 0:
            raise ValueError(f"BreakStream after_events must be an int >= 0, not {self.after_events!r}")
        retry_s = self.retry_s
        if retry_s is not None and (not isinstance(retry_s, (int, float)) or isinstance(retry_s, bool) or retry_s < 0):
            raise ValueError(f"BreakStream retry_s must be a number of seconds >= 0 or None, not {retry_s!r}")


BreakStream.__init__ = renamed_keywords(retry_ms=("retry_s", milliseconds))(BreakStream.__init__)  # type: ignore[method-assign]


@dataclass(frozen=True)
class _StdioFault(Fault):
    stdio_only: ClassVar[bool] = True


@dataclass(frozen=True)
class MalformedLine(_StdioFault):
    """Over stdio: run the request, then write a line that is not JSON instead of its answer.

    Over HTTP it means nothing and the request is answered normally; `mcp-testkit serve` refuses it there.
    """


@dataclass(frozen=True)
class Exit(_StdioFault):
    """Over stdio: end the process with status `code` instead of answering, the journal flushed.

    With `after_execution` the request runs first (it ran, the client never hears).
    """

    code: int = 1
    after_execution: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.code, int) or isinstance(self.code, bool) or not 0 <= self.code <= 255:
            raise ValueError(f"Exit code must be an int between 0 and 255, not {self.code!r}")


@dataclass(frozen=True)
class Crash(_StdioFault):
    """Over stdio: die at once by SIGKILL instead of answering, as a crashed server does.

    With `after_execution` the request runs first. The journal line of this request is written before dying.
    """

    after_execution: bool = False
