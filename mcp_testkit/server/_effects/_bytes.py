"""Faults at the level of bytes: late, paced, sliced, cut, reset or slowly closed answers, and noise on stdout.

Each is a wrapper of the answer's writer, not a way of answering: over HTTP `wrap_send` wraps the response's ASGI
`send` (its head and every body write pass through it, whatever era or framing produced them), over stdio
`stream_line` writes the answer's line in the same pieces. Anything else that writes answers (a proxy) gets the
same bytes by wrapping its own `send` with `effect_of(fault).wrap_send(send, wire)`.
"""

from __future__ import annotations

import itertools
import random
from typing import TYPE_CHECKING, Any

import anyio

from mcp_testkit import faults
from mcp_testkit.server._effects._base import Effect, HttpTurn, LineTurn, Wire, handles

if TYPE_CHECKING:
    from mcp_testkit._wire.asgi import Message, Send
    from mcp_testkit.journal import Record
    from mcp_testkit.server._state import ServerState
    from mcp_testkit.server._state._sessions import Session

_STEP_S = 0.05
"""How often a `Bandwidth` writes."""
_CLOSE = (b"connection", b"close")
_LIMIT_EXIT = 1
"""The exit status of a `serve --stdio` process that a `LimitData` cut."""


def _draws(seed: int | None, record: Record) -> tuple[random.Random, str]:
    """The random draws of one answer: from the fault's seed (or one drawn now) and the request's journal number."""
    drawn = seed is None
    if seed is None:
        seed = random.SystemRandom().randrange(2**32)
    return random.Random(f"{seed}/{record.seq}"), f"seed {seed}{' (drawn)' if drawn else ''}"


class _Shaped(Effect[Any]):
    """A fault that reshapes the writes of an answer; each subclass says how one write becomes pieces."""

    stdio = True
    cut = False
    """True once the fault ended the connection: nothing more is sent."""

    def begin(self, record: Record) -> None:
        """Prepare for the answer of `record` (its draws are seeded by its journal number)."""
        self.record = record
        self.prior: str | None = None

    def mark(self, record: Record) -> str:
        """Note in the record what the fault did, after what the record said before it began (a refusal's reason)."""
        if self.prior is None:
            self.prior = record.error or ""
        note = self.note()
        record.error = f"{self.prior}; {note}" if self.prior else note
        return record.error

    def head_wait_s(self) -> float:
        """How long the answer's head (or stdio line) waits before it is written."""
        return 0.0

    def headers(self) -> list[tuple[bytes, bytes]]:
        """Headers the answer's head gains."""
        return []

    def pieces(self, data: bytes) -> list[tuple[float, bytes]]:
        """One write of `data` as pieces, each with the wait before it; sets `due` when the connection must end."""
        return [(0.0, data)]

    due = False
    """True once the pieces reached the point where the fault ends the connection (a `LimitData`)."""

    def end_wait_s(self) -> float:
        """How long the end of the response waits after its last byte."""
        return 0.0

    def note(self) -> str:
        """What the fault did, for the record."""
        raise NotImplementedError

    def wrap_send(self, send: Send, wire: Wire) -> Send:
        self.begin(wire.record)

        async def shaped(message: Message) -> None:
            if self.cut:
                return
            kind = message["type"]
            if kind == "http.response.start":
                wait_s = self.head_wait_s()
                self.mark(wire.record)
                if wait_s:
                    await anyio.sleep(wait_s)
                extra = self.headers()
                await send({**message, "headers": [*message.get("headers", ()), *extra]} if extra else message)
                return
            if kind != "http.response.body":
                await send(message)
                return
            for wait_s, piece in self.pieces(message.get("body", b"")):
                self.mark(wire.record)
                if wait_s:
                    await anyio.sleep(wait_s)
                await send({"type": "http.response.body", "body": piece, "more_body": True})
            if self.due:
                self.cut = True
                self.mark(wire.record)
                await wire.close()
                return
            if not message.get("more_body", False):
                wait_s = self.end_wait_s()
                if wait_s:
                    await anyio.sleep(wait_s)
                await send({"type": "http.response.body", "body": b"", "more_body": False})

        return shaped

    async def stream_line(self, turn: LineTurn, record: Record, response: Any, line: bytes) -> bool:
        self.begin(record)
        wait_s = self.head_wait_s()
        if wait_s:
            self.mark(record)
            await anyio.sleep(wait_s)
        for wait_s, piece in self.pieces(line):
            if wait_s:
                await anyio.sleep(wait_s)
            turn.write_line(record, piece, self.mark(record))
        if self.due:
            turn.exit(record, _LIMIT_EXIT)
        return True


