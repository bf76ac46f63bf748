"""P10 (for adapters that can abandon a call): a call the application abandons, or the bridge's own timeout ends,
is cancelled at the server the way the call's era says; a late answer after it goes to no other call."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import anyio
from hypothesis import strategies as st

from mcp_testkit import faults
from mcp_testkit._wire.eras import HANDSHAKE
from mcp_testkit.contract._properties._example_steps import tool
from mcp_testkit.contract._properties._fault_sets import CALL_KINDS, late_answer
from mcp_testkit.contract._properties._property import Inputs, Property

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy

    from mcp_testkit.adapters import BridgeAdapter
    from mcp_testkit.contract._harness import BridgeFacts, ContractHarness
    from mcp_testkit.journal import Record

__all__ = ["PROPERTY"]

REACH_LIMIT_S = 5.0
"""How long the application waits for the abandoned call to reach the server's tool before it gives up on it
anyway (a bridge that never sends it fails); it abandons the call as soon as the tool runs."""
HOLD_S = 0.5
"""How long the server holds the abandoned call's answer when the application abandons it."""
CANCEL_GRACE_S = 2.0
"""How long after the next call the cancel may still arrive (a bridge may send it from a task of its own)."""
_LATE = "the abandoned call's late answer"
_HOWS = ("scope", "timeout")
_HOLDS = ("handler", "late_answer")


def _needs(facts: BridgeFacts) -> str | None:
    if "abandon_calls" in facts.cannot:
        return "its adapter cannot abandon a call (it declares cannot \"abandon_calls\")"
    return None


def _hold(facts: BridgeFacts, how: str) -> faults.LateAnswer:
    """How long the server holds the answer (as a `LateAnswer`, which the example's time limit counts)."""
    if how == "timeout":
        assert facts.timeout_s is not None
        return late_answer(facts.timeout_s)
    return faults.LateAnswer(HOLD_S)


def _hows(facts: BridgeFacts) -> tuple[str, ...]:
    return _HOWS if facts.timeout_s is not None else _HOWS[:1]


def _cases(facts: BridgeFacts) -> list[Inputs]:
    def case(how: str, hold: str, kind: str = "read", calls_before: int = 0, calls_after: int = 1) -> Inputs:
        return {"how": how, "hold": hold, "answer": _hold(facts, how), "kind": kind, "calls_before": calls_before,
                "calls_after": calls_after}

    cases = [case("scope", hold, kind) for hold in _HOLDS for kind in CALL_KINDS]
    cases.append(case("scope", "late_answer", "read", calls_before=2, calls_after=2))
    if facts.timeout_s is not None:
        cases += [case("timeout", "handler", "write"), case("timeout", "late_answer", "read", calls_after=2)]
    return cases


def _strategies(facts: BridgeFacts) -> dict[str, SearchStrategy[Any]]:
    # The bridge's own timeout costs it `timeout_s` and more: drawn examples abandon with the application's scope.
    return {
        "how": st.just("scope"),
        "hold": st.sampled_from(_HOLDS),
        "answer": st.just(_hold(facts, "scope")),
        "kind": st.sampled_from(CALL_KINDS),
        "calls_before": st.integers(0, 2),
        "calls_after": st.integers(1, 2),
    }


def _labels(inputs: Inputs) -> list[str]:
    how = "application's cancel scope" if inputs["how"] == "scope" else "bridge's timeout"
    return [how, "late answer" if inputs["hold"] == "late_answer" else "held by the tool", inputs["kind"]]


def _script(h: ContractHarness, inputs: Inputs) -> list[int]:
    """The abandoned tool ('slow'), held as the example says, and 'read', which answers each call with its number;
    the list counts the runs of 'slow'."""
    server = h.server
    hold_s = inputs["answer"].seconds
    runs = [0]
    late = inputs["hold"] == "late_answer"

    async def slow(arguments: dict[str, Any]) -> str:
        runs[0] += 1
        if runs[0] == 1 and not late:  # the first run only: a resend after the bridge's timeout answers at once
            await anyio.sleep(hold_s)
        return _LATE

    tool(server, "slow", inputs["kind"], returns=slow)
    if late:
        server.inject(inputs["answer"], method="tools/call", tool="slow", times=1)
    server.tool("read", description="a read", read_only=True, answers=[f"answer {n}" for n in range(1, 8)])
    return runs


async def _abandon(adapter: BridgeAdapter, inputs: Inputs, runs: list[int]) -> Any:
    """Call 'slow' and abandon it: the application's cancel scope, as soon as the tool runs, or the bridge's own
    timeout (after which a bridge may resend a read, answered at once: the first attempt is the one abandoned)."""
    if inputs["how"] != "scope":
        return await adapter.call("slow", {})
    outcome: list[Any] = ["(abandoned by the application)"]

    async def call() -> None:
        outcome[0] = await adapter.call("slow", {})

    try:
        async with anyio.create_task_group() as group:
            group.start_soon(call)
            await _until(lambda: runs[0] > 0 or not isinstance(outcome[0], str), REACH_LIMIT_S)
            setattr(adapter, "abandoning", True)  # noqa: B010  # the contract's guard lets this cancellation through
            group.cancel_scope.cancel()
    finally:
        setattr(adapter, "abandoning", False)  # noqa: B010
    return outcome[0]


