"""P13: with 2 to 16 calls in flight on one bridge and a fault on one of them, every other call gets its own answer,
none gets another's, the next call works, and `close()` from another task ends them all."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from hypothesis import strategies as st

from mcp_testkit import faults
from mcp_testkit.contract._properties._example_steps import place, tool
from mcp_testkit.contract._properties._fault_sets import fault_label, late_answer
from mcp_testkit.contract._properties._property import Inputs, Property

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy

    from mcp_testkit.adapters import BridgeAdapter, Outcome
    from mcp_testkit.contract._harness import BridgeFacts, ContractHarness

__all__ = ["PROPERTY"]

CANCEL = "cancel"
"""The application abandons one call (its cancel scope ends) while the others run."""
CLOSE = "close"
"""Another task closes the bridge while every call is in flight."""
MOST = 16
HOLD_S = 0.25
"""How long the server holds a call that the example cancels, or that is in flight when the bridge is closed."""
_ANSWER = re.compile(r"\[answer (\d+)\]")


def _needs(facts: BridgeFacts) -> str | None:
    if facts.concurrency is None:
        return "its adapter cannot have two calls in flight at once (it declares cannot \"overlap_calls\")"
    if facts.sessions == "per_call":
        return "its bridge opens a session for every call, so no calls share one"
    return None


def _faults(facts: BridgeFacts) -> list[Any]:
    """The fault on one call: lost connections (before and after it ran), 404, 500, a late answer, a cancel, a close."""
    chosen: list[Any] = [
        faults.Drop(),
        faults.Drop(after_execution=True),
        faults.HttpStatus(404),
        faults.HttpStatus(500),
    ]
    if facts.timeout_s is not None:
        chosen.append(late_answer(facts.timeout_s))
    return [*chosen, CANCEL, CLOSE]


def _most(facts: BridgeFacts) -> int:
    return min(MOST, facts.concurrency or 2)


def _cases(facts: BridgeFacts) -> list[Inputs]:
    calls = min(4, _most(facts))
    cases: list[Inputs] = [{"calls": calls, "victim": 1, "fault": f, "kind": "read"} for f in _faults(facts)]
    cases.append({"calls": calls, "victim": 0, "fault": faults.Drop(after_execution=True), "kind": "write"})
    cases.append({"calls": _most(facts), "victim": _most(facts) - 1, "fault": faults.HttpStatus(500), "kind": "read"})
    return cases


def _strategies(facts: BridgeFacts) -> dict[str, SearchStrategy[Any]]:
    return {
        "calls": st.integers(2, _most(facts)),
        "victim": st.integers(0, MOST - 1),
        "fault": st.sampled_from(_faults(facts)),
        "kind": st.sampled_from(["read", "write"]),
    }


def _labels(inputs: Inputs) -> list[str]:
    fault = inputs["fault"]
    return [inputs["kind"], fault if isinstance(fault, str) else fault_label(fault)]


def _answer(number: int) -> str:
    return f"[answer {number}]"


def _theirs(outcome: Outcome, number: int) -> list[int]:
    """The other calls whose answers `outcome` carries."""
    return sorted({int(found) for found in _ANSWER.findall(outcome.text or "")} - {number})


async def _check(h: ContractHarness, adapter: BridgeAdapter, facts: BridgeFacts, inputs: Inputs) -> None:
    import anyio

    server = h.server
    calls, fault, kind = inputs["calls"], inputs["fault"], inputs["kind"]
    victim = inputs["victim"] % calls
    tool(server, "echo", kind, returns=lambda arguments: _answer(arguments.get("n", -1)))
    await h.connect(adapter)
    held = isinstance(fault, str)
    if fault == CLOSE:
        place(server, faults.Delay(HOLD_S), method="tools/call", tool="echo", times=calls)
    elif fault == CANCEL:
        place(server, faults.Delay(HOLD_S), method="tools/call", tool="echo", nth=victim + 1)
    else:
        place(server, fault, method="tools/call", tool="echo", nth=victim + 1)
    outcomes: dict[int, Outcome | None] = {}
    scopes: dict[int, anyio.CancelScope] = {}

    async def one(number: int) -> None:
        with anyio.CancelScope() as scope:
            scopes[number] = scope
            outcomes[number] = await adapter.call("echo", {"n": number})
            return
        outcomes[number] = None  # cancelled by the application

    async with anyio.create_task_group() as group:
        for number in range(calls):
            group.start_soon(one, number)
        if held:
            while True:  # until the server holds a call; the harness's deadline bounds this wait
                if [r for r in server.calls("echo") if r.fault is not None]:
                    break
                await anyio.sleep(0.005)
            if fault == CANCEL:
                (record,) = [r for r in server.calls("echo") if r.fault is not None]
                victim = int((record.arguments or {}).get("n", victim))
                setattr(adapter, "abandoning", True)  # noqa: B010  # the contract's guard lets this cancel through
                scopes[victim].cancel()
            else:
                await adapter.close()
    setattr(adapter, "abandoning", False)  # noqa: B010
    hit = [r for r in server.calls("echo") if r.fault is not None]
    if not held and hit:
        victim = int((hit[0].arguments or {}).get("n", victim))
    shown = {number: str(outcome) for number, outcome in sorted(outcomes.items())}
    facts_ = {"calls in flight": calls, "fault": fault if held else repr(fault), "outcomes": shown}
    for number, outcome in sorted(outcomes.items()):
        if outcome is None:
            continue
        theirs = _theirs(outcome, number)
        if theirs:
            raise h.fail(f"call {number} was given the answer of call {theirs[0]}", **facts_)
        if outcome.kind == "ok" and _answer(number) not in (outcome.text or ""):
            raise h.fail(f"call {number} reported ok without its own answer", **facts_)
        if fault != CLOSE and number != victim and outcome.kind != "ok":
            raise h.fail(f"call {number} failed because of a fault on call {victim}", **facts_)
    if fault == CLOSE:
        return
    after = await adapter.call("echo", {"n": calls})
    if after.kind != "ok" or _answer(calls) not in (after.text or "") or _theirs(after, calls):
        raise h.fail("the call after the concurrent ones did not get its own answer", **facts_, after=after)


PROPERTY = Property(
    "P13",
    "Concurrent calls each get their own answer, whatever happens to one of them",
    "concurrent_calls_keep_their_answers",
    "2 to 16 calls in flight; a drop, 404, 500, late answer or cancel on one; `close()` from another task",
    _strategies,
    _cases,
    _labels,
    _check,
    needs=_needs,
    guarantee=(
        "With 2 to 16 calls in flight on one bridge and a fault on one of them, every other call gets its own "
        "answer, no call gets another's, the next call works, and `close()` from another task ends them all."
    ),
    breaks=(
        "routing answers by order rather than id; one call's lost connection, 404 or cancel failing the others "
        "or the session (`ClosedResourceError` afterwards); a close that hangs or raises while calls are in flight"
    ),
)
