"""Scripting what goes wrong on a `TestMcpServer`: fault rules, lost sessions and a restart.

A mixin of `TestMcpServer`, kept apart so that the server's class holds its life cycle and tools, and this
module the faults a test places. Every method may be called from any thread while traffic flows.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from mcp_testkit import faults
from mcp_testkit._renamed import fault_first
from mcp_testkit._wire.eras import HANDSHAKE, STATELESS
from mcp_testkit.faults import _DEFAULT

if TYPE_CHECKING:
    from mcp_testkit.server._state import ServerState
    from mcp_testkit.server._state._sessions import Session

__all__ = ["FaultScripting"]


class FaultScripting:
    """`inject`, `fail_next_call`, `lose_session`, `restart` and `pending_faults`, for `TestMcpServer`."""

    name: str
    _lock: threading.RLock
    _state: ServerState

    def inject(
        self,
        fault: faults.Fault,
        *,
        method: str | None = _DEFAULT,
        tool: str | None = None,
        name: str | None = None,
        page: int | None = None,
        session_id: str | None = None,
        nth: int = 1,
        times: int | None = _DEFAULT,
        era: str | None = _DEFAULT,
        probability: float = 1.0,
        seed: int | None = None,
    ) -> faults.Rule:
        """Add a rule: `fault` hits the `nth` matching request from now on, `times` times (None: always).

        `method` defaults to the fault's own (tools/call for answer faults, tools/list for listing
        faults, any request otherwise; None also means any); a listing fault matches its own page.
        `tool` names the tool of `tools/call` (or what the `method` given names); `name` is the spelling for
        any request: it matches what a request names, a tool, a resource's URI (`resources/read`,
        `resources/subscribe`...) or a prompt (`prompts/get`), and with no `method` hits every such request.
        `era` limits it to requests of one era ('handshake' or 'stateless'; None: either); a fault
        that means nothing in an era (a `LoseSession` without sessions) is refused for it here, and
        answered with an error that says so if it hits such a request anyway. With `probability` below 1
        each matching request is hit with that chance, reproducibly from `seed` (drawn when None, and shown
        in the rule returned); `times` then defaults to None (every time) and still caps the hits.
        """
        rule = faults.rule_for(
            fault,
            method=method,
            tool=tool,
            name=name,
            page=page,
            session_id=session_id,
            nth=nth,
            times=times,
            era=era,
            probability=probability,
            seed=seed,
        )
        self._check_era(rule)
        return self._state.plan.add(rule)

    def _check_era(self, rule: faults.Rule) -> None:
        """ValueError when the rule's era, or every era its fault means something in, is not one the server speaks."""
        served = self._state.eras
        if rule.era is not None and rule.era not in served:
            raise ValueError(f"inject: era={rule.era!r}, but server {self.name!r} speaks only {', '.join(served)}")
        if not set(rule.fault.eras) & set(served):
            raise ValueError(f"inject: {faults.misplaced(rule.fault, served[0])}")

    @fault_first
    def fail_next_call(self, fault: faults.Fault, *, tool: str | None = None) -> faults.Rule:
        """The next call of `tool` (of any tool when None) meets `fault`: `inject(fault, tool=tool)` for one call."""
        return self.inject(fault, method="tools/call", tool=tool)

    def lose_session(self, session_id: str | None = None) -> Session:
        """Forget a session now (the latest live one by default): requests on it get 404 from now on."""
        with self._lock:
            alive = self._state.sessions.alive
            chosen = [s for s in alive if session_id is None or s.id == session_id]
            if not chosen:
                raise LookupError(f"no live session {session_id!r}" if session_id else self._no_session_to_lose())
            session = chosen[-1]
            self._state.sessions.end(session.id)
            session.outbox.put(None)
            return session

    def _no_session_to_lose(self) -> str:
        """Why `lose_session()` finds nothing: naming the stateless era when that is why no session exists."""
        state = self._state
        if HANDSHAKE not in state.eras:
            why = f"server {self.name!r} speaks only 2026-07-28 (the stateless era), which has no sessions"
        elif len(state.sessions) == 0 and len(state.journal) and all(r.era == STATELESS for r in state.journal):
            why = f"every client of server {self.name!r} speaks 2026-07-28 (the stateless era), which has no sessions"
        else:
            return "no live session to lose"
        return (
            f"no live session to lose: {why}; to script a lost session, build the server with "
            'eras=("handshake",) so that clients open one with initialize'
        )

    def restart(self, unknown_session_status: int = 404) -> None:
        """Forget every session, as a restarted server does; unknown sessions then get 404 (or 400)."""
        if unknown_session_status not in (400, 404):
            raise ValueError(f"unknown_session_status must be 404 or 400, not {unknown_session_status!r}")
        with self._lock:
            sessions = self._state.sessions
            for session in sessions.alive:
                session.outbox.put(None)
            sessions.end_all()
            sessions.unknown_status = unknown_session_status

    def pending_faults(self) -> list[faults.Rule]:
        """Rules that can still fire."""
        return self._state.plan.pending()
