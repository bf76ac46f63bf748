"""Faults of a protected server's tokens: the token a request carries expires (`ExpireToken`) or is revoked
(`RevokeToken`), or lacks a scope the call now needs (`InsufficientScope`, a step-up)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcp_testkit import faults
from mcp_testkit.server._effects._base import Effect, HttpTurn, handles
from mcp_testkit.server._framing._challenges import refuse_token

if TYPE_CHECKING:
    from mcp_testkit.auth import Grant
    from mcp_testkit.server._state import ServerState
    from mcp_testkit.server._state._sessions import Session


class _TokenFault(Effect[faults.Fault]):
    """A fault of the token the request carried: its grant, or None (then misplaced, said to `server.check()`)."""

    def grant(self, turn: HttpTurn, state: ServerState) -> Grant | None:
        label = state.journal.tokens.get(turn.record.seq)
        if state.auth is None or label is None or label == "unknown token":
            where = "a server without auth=" if state.auth is None else "a request without a token it issued"
            reason = f"{self.fault!r} has no meaning for {where}: give TestMcpServer(auth=AuthServer())"
            state.errors.append(faults.MisplacedFault(reason))
            return None
        grant: Grant = state.auth.grant(label)
        return grant

    async def refuse(
        self, turn: HttpTurn, state: ServerState, status: int, error: str, problem: str, scopes: tuple[str, ...]
    ) -> None:
        base = "http://" + (turn.record.headers.get("host") or "127.0.0.1")
        assert state.auth is not None  # a token fault on a server without auth= is misplaced before it refuses
        await refuse_token(turn, state.auth, base, state.path, status, error, problem, scopes, sent=True)


@handles(faults.ExpireToken)
class _ExpireToken(_TokenFault):
    async def before(self, turn: HttpTurn, state: ServerState, session: Session | None) -> bool:
        grant = self.grant(turn, state)
        if grant is None or state.auth is None:
            return False
        state.auth.expire(grant.label)
        await self.refuse(turn, state, 401, "invalid_token", f"{grant.label} expired", state.auth_scopes)
        return True


@handles(faults.RevokeToken)
class _RevokeToken(_TokenFault):
    async def before(self, turn: HttpTurn, state: ServerState, session: Session | None) -> bool:
        grant = self.grant(turn, state)
        if grant is None or state.auth is None:
            return False
        state.auth.revoke(grant.label)
        refresh = "refresh " + grant.label.rpartition(" ")[2]  # token N's refresh token is refresh N
        try:
            state.auth.revoke(refresh)
        except KeyError:  # a token issued without one (client credentials, issue_token)
            pass
        await self.refuse(turn, state, 401, "invalid_token", f"{grant.label} was revoked", state.auth_scopes)
        return True


@handles(faults.InsufficientScope)
class _InsufficientScope(_TokenFault):
    async def before(self, turn: HttpTurn, state: ServerState, session: Session | None) -> bool:
        grant = self.grant(turn, state)
        if grant is None:
            return False
        fault = self.fault
        assert isinstance(fault, faults.InsufficientScope)
        lacking = [name for name in fault.scope.split() if name not in grant.scopes]
        if not lacking:  # the token holds them all: nothing to refuse, so the fault stays due
            state.plan.give_back(fault)
            turn.record.fault = None
            return False
        union = tuple(dict.fromkeys((*state.auth_scopes, *grant.scopes, *fault.scope.split())))
        problem = f"{grant.label} lacks the scope {' '.join(lacking)!r} that this call needs (step-up)"
        await self.refuse(turn, state, 403, "insufficient_scope", problem, union)
        return True
