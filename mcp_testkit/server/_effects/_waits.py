"""Faults of waits and sizes: answers that never come, come too slowly, come as progress only, or come huge."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import anyio

from mcp_testkit import faults
from mcp_testkit.server._dispatch._messages import dumps, result_response
from mcp_testkit.server._effects._base import JSON, Effect, HttpTurn, LineTurn, handles

if TYPE_CHECKING:
    from mcp_testkit.journal import Record
    from mcp_testkit.server._dispatch._protocol import Call
    from mcp_testkit.server._state import ServerState
    from mcp_testkit.server._state._sessions import Session

_PIECE = 64 * 1024
"""The size of each write of a `HugeResult`'s text."""
_STEP_S = 0.05
"""How often a `Dribble` writes."""


class _Unanswered(Effect[Any]):
    """The request does not run: a placeholder answer stands in for it, and the fault decides what is sent."""

    token: Any = None
    """The call's `progressToken`, if it sent one."""

    def answer(self, request_id: Any, method: str, call: Call) -> Any:
        self.token = _progress_token(call.record.params)
        if method == "initialize":
            return None  # it runs (the era opens its session from the result), and its answer is never sent
        if method == "tools/call":
            call.record.executed = False
        return result_response(request_id, {})


def _progress_token(params: Any) -> Any:
    meta = params.get("_meta") if isinstance(params, dict) else None
    return meta.get("progressToken") if isinstance(meta, dict) else None


@handles(faults.NeverAnswer)
class _NeverAnswer(_Unanswered):
    stdio = True

    async def send(self, turn: HttpTurn, state: ServerState, status: int, response: Any, sse: bool) -> bool:
        turn.record.error = "never answered by a fault: headers sent, no body"
        if sse:
            await turn.start_sse()
        else:
            await turn.start_body(200, JSON, None)
        await turn.until_gone()
        return True

    async def after_notification(self, turn: HttpTurn) -> bool:
        turn.record.error = "never answered by a fault"
        await turn.until_gone()
        return True

    async def before_line(self, turn: LineTurn, record: Record) -> bool:
        record.error = "never answered by a fault"
        await anyio.sleep_forever()
        return True


@handles(faults.ProgressOnly)
class _ProgressOnly(_Unanswered):
    stdio = True

    def sse(self, session: Session | None) -> bool | None:
        return True

    def _progress(self, number: int) -> dict[str, Any]:
        params = {"progressToken": self.token, "progress": number, "message": "still working (ProgressOnly)"}
        return {"jsonrpc": "2.0", "method": "notifications/progress", "params": params}

    async def send(self, turn: HttpTurn, state: ServerState, status: int, response: Any, sse: bool) -> bool:
        turn.record.error = "answered with progress only by a fault, never with a result"
        await turn.start_sse()
        async with anyio.create_task_group() as group:

            async def beat() -> None:
                number = 0
                while self.token is not None:
                    number += 1
                    await turn.chunk(turn.frame(state, dumps(self._progress(number))))
                    await anyio.sleep(self.fault.interval_s)

            group.start_soon(beat)
            await turn.until_gone()
            group.cancel_scope.cancel()
        return True

    async def before_line(self, turn: LineTurn, record: Record) -> bool:
        record.error = "answered with progress only by a fault, never with a result"
        self.token = _progress_token(record.params)
        number = 0
        while True:
            number += 1
            if self.token is not None:
                await turn.notify(self._progress(number))
            await anyio.sleep(self.fault.interval_s)


@handles(faults.Dribble)
class _Dribble(Effect[faults.Dribble]):
    stdio = True
    shapes_answer = True

    def _pieces(self) -> tuple[int, float]:
        """How many bytes each write carries, and the wait after it, to keep to the fault's rate."""
        rate = self.fault.bytes_per_s
        step = max(1, int(rate * _STEP_S))
        return step, step / rate

    async def send(self, turn: HttpTurn, state: ServerState, status: int, response: Any, sse: bool) -> bool:
        turn.record.error = f"answered at {self.fault.bytes_per_s:g} bytes/s by a fault"
        data = dumps(response)
        if sse:
            await turn.start_sse()
            data = turn.frame(state, data)
        else:
            await turn.start_body(status, JSON, len(data))
        step, wait_s = self._pieces()
        for start in range(0, len(data), step):
            await turn.chunk(data[start : start + step])
            await anyio.sleep(wait_s)
        if sse:
            await turn.end_sse()
        else:
            await turn.end_body()
        return True

    async def stream_line(self, turn: LineTurn, record: Record, response: Any, line: bytes) -> bool:
        note = f"answered at {self.fault.bytes_per_s:g} bytes/s by a fault"
        step, wait_s = self._pieces()
        for start in range(0, len(line), step):
            turn.write_line(record, line[start : start + step], note)
            await anyio.sleep(wait_s)
        return True


@handles(faults.HugeResult)
class _HugeResult(Effect[faults.HugeResult]):
    stdio = True

    _MARK = "\x00huge\x00"

    def sse(self, session: Session | None) -> bool | None:
        return self.fault.sse

    def _around(self, response: Any) -> tuple[bytes, bytes] | None:
        """The bytes before and after the huge text in the answer, or None when the call did not succeed."""
        result = response.get("result") if isinstance(response, dict) else None
        if not isinstance(result, dict) or result.get("isError"):
            return None
        shaped = {**result, "content": [{"type": "text", "text": self._MARK}]}
        shaped.pop("structuredContent", None)
        before, _, after = dumps({**response, "result": shaped}).partition(dumps(self._MARK)[1:-1])
        return before, after

    def _note(self, record: Record) -> None:
        record.error = f"answered with a text result of {self.fault.size} bytes by a fault (HugeResult)"

    async def send(self, turn: HttpTurn, state: ServerState, status: int, response: Any, sse: bool) -> bool:
        around = self._around(response)
        if around is None or status != 200:
            return False
        before, after = around
        self._note(turn.record)
        if sse:
            await turn.start_sse()
            frame = turn.frame(state, before + after)
            cut = frame.index(before) + len(before)
            before, after = frame[:cut], frame[cut:]
        else:
            await turn.start_body(200, JSON, len(before) + self.fault.size + len(after))
        await turn.chunk(before)
        piece = b"x" * _PIECE
        left = self.fault.size
        while left:
            await turn.chunk(piece if left >= _PIECE else piece[:left])
            left -= min(left, _PIECE)
        await turn.chunk(after)
        if sse:
            await turn.end_sse()
        else:
            await turn.end_body()
        return True

    def send_line(self, turn: LineTurn, record: Record, response: Any, line: bytes) -> bool:
        around = self._around(response)
        if around is None:
            return False
        before, after = around
        self._note(record)
        note = record.error or ""
        # No await between the writes: no other answer's line lands inside this one.
        turn.write_line(record, before, note)
        piece = b"x" * _PIECE
        left = self.fault.size
        while left:
            turn.write_line(record, piece if left >= _PIECE else piece[:left], note)
            left -= min(left, _PIECE)
        turn.write_line(record, after + b"\n", note)
        return True


@handles(faults.StopReading)
class _StopReading(Effect[faults.StopReading]):
    stdio = True

    async def before_line(self, turn: LineTurn, record: Record) -> bool:
        record.error = "the server stopped reading its input by a fault, and never answered"
        turn.stop_reading(record)
        await anyio.sleep_forever()
        return True

    def notification_line(self, turn: LineTurn, record: Record) -> bool:
        record.error = "the server stopped reading its input by a fault"
        turn.stop_reading(record)
        return False
