"""Faults of the handshake era's sessions: one lost, every one forgotten (a restart), one expiring."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcp_testkit import faults
from mcp_testkit.server._dispatch._messages import INVALID_REQUEST
from mcp_testkit.server._effects._base import Effect, HttpTurn, handles
from mcp_testkit.server._state._sessions import SESSION_NOT_FOUND

if TYPE_CHECKING:
    from mcp_testkit.server._state import ServerState
    from mcp_testkit.server._state._sessions import Session


async def _session_gone(turn: HttpTurn, status: int) -> None:
    await turn.error(status, INVALID_REQUEST, SESSION_NOT_FOUND)


@handles(faults.LoseSession)
class _LoseSession(Effect[faults.LoseSession]):
    async def before(self, turn: HttpTurn, state: ServerState, session: Session | None) -> bool:
        if session is None:
            return False
        state.sessions.end(session.id)
        session.outbox.put(None)
        await _session_gone(turn, state.sessions.unknown_status)
        return True

    def opened(self, state: ServerState, session: Session) -> None:
        state.sessions.end(session.id)


@handles(faults.Restart)
class _Restart(Effect[faults.Restart]):
    async def before(self, turn: HttpTurn, state: ServerState, session: Session | None) -> bool:
        status = self.fault.unknown_session_status
        for lost in state.sessions.alive:
            lost.outbox.put(None)
        state.sessions.end_all()
        state.sessions.unknown_status = status
        if session is None:
            return False
        await _session_gone(turn, status)
        return True


@handles(faults.ExpireSession)
class _ExpireSession(Effect[faults.ExpireSession]):
    async def before(self, turn: HttpTurn, state: ServerState, session: Session | None) -> bool:
        if session is not None:
            session.expires_after = session.requests + self.fault.after_requests
        return False
