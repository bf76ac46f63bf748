"""Faults of a protected server's tokens: the token a request carries expires (`ExpireToken`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcp_testkit import faults
from mcp_testkit.server._effects._base import Effect, HttpTurn, handles
from mcp_testkit.server._framing._challenges import refuse_token

if TYPE_CHECKING:
    from mcp_testkit.server._state import ServerState
    from mcp_testkit.server._state._sessions import Session


@handles(faults.ExpireToken)
class _ExpireToken(Effect[faults.ExpireToken]):
    async def before(self, turn: HttpTurn, state: ServerState, session: Session | None) -> bool:
        record = turn.record
        label = state.journal.tokens.get(record.seq)
        if state.auth is None or label is None or label == "unknown token":
            where = "a server without auth=" if state.auth is None else "a request without a token it issued"
            reason = f"{self.fault!r} has no meaning for {where}: give TestMcpServer(auth=AuthServer())"
            state.errors.append(faults.MisplacedFault(reason))
            return False
        state.auth.expire(label)
        base = "http://" + (record.headers.get("host") or "127.0.0.1")
        problem = f"{label} expired"
        await refuse_token(turn, base, state.path, 401, "invalid_token", problem, state.auth_scopes, sent=True)
        return True
