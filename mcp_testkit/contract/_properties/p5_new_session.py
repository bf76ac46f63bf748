"""P5 (the handshake era only): after a 404 the bridge starts a new session and sends the call once more."""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any

from mcp_testkit import faults
from mcp_testkit._wire.eras import HANDSHAKE
from mcp_testkit.contract._properties._example_steps import calls_after_loss, calls_first, tool
from mcp_testkit.contract._properties._fault_sets import CALL_KINDS, fault_label
from mcp_testkit.contract._properties._property import Inputs, Property

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy

    from mcp_testkit.adapters import BridgeAdapter
    from mcp_testkit.contract._harness import BridgeFacts, ContractHarness

__all__ = ["PROPERTY"]

_EXPIRE = faults.ExpireSession(after_requests=0)
_LOSSES: tuple[Any, ...] = ("fault", "lose_session", "restart", _EXPIRE)
"""How the session is lost: a `LoseSession` on the call, the server forgetting it between calls, a restart, or an
`ExpireSession` on the call before, after which the session serves no more requests."""


def _cases(facts: BridgeFacts) -> list[Inputs]:
    return [{"how": how, "kind": kind, "calls_before": 0} for how, kind in itertools.product(_LOSSES, CALL_KINDS)]


def _strategies(facts: BridgeFacts) -> dict[str, SearchStrategy[Any]]:
    return calls_after_loss("how", _LOSSES)


def _labels(inputs: Inputs) -> list[str]:
    how = inputs["how"]
    return [inputs["kind"], fault_label(how) if isinstance(how, faults.Fault) else how]


async def _check(h: ContractHarness, adapter: BridgeAdapter, facts: BridgeFacts, inputs: Inputs) -> None:
    how, kind = inputs["how"], inputs["kind"]
    server = h.server
    tool(server, "tool", kind)
    await h.connect(adapter)
    facts_: dict[str, Any] = {"how": how, "kind": kind}
    await calls_first(h, adapter, inputs["calls_before"], "before the session was lost", facts_)
    stale = {session.id for session in server.sessions}
    if how == _EXPIRE:
        # The session serves this call, then no more: the next one meets the 404.
        server.inject(how, method="tools/call", tool="tool")
        await calls_first(h, adapter, 1, "as the session expired", facts_)
    ran_before = server.executions("tool")
    if how == "fault":
        server.inject(faults.LoseSession(), method="tools/call", tool="tool")
    elif how == "lose_session":
        if server.sessions.alive:
            server.lose_session()
        else:
            facts_["sessions"] = "the bridge holds no session between calls: none to lose"
    elif how == "restart":
        server.restart(unknown_session_status=404)
    mark = len(server.journal)
    outcome = await adapter.call("tool", {})
    sent = server.journal.records[mark:]
    runs = server.executions("tool") - ran_before
    facts_.update(outcome=outcome, runs=runs)
    reused = [r for r in sent if r.rpc_method == "initialize" and r.headers.get("mcp-session-id") in stale]
    if reused:
        stale_id = str(reused[0].headers.get("mcp-session-id"))[:8]
        raise h.fail(f"the new initialize (#{reused[0].seq}) carried the stale session id {stale_id}", **facts_)
    lost = next((r for r in sent if r.status == 404), None)
    if lost is not None and not any(r.rpc_method == "initialize" and r.seq > lost.seq for r in sent):
        raise h.fail(f"after the 404 (#{lost.seq}) the bridge did not start a new session", **facts_)
    if outcome.kind != "ok" or runs != 1:
        raise h.fail("the call was not sent once more on a new session", **facts_)


PROPERTY = Property(
    "P5",
    "After a 404 the bridge starts a new session and sends the call once more",
    "new_session_after_404",
    "reads, idempotent writes and writes; a 404 on the call, a session lost or a server restart between calls, a "
    "session that expires",
    _strategies,
    _cases,
    _labels,
    _check,
    eras=(HANDSHAKE,),
    guarantee=(
        "After a 404 the bridge starts a new session (an `initialize` without the stale session id) and sends the "
        "call once more. Handshake era only."
    ),
    breaks="reporting the 404 as an error; re-initializing with the old `Mcp-Session-Id`",
)