async def _until(predicate: Callable[[], bool], limit_s: float) -> bool:
    """Whether `predicate` comes true within `limit_s` (what it reads is filled by the server, in its own thread over
    a socket: looked at every 5 ms)."""
    with anyio.move_on_after(limit_s):
        while not predicate():  # noqa: ASYNC110
            await anyio.sleep(0.005)
        return True
    return False


async def _check(h: ContractHarness, adapter: BridgeAdapter, facts: BridgeFacts, inputs: Inputs) -> None:
    server = h.server
    runs = _script(h, inputs)
    await h.connect(adapter)
    for number in range(1, inputs["calls_before"] + 1):
        outcome = await adapter.call("read", {"n": number})
        if outcome.kind != "ok":
            raise h.fail(f"call {number}, before the abandoned call, failed", outcome=outcome)
    abandoned = await _abandon(adapter, inputs, runs)
    slow_calls = server.journal.calls("slow")
    if not slow_calls:
        raise h.fail("the bridge never sent the call that was then abandoned", outcome=abandoned)
    call = slow_calls[0]
    facts_: dict[str, Any] = {"abandoned call": f"#{call.seq} id={call.rpc_id!r} ({call.era})"}
    for index in range(inputs["calls_after"]):
        if index == 1 and inputs["hold"] == "late_answer" and h.via == "socket":
            # In-process the server runs in the bridge's task, so the cancel stops the late answer too.
            await _until(lambda: _answered(server.journal.calls("slow")[0]), inputs["answer"].seconds + 1.0)
        outcome = await adapter.call("read", {"after": index + 1})
        own = f"answer {inputs['calls_before'] + index + 1}"
        text = outcome.text or ""
        if outcome.kind == "ok" and _LATE in text:
            raise h.fail("the abandoned call's late answer was handed to another call", outcome=outcome, **facts_)
        if outcome.kind != "ok" or own not in text:
            raise h.fail(f"call {index + 1} after the abandoned call did not get its own answer ({own!r})",
                         outcome=outcome, **facts_)
    _no_initialize_cancelled(h)
    if not await _until(lambda: bool(server.journal.cancelled(request_id=call.rpc_id, tool="slow")), CANCEL_GRACE_S):
        raise h.fail(_missing(h, call), **facts_)


def _answered(call: Record) -> bool:
    """The late answer has been sent (to a closed stream), or the server stopped the call at its closed stream."""
    return call.response is not None or call.cancelled_by_client


def _no_initialize_cancelled(h: ContractHarness) -> None:
    for how, target in h.server.journal.cancellations():
        if target is not None and target.rpc_method == "initialize":
            raise h.fail(f"the bridge cancelled initialize (#{how.seq}), which the spec forbids")


def _missing(h: ContractHarness, call: Record) -> str:
    """What the bridge did instead of cancelling `call` as its era says."""
    if call.era != HANDSHAKE:
        return (
            "the bridge kept the abandoned call's stream open: in 2026-07-28 over HTTP, closing the request's "
            "stream is its cancellation"
        )
    named = [how for how, _target in h.server.journal.cancellations() if how.rpc_method == "notifications/cancelled"]
    if named:
        wrong = ", ".join(
            f"#{how.seq} requestId={how.cancels!r} session={(how.session_id or '-')[:8]}" for how in named
        )
        return (
            f"the bridge's notifications/cancelled named another request ({wrong}), not the abandoned call "
            f"(id {call.rpc_id!r} on session {(call.session_id or '-')[:8]})"
        )
    return "the bridge never told the server: no notifications/cancelled named the abandoned call"


PROPERTY = Property(
    "P10",
    "An abandoned call is cancelled at the server as its era says; its late answer goes nowhere",
    "abandoned_calls_are_cancelled",
    "reads and writes abandoned by the application's cancel scope or the bridge's `timeout_s`; the server "
    "stopping the tool, or answering late anyway",
    _strategies,
    _cases,
    _labels,
    _check,
    needs=_needs,
    guarantee=(
        "A call the application abandons (its cancel scope, a deadline) or the bridge's own timeout ends is "
        "cancelled at the server as the call's era says: `notifications/cancelled` with the call's id on its "
        "session in the handshake era, the request's stream closed in 2026-07-28; never `initialize`. A late "
        "answer goes to no other call, and the next call works. Applies unless the adapter cannot abandon a call."
    ),
    breaks="never sending the cancel; naming the wrong request; handing the late answer to the next call",
)
