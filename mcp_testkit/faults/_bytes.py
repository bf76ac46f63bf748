"""The faults at the level of bytes (`faults.Latency`, `Bandwidth`, `Slice`, `LimitData`, `ResetPeer`, `SlowClose`,
`StdoutNoise`): what a slow, lossy or chatty link does to an answer's bytes, whatever the answer says.

`mcp_testkit.faults` re-exports them and is the module to import. What they do lives in
`server/_effects/_bytes.py`, as a wrapper of the answer's writer (the ASGI `send` over HTTP, the line writer over
stdio). The random ones draw from `seed` and the request's journal number, so a run with the same seed and the
same requests draws the same delays and split points; with `seed=None` a seed is drawn and the journal says which.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from mcp_testkit.faults._base import Fault, _positive, _rate

__all__ = ["Bandwidth", "Latency", "LimitData", "ResetPeer", "Slice", "SlowClose", "StdoutNoise"]

DISTRIBUTIONS = ("uniform", "normal", "exponential")
"""How a `Latency` draws its delays."""


def _seed(value: object, what: str) -> None:
    if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
        raise ValueError(f"{what} seed must be an int or None (a seed is drawn), not {value!r}")


@dataclass(frozen=True)
class Latency(Fault):
    """Hold the answer's first byte (and each later event of an SSE stream) for a delay drawn around `mean_s`.

    `distribution` "uniform" draws from `mean_s ± jitter_s`, "normal" from a normal law of deviation `jitter_s`
    (never below 0), "exponential" from an exponential law of mean `mean_s` (no `jitter_s`). The request runs at
    once; only its answer is late. The journal notes the delays drawn.
    """

    mean_s: float = 0.1
    jitter_s: float = 0.0
    distribution: str = "uniform"
    seed: int | None = None
    answers_in_the_end: ClassVar[bool] = True

    def __post_init__(self) -> None:
        _positive(self.mean_s, "Latency mean_s")
        _positive(self.jitter_s, "Latency jitter_s")
        if self.distribution not in DISTRIBUTIONS:
            known = ", ".join(DISTRIBUTIONS)
            raise ValueError(f"Latency distribution must be one of {known}, not {self.distribution!r}")
        if self.distribution == "exponential" and self.jitter_s:
            raise ValueError("Latency jitter_s has no meaning for the exponential distribution: leave it 0")
        _seed(self.seed, "Latency")


@dataclass(frozen=True)
class Bandwidth(Fault):
    """Pace every write of the answer (its JSON body, each SSE event, its stdio line) at `bytes_per_s`.

    Every byte arrives, in small writes. Unlike `Dribble`, which reshapes only the answer, it paces whatever the
    request's connection carries (the events of an SSE stream before the answer, too).
    """

    bytes_per_s: float = 1024.0
    answers_in_the_end: ClassVar[bool] = True

    def __post_init__(self) -> None:
        _rate(self.bytes_per_s, "Bandwidth bytes_per_s")


@dataclass(frozen=True)
class Slice(Fault):
    """Split each write of the answer (a JSON body, an SSE event, a stdio line) into up to `pieces` writes at random
    points, `gap_s` apart: a client must join what it reads, wherever a write ends.

    Over HTTP an SSE answer is sent chunked, so each piece is one HTTP chunk a client can see. The split points
    are drawn from `seed` and the request's journal number; the journal notes the sizes written.
    """

    seed: int | None = None
    pieces: int = 4
    gap_s: float = 0.01
    answers_in_the_end: ClassVar[bool] = True

    def __post_init__(self) -> None:
        _seed(self.seed, "Slice")
        if not isinstance(self.pieces, int) or isinstance(self.pieces, bool) or self.pieces < 2:
            raise ValueError(f"Slice pieces must be an int >= 2, not {self.pieces!r}")
        _positive(self.gap_s, "Slice gap_s")


@dataclass(frozen=True)
class LimitData(Fault):
    """Run the request, send the first `bytes` bytes of its answer's body, then close the connection.

    Over HTTP the connection is closed cleanly (FIN) once those bytes are out: a JSON body falls short of its
    Content-Length, an SSE stream stops mid-event. An answer shorter than `bytes` arrives whole, then the
    connection closes. Over stdio the server writes that many bytes of the answer's line and exits (status 1).
    """

    bytes: int = 0

    def __post_init__(self) -> None:
        if not isinstance(self.bytes, int) or isinstance(self.bytes, bool) or self.bytes < 0:
            raise ValueError(f"LimitData bytes must be an int >= 0, not {self.bytes!r}")


@dataclass(frozen=True)
class ResetPeer(Fault):
    """Reset the TCP connection (RST, by `SO_LINGER` 0) instead of answering; with `after_execution` (the default)
    the request runs first, else it never runs.

    HTTP only: a pipe has no reset (`mcp-testkit serve --stdio` refuses it; use `Crash` there). In-process (ASGI)
    there is no socket: the client gets httpx2's `ReadError` for a reset connection.
    """

    after_execution: bool = True


@dataclass(frozen=True)
class SlowClose(Fault):
    """Send the whole answer with `Connection: close`, then hold the end of the response for `delay_s`.

    An SSE stream's end comes `delay_s` after its last event; a JSON body is complete by its Content-Length, and
    only a client that reads until the connection closes waits. HTTP only.
    """

    delay_s: float = 1.0
    answers_in_the_end: ClassVar[bool] = True

    def __post_init__(self) -> None:
        _positive(self.delay_s, "SlowClose delay_s")


@dataclass(frozen=True)
class StdoutNoise(Fault):
    """Over stdio: write `lines` (log lines that are not JSON-RPC) on stdout before the answer's line.

    A server that logs to stdout by mistake: a client must skip what is not JSON, or fail loudly. Over HTTP it
    means nothing; `mcp-testkit serve` refuses it there.
    """

    lines: tuple[str, ...] = ("INFO server ready", "DEBUG handling request")
    stdio_only: ClassVar[bool] = True

    def __post_init__(self) -> None:
        if isinstance(self.lines, str) or not all(isinstance(line, str) for line in self.lines):
            raise ValueError(f"StdoutNoise lines must be a list of strings, not {self.lines!r}")
        if any("\n" in line or "\r" in line for line in self.lines):
            raise ValueError("StdoutNoise lines must not hold line breaks: each is written as one line")
        object.__setattr__(self, "lines", tuple(self.lines))