@handles(faults.Latency)
class _Latency(_Shaped):
    def begin(self, record: Record) -> None:
        super().begin(record)
        self.draws, self.seeded = _draws(self.fault.seed, record)
        self.delays_s: list[float] = []
        self.writes = 0

    def _delay(self) -> float:
        fault: faults.Latency = self.fault
        if fault.distribution == "exponential":
            delay_s = self.draws.expovariate(1 / fault.mean_s) if fault.mean_s else 0.0
        elif fault.distribution == "normal":
            delay_s = self.draws.gauss(fault.mean_s, fault.jitter_s)
        else:
            delay_s = self.draws.uniform(fault.mean_s - fault.jitter_s, fault.mean_s + fault.jitter_s)
        delay_s = round(max(delay_s, 0.0), 6)
        self.delays_s.append(delay_s)
        return delay_s

    def head_wait_s(self) -> float:
        return self._delay()

    def pieces(self, data: bytes) -> list[tuple[float, bytes]]:
        if not data:
            return []
        self.writes += 1
        return [(self._delay() if self.writes > 1 else 0.0, data)]

    def note(self) -> str:
        delays_s = ", ".join(f"{delay_s:g}" for delay_s in self.delays_s)
        return f"answered after a latency of {delays_s} s by a fault (Latency, {self.seeded})"


@handles(faults.Bandwidth)
class _Bandwidth(_Shaped):
    def begin(self, record: Record) -> None:
        super().begin(record)
        self.step = max(1, int(self.fault.bytes_per_s * _STEP_S))
        self.wait_s = self.step / self.fault.bytes_per_s
        self.written = 0

    def pieces(self, data: bytes) -> list[tuple[float, bytes]]:
        found = []
        for start in range(0, len(data), self.step):
            found.append((self.wait_s if self.written else 0.0, data[start : start + self.step]))
            self.written += 1
        return found

    def note(self) -> str:
        return f"answered at {self.fault.bytes_per_s:g} bytes/s by a fault (Bandwidth)"


@handles(faults.Slice)
class _Slice(_Shaped):
    def begin(self, record: Record) -> None:
        super().begin(record)
        self.draws, self.seeded = _draws(self.fault.seed, record)
        self.sizes: list[int] = []

    def pieces(self, data: bytes) -> list[tuple[float, bytes]]:
        if len(data) < 2:
            cuts: list[int] = []
        else:
            cuts = sorted(self.draws.sample(range(1, len(data)), min(self.fault.pieces - 1, len(data) - 1)))
        bounds = [0, *cuts, len(data)]
        spans = itertools.pairwise(bounds)
        found = [(self.fault.gap_s if index else 0.0, data[start:end]) for index, (start, end) in enumerate(spans)]
        self.sizes.extend(len(piece) for _, piece in found if piece)
        return [(wait_s, piece) for wait_s, piece in found if piece]

    def note(self) -> str:
        sizes = ", ".join(str(size) for size in self.sizes)
        return f"answered in writes of {sizes} bytes by a fault (Slice, {self.seeded})"


@handles(faults.LimitData)
class _LimitData(_Shaped):
    def begin(self, record: Record) -> None:
        super().begin(record)
        self.left = self.fault.bytes
        self.sent = 0

    def headers(self) -> list[tuple[bytes, bytes]]:
        return [_CLOSE]

    def pieces(self, data: bytes) -> list[tuple[float, bytes]]:
        piece = data[: self.left]
        self.left -= len(piece)
        self.sent += len(piece)
        if len(data) > len(piece):
            self.due = True
        return [(0.0, piece)] if piece else []

    def note(self) -> str:
        ended = "then closed the connection" if self.due else "the whole answer"
        return f"sent {self.sent} bytes of the answer, {ended}, by a fault (LimitData({self.fault.bytes}))"


@handles(faults.SlowClose)
class _SlowClose(_Shaped):
    stdio = False

    def headers(self) -> list[tuple[bytes, bytes]]:
        return [_CLOSE]

    def end_wait_s(self) -> float:
        return float(self.fault.delay_s)

    def note(self) -> str:
        return f"ended the response {self.fault.delay_s:g} s after its last byte by a fault (SlowClose)"


@handles(faults.ResetPeer)
class _ResetPeer(Effect[faults.ResetPeer]):
    """An RST instead of the answer: at the head of the answer (after the run), or before the request runs."""

    wire: Wire | None = None
    done = False

    def sse(self, session: Session | None) -> bool | None:
        return False  # as JSON, the head is sent only once the request ran

    def _note(self, record: Record) -> None:
        when = "after the request ran" if self.fault.after_execution else "before the request ran"
        record.error = f"connection reset (RST) {when} by a fault (ResetPeer)"
        record.status = None  # no status line reached the client

    def wrap_send(self, send: Send, wire: Wire) -> Send:
        self.wire = wire

        async def shaped(message: Message) -> None:
            if self.done:
                return
            if message["type"] == "http.response.start":
                self.done = True
                self._note(wire.record)
                await wire.reset()
                return
            await send(message)

        return shaped

    async def before(self, turn: HttpTurn, state: ServerState, session: Session | None) -> bool:
        if self.fault.after_execution or self.wire is None:
            return False
        self.done = True
        self._note(turn.record)
        await self.wire.reset()
        return True


@handles(faults.StdoutNoise)
class _StdoutNoise(Effect[faults.StdoutNoise]):
    stdio = True

    def send_line(self, turn: LineTurn, record: Record, response: Any, line: bytes) -> bool:
        noise = b"".join(text.encode() + b"\n" for text in self.fault.lines)
        note = f"{len(self.fault.lines)} log lines on stdout before the answer by a fault (StdoutNoise)"
        turn.write_line(record, noise + line, note)
        return True
