"""Scripting what goes wrong on a `TestMcpServer`: fault rules, lost sessions and a restart.

`FaultScripting` is a part of the server: the server's verbs of the same names call it. It changes the current
state under the server's lock; every method may be called from any thread while traffic flows.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mcp_testkit import faults
from mcp_testkit._wire.eras import HANDSHAKE, STATELESS
from mcp_testkit._wire.signatures import keywords_of

if TYPE_CHECKING:
    from mcp_testkit.server._current import CurrentState
    from mcp_testkit.server._state._sessions import Session

__all__ = ["FaultScripting"]


class FaultScripting:
    """`inject`, `add_rule`, `fail_next_call`, `lose_session`, `restart` and `pending_faults`, on the current state of
    the server named `name`."""

    def __init__(self, current: CurrentState, name: str) -> None:
        self._current = current
        self._name = name

    @keywords_of(faults.placed_rule)
    def inject(self, fault: faults.Fault, **placement: Any) -> faults.Rule:
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
        return self.add_rule(faults.placed_rule(fault, **placement))

    def check_rule(self, rule: faults.Rule) -> None:
        """ValueError when the rule's era, or every era its fault means something in, is not one the server speaks."""
        problem = faults.era_problem(rule, self._current.state.eras, f"server {self._name!r}")
        if problem is not None:
            raise ValueError(f"inject: {problem}")

    def add_rule(self, rule: faults.Rule) -> faults.Rule:
        """Add a rule made elsewhere (a scenario, the admin API), checked as `inject` checks its own."""
        self.check_rule(rule)
        return self._current.state.plan.add(rule)

    def fail_next_call(self, fault: faults.Fault, *, tool: str | None = None) -> faults.Rule:
        """The next call of `tool` (of any tool when None) meets `fault`: `inject(fault, tool=tool)` for one call."""
        return self.inject(fault, method="tools/call", tool=tool)

    def lose_session(self, session_id: str | None = None) -> Session:
        """Forget a session now (the latest live one by default): requests on it get 404 from now on."""
        current = self._current
        with current.lock:
            sessions = current.state.sessions
            chosen = [s for s in sessions.alive if session_id is None or s.id == session_id]
            if not chosen:
                raise LookupError(f"no live session {session_id!r}" if session_id else self._no_session_to_lose())
            session = chosen[-1]
            sessions.end(session.id)
            session.outbox.put(None)
            return session

    def _no_session_to_lose(self) -> str:
        """Why `lose_session()` finds nothing: naming the stateless era when that is why no session exists."""
        state = self._current.state
        if HANDSHAKE not in state.eras:
            why = f"server {self._name!r} speaks only 2026-07-28 (the stateless era), which has no sessions"
        elif len(state.sessions) == 0 and len(state.journal) and all(r.era == STATELESS for r in state.journal):
            why = f"every client of server {self._name!r} speaks 2026-07-28 (the stateless era), which has no sessions"
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
        current = self._current
        with current.lock:
            sessions = current.state.sessions
            for session in sessions.alive:
                session.outbox.put(None)
            sessions.end_all()
            sessions.unknown_status = unknown_session_status

    def pending_faults(self) -> list[faults.Rule]:
        """Rules that can still fire."""
        return self._current.state.plan.pending()

    def unfired(self) -> str | None:
        """The scripted faults that never fired, one a line, or None when all did (a test that fired none proved
        nothing)."""
        unfired = self._current.state.plan.unfired()
        if not unfired:
            return None
        listed = "\n".join(
            f"  {rule.fault!r} (method={rule.method}, tool={rule.tool}" + (f", name={rule.name})" if rule.name else ")")
            for rule in unfired
        )
        return f"{len(unfired)} scripted fault(s) never fired:\n{listed}"
