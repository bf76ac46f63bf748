"""Faults that replace or hold back a request's answer: JSON-RPC errors and results, waits, HTTP statuses."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import anyio

from mcp_testkit import faults
from mcp_testkit.server._dispatch._messages import INTERNAL_ERROR, error_response, result_response
from mcp_testkit.server._effects._base import Effect, HttpTurn, LineTurn, handles
from mcp_testkit.tools import text_result

if TYPE_CHECKING:
    from mcp_testkit.journal import Record
    from mcp_testkit.server._dispatch._protocol import Call
    from mcp_testkit.server._state import ServerState
    from mcp_testkit.server._state._sessions import Session


@handles(faults.ErrorResult)
class _ErrorResult(Effect[faults.ErrorResult]):
    stdio = True

    def answer(self, request_id: Any, method: str, call: Call) -> Any:
        if method != "tools/call":  # only a tool's result can say isError: any other request's error is JSON-RPC's
            return error_response(request_id, INTERNAL_ERROR, self.fault.text)
        call.record.executed = False
        return result_response(request_id, text_result(self.fault.text, is_error=True))


@handles(faults.ProtocolError)
class _ProtocolError(Effect[faults.ProtocolError]):
    stdio = True

    def answer(self, request_id: Any, method: str, call: Call) -> Any:
        fault = self.fault
        return error_response(request_id, fault.code, fault.message, fault.data)


@handles(faults.Delay)
class _Delay(Effect[faults.Delay]):
    stdio = True

    async def before(self, turn: HttpTurn, state: ServerState, session: Session | None) -> bool:
        await anyio.sleep(self.fault.seconds)
        return False

    async def before_line(self, turn: LineTurn, record: Record) -> bool:
        await anyio.sleep(self.fault.seconds)
        return False


@handles(faults.LateAnswer)
class _LateAnswer(Effect[faults.LateAnswer]):
    stdio = True

    async def after(self) -> None:
        await anyio.sleep(self.fault.seconds)


@handles(faults.HttpStatus)
class _HttpStatus(Effect[faults.HttpStatus]):
    async def before(self, turn: HttpTurn, state: ServerState, session: Session | None) -> bool:
        fault = self.fault
        body, content_type = fault.body_bytes()
        headers = [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in fault.headers or ()]
        turn.record.response = fault.body if not isinstance(fault.body, bytes) else None
        await turn.raw(fault.status, body, content_type, headers)
        return True


@handles(faults.Accepted)
class _Accepted(Effect[faults.Accepted]):
    async def before(self, turn: HttpTurn, state: ServerState, session: Session | None) -> bool:
        await turn.json(202, None)
        return True


@handles(faults.WrongContentType)
class _WrongContentType(Effect[faults.WrongContentType]):
    def sse(self, session: Session | None) -> bool | None:
        return False

    async def send(self, turn: HttpTurn, state: ServerState, status: int, response: Any, sse: bool) -> bool:
        await turn.json(status, response, content_type=self.fault.content_type.encode("latin-1"))
        return True
