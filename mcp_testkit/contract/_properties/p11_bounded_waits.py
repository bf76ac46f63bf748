"""P11: every connect and call ends within the bridge's declared timeouts plus a margin, whatever the server does:
never answers, dribbles its answer, or sends only progress. Here a wait without end is the failure itself."""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any

from hypothesis import strategies as st

from mcp_testkit import faults
from mcp_testkit.contract._facts import DEFAULT_WAIT_S
from mcp_testkit.contract._properties._example_steps import place, tool
from mcp_testkit.contract._properties._fault_sets import fault_label
from mcp_testkit.contract._properties._property import Inputs, Property

if TYPE_CHECKING:
    from collections.abc import Iterator

    from hypothesis.strategies import SearchStrategy

    from mcp_testkit.adapters import BridgeAdapter, Outcome
    from mcp_testkit.contract._harness import BridgeFacts, ContractHarness

__all__ = ["PROPERTY", "bound_s"]

MARGIN = 1.25
"""How much longer than its declared waits a bridge may take."""
SLACK_S = 1.0
"""And how many seconds more (scheduling, closing a connection)."""
DRIBBLE_BYTES_PER_S = 8.0
"""Slow enough that an answer of about 100 bytes takes over 10 s."""
_WHERE = {"handshake": ("initialize", "tools/list"), "stateless": ("tools/list",)}
"""The connect's requests a fault holds, by era: `initialize` in the handshake era, and the listing (a stateless
bridge need not send `server/discover`)."""


def _hold(facts: BridgeFacts) -> list[faults.Fault]:
    """What the server does instead of answering: nothing after the headers, a dribble, progress only."""
    interval_s = round(min(0.1, facts.wait_s / 4), 3)
    return [faults.NeverAnswer(), faults.Dribble(bytes_per_s=DRIBBLE_BYTES_PER_S), faults.ProgressOnly(interval_s)]


def _attempt_s(facts: BridgeFacts, fault: faults.Fault) -> float:
    """How long one attempt of a call may wait: its timeout (the contract's default where none is declared), or where
    progress extends it, the declared maximum."""
    extends = fault.extends_waits and facts.progress_timeout_s is not None
    return max(facts.wait_s, facts.progress_timeout_s or 0.0) if extends else facts.wait_s


@contextlib.contextmanager
def _abandoning(adapter: BridgeAdapter) -> Iterator[None]:
    """While the property bounds a wait itself: the contract's guard lets that cancellation through (it is the
    property giving up on the bridge, not the adapter's error)."""
    setattr(adapter, "abandoning", True)  # noqa: B010
    try:
        yield
    finally:
        setattr(adapter, "abandoning", False)  # noqa: B010


def bound_s(facts: BridgeFacts, where: str, fault: faults.Fault, kind: str) -> float:
    """The declared waits of one example: the connect's timeout, or each attempt of the call (1 + retry for a read);
    where the adapter declares no wait, the defaults of `BridgeFacts.wait_s` and `connect_wait_s`."""
    if where != "call":
        return facts.connect_wait_s
    attempts = 1 + facts.retry if kind == "read" else 1
    return attempts * _attempt_s(facts, fault)


def _most_s(facts: BridgeFacts) -> float:
    """The longest declared wait of any example: what the harness's time limit makes room for."""
    worst = max(_attempt_s(facts, fault) for fault in _hold(facts))
    return max(facts.connect_wait_s, (1 + facts.retry) * worst)


def _cases(facts: BridgeFacts) -> list[Inputs]:
    most = _most_s(facts)
    cases: list[Inputs] = []
    for fault in _hold(facts):
        for kind in ("write", "read"):
            cases.append({"where": "call", "fault": fault, "kind": kind, "bound_s": most})
    # Held after calls that worked: the wait of a later call on the same session is bounded too.
    for fault, kind, before in ((faults.NeverAnswer(), "read", 2), (faults.Dribble(DRIBBLE_BYTES_PER_S), "write", 1)):
        cases.append({"where": "call", "fault": fault, "kind": kind, "bound_s": most, "calls_before": before})
    for where in _WHERE.get(facts.era, ("tools/list",)):
        cases.append({"where": where, "fault": faults.NeverAnswer(), "kind": "read", "bound_s": most})
    return cases


