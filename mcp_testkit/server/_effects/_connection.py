"""Faults of the connection, the stream and the process: drops, cut or garbled answers, broken streams, exits."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mcp_testkit import faults
from mcp_testkit.server._dispatch._messages import dumps
from mcp_testkit.server._effects._base import JSON, Effect, HttpTurn, LineTurn, handles

if TYPE_CHECKING:
    from mcp_testkit.journal import Record
    from mcp_testkit.server._state import ServerState
    from mcp_testkit.server._state._sessions import Session


@handles(faults.Drop)
class _Drop(Effect[faults.Drop]):
    async def before(self, turn: HttpTurn, state: ServerState, session: Session | None) -> bool:
        if self.fault.after_execution:
            return False
        await turn.drop()
        return True

    async def send(self, turn: HttpTurn, state: ServerState, status: int, response: Any, sse: bool) -> bool:
        await turn.drop()
        return True

    async def after_notification(self, turn: HttpTurn) -> bool:
        await turn.drop()
        return True


@handles(faults.TruncateBody)
class _TruncateBody(Effect[faults.TruncateBody]):
    stdio = True
    shapes_answer = True

    async def send(self, turn: HttpTurn, state: ServerState, status: int, response: Any, sse: bool) -> bool:
        if not sse:
            body = dumps(response)
            await turn.raw(200, body[: len(body) // 2], JSON)
            return True
        await turn.start_sse()
        frame = turn.frame(state, dumps(response))[:-2]
        await turn.chunk(frame[: len(frame) // 2])
        await turn.end_sse()
        return True

    def send_line(self, turn: LineTurn, record: Record, response: Any, line: bytes) -> bool:
        turn.write_line(record, line[: len(line) // 2] + b"\n", "answered with half a line by a fault")
        return True


@handles(faults.EndStream)
class _EndStream(Effect[faults.EndStream]):
    shapes_answer = True

    def sse(self, session: Session | None) -> bool | None:
        return True

    async def send(self, turn: HttpTurn, state: ServerState, status: int, response: Any, sse: bool) -> bool:
        await turn.start_sse()
        await turn.end_sse()
        return True


@handles(faults.MalformedSse)
class _MalformedSse(Effect[faults.MalformedSse]):
    shapes_answer = True

    def sse(self, session: Session | None) -> bool | None:
        return True

    async def send(self, turn: HttpTurn, state: ServerState, status: int, response: Any, sse: bool) -> bool:
        await turn.start_sse()
        await turn.chunk(turn.frame(state, b"{this is not json"))
        await turn.end_sse()
        return True


@handles(faults.BreakStream)
class _BreakStream(Effect[faults.BreakStream]):
    def sse(self, session: Session | None) -> bool | None:
        return True

    def breaks(self) -> tuple[int, int | None] | None:
        retry_s = self.fault.retry_s
        return self.fault.after_events, None if retry_s is None else round(retry_s * 1000)


@handles(faults.MalformedLine)
class _MalformedLine(Effect[faults.MalformedLine]):
    stdio = True

    def send_line(self, turn: LineTurn, record: Record, response: Any, line: bytes) -> bool:
        turn.write_line(record, b"{this line is not JSON\n", "answered with a malformed line by a fault")
        return True


class _Ending(Effect[Any]):
    """`Exit` and `Crash`: the process ends instead of answering (after running the request, if so asked)."""

    stdio = True

    def _end(self, turn: LineTurn, record: Record) -> None:
        raise NotImplementedError

    async def before_line(self, turn: LineTurn, record: Record) -> bool:
        if self.fault.after_execution:
            return False
        self._end(turn, record)
        return True

    def send_line(self, turn: LineTurn, record: Record, response: Any, line: bytes) -> bool:
        self._end(turn, record)
        return True

    def notification_line(self, turn: LineTurn, record: Record) -> bool:
        self._end(turn, record)
        return True


@handles(faults.Exit)
class _Exit(_Ending):
    def _end(self, turn: LineTurn, record: Record) -> None:
        turn.exit(record, self.fault.code)


@handles(faults.Crash)
class _Crash(_Ending):
    def _end(self, turn: LineTurn, record: Record) -> None:
        turn.crash(record)