def _strategies(facts: BridgeFacts) -> dict[str, SearchStrategy[Any]]:
    # Connects are declared cases only: each costs the whole connect timeout, and there is nothing to vary.
    return {
        "where": st.just("call"),
        "fault": st.sampled_from(_hold(facts)),
        "kind": st.sampled_from(["read", "write"]),
        "bound_s": st.just(_most_s(facts)),
    }


def _labels(inputs: Inputs) -> list[str]:
    where = inputs["where"]
    return [fault_label(inputs["fault"]), inputs["kind"] if where == "call" else f"connect ({where})"]


async def _check(h: ContractHarness, adapter: BridgeAdapter, facts: BridgeFacts, inputs: Inputs) -> None:
    import anyio

    server = h.server
    where, fault, kind = inputs["where"], inputs["fault"], inputs["kind"]
    tool(server, "slow", kind, returns="done")
    declared = bound_s(facts, where, fault, kind)
    limit_s = MARGIN * declared + SLACK_S
    outcome: Outcome | None = None
    if where != "call":
        place(server, fault, method=where, times=None)
        started = anyio.current_time()
        with _abandoning(adapter), anyio.move_on_after(limit_s):
            outcome = await adapter.connect(h.url, {})
        what = f"a connect whose {where} the server holds ({fault!r})"
    else:
        await h.connect(adapter)
        for number in range(inputs.get("calls_before", 0)):
            if (await adapter.call("slow", {})).kind != "ok":
                raise h.fail(f"call {number + 1}, before the server held one, failed")
        place(server, fault, method="tools/call", tool="slow", times=None)
        started = anyio.current_time()
        with _abandoning(adapter), anyio.move_on_after(limit_s):
            outcome = await adapter.call("slow", {})
        what = f"a {kind} call the server holds ({fault!r})"
    took = anyio.current_time() - started
    facts_ = {
        "declared waits": f"{declared:g} s" + ("" if facts.timeout_s is not None else " (the contract's default)"),
        f"limit (declared x {MARGIN:g} + {SLACK_S:g} s)": f"{limit_s:g} s",
        "outcome": outcome if outcome is not None else "none: still waiting",
        "took": f"{took:.2f} s",
    }
    if outcome is None:
        if facts.timeout_s is None:
            raise h.fail(
                f"{what} waits without end (its adapter declares no timeout): it did not end within the contract's "
                f"default of {DEFAULT_WAIT_S:g} s a request plus a margin",
                **facts_,
            )
        raise h.fail(f"{what} did not end within the bridge's declared waits plus a margin", **facts_)
    if where == "call" and outcome.kind == "ok" and not fault.answers_in_the_end:
        raise h.fail(f"{what} was reported ok although the server never answered it", **facts_)


PROPERTY = Property(
    "P11",
    "Every connect and call ends within the bridge's declared waits",
    "waits_are_bounded",
    "connects and calls held by `NeverAnswer`, `Dribble` and `ProgressOnly`; reads (every attempt) and writes",
    _strategies,
    _cases,
    _labels,
    _check,
    hang_fails=True,  # here a wait without end is the failure itself
    guarantee=(
        "Every connect and call ends within the bridge's declared timeouts (`connect_timeout_s`, `timeout_s` per "
        "attempt, `progress_timeout_s` where progress extends a wait) plus a margin, whatever the server does. "
        f"Undeclared, a connect may take its listing's 1 + `retry` attempts and a request {DEFAULT_WAIT_S:g} s."
    ),
    breaks=(
        "no timeout, or one lost on some path; a timeout that restarts with every byte of a dribbled answer; "
        "progress that extends a wait without a maximum"
    ),
)
