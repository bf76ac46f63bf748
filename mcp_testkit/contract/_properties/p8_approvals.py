"""P8 (for adapters declaring "approvals"): a declined or unanswered approval never reaches the server; an
approved one runs exactly once."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hypothesis import strategies as st

from mcp_testkit.contract._properties._example_steps import tool as add_tool
from mcp_testkit.contract._properties._property import Inputs, Property

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy

    from mcp_testkit.adapters import BridgeAdapter
    from mcp_testkit.contract._harness import BridgeFacts, ContractHarness

__all__ = ["PROPERTY"]


_DECISIONS = ("approve", "decline", "leave", "approve twice")
"""What happens to a paused call: approved, declined, left unanswered, or approved and its token used again."""
_GATED = ("read", "write")


def _cases(facts: BridgeFacts) -> list[Inputs]:
    cases: list[Inputs] = [
        {"calls": [(tool, decision, 0)], "removed": False} for tool in _GATED for decision in _DECISIONS
    ]
    # Decided in another order than paused: each decision must reach its own call, with its own arguments.
    mixed = [("write", "decline", 1), ("write", "approve", 2), ("read", "leave", 3), ("write", "approve twice", 0)]
    cases.append({"calls": mixed, "removed": False})
    cases.append({"calls": [("write", "approve", 1), ("read", "approve", 0)], "removed": True})
    return cases


def _strategies(facts: BridgeFacts) -> dict[str, SearchStrategy[Any]]:
    # The third item ranks the decisions: calls are decided in rank order, not in the order they were paused.
    call = st.tuples(st.sampled_from(_GATED), st.sampled_from(_DECISIONS), st.integers(0, 3))
    return {"calls": st.lists(call, min_size=1, max_size=4), "removed": st.booleans()}


def _labels(inputs: Inputs) -> list[str]:
    labels = sorted({f"{tool} {decision}" for tool, decision, _ in inputs["calls"]})
    return [*labels, "write removed before the decisions"] if inputs["removed"] else labels


async def _check(h: ContractHarness, adapter: BridgeAdapter, facts: BridgeFacts, inputs: Inputs) -> None:
    calls, removed = inputs["calls"], inputs["removed"]
    order = sorted(range(len(calls)), key=lambda number: calls[number][2])
    server = h.server
    add_tool(server, "read", "read", returns="read")
    add_tool(server, "write", "write", returns="written")
    gated: Any = adapter
    gated.require_approval(list(_GATED))
    await h.connect(adapter)
    tokens: list[str] = []
    for number, (tool, _, _) in enumerate(calls):
        outcome = await adapter.call(tool, {"n": number})
        if outcome.kind != "approval_required" or not outcome.text:
            raise h.fail(f"call {number} of the gated tool {tool!r} was not paused for approval", outcome=outcome)
        tokens.append(outcome.text)
    sent = [r for r in server.journal if r.rpc_method == "tools/call"]
    if sent:
        raise h.fail(f"{len(sent)} paused call(s) reached the server before any decision (#{sent[0].seq})")
    if removed:
        server.remove_tool("write")
    outcomes: dict[int, list[Any]] = {}
    for number in order:
        decision = calls[number][1]
        if decision == "leave":
            continue
        token = tokens[number]
        if decision == "decline":
            outcomes[number] = [await gated.decline(token)]
        else:
            outcomes[number] = [await gated.approve(token)]
            if decision == "approve twice":
                outcomes[number].append(await gated.approve(token))
    await adapter.close()  # what a bridge sends when it closes counts too
    for number, (tool, decision, _) in enumerate(calls):
        records = [r for r in server.calls(tool) if r.arguments == {"n": number}]
        runs = sum(1 for r in records if r.executed)
        facts_ = {"call": f"{number} ({tool}, {decision})", "outcomes": outcomes.get(number, []), "sent": len(records)}
        if decision in ("decline", "leave") and records:
            said = "a declined" if decision == "decline" else "an unanswered"
            raise h.fail(f"{said} approval reached the server (#{records[0].seq})", **facts_)
        if decision.startswith("approve") and removed and tool == "write":
            if records:
                raise h.fail("an approved call to a tool the server no longer lists reached it", **facts_)
            if any(outcome.kind == "ok" for outcome in outcomes[number]):
                raise h.fail("an approved call to a tool the server no longer lists reported ok, unsent", **facts_)
            continue
        if decision.startswith("approve"):
            if runs != 1:
                raise h.fail(f"an approved call ran {runs} times, not exactly once", **facts_)
            first = outcomes[number][0]
            if first.kind != "ok":
                raise h.fail(f"an approved call to a healthy server reported {first.kind}", **facts_)
            if decision == "approve twice" and outcomes[number][1].kind == "ok":
                raise h.fail("a spent approval token was accepted a second time", **facts_)


PROPERTY = Property(
    "P8",
    "A declined or unanswered approval never reaches the server; an approved one runs exactly once",
    "approvals_are_kept",
    (
        "reads and writes gated; approved, declined, left unanswered, approved twice; decided in any order; the "
        "tool removed before the decision"
    ),
    _strategies,
    _cases,
    _labels,
    _check,
    requires="approvals",
    guarantee=(
        "A declined or unanswered approval never reaches the server; an approved one runs exactly once. Applies to "
        'adapters declaring `"approvals"`.'
    ),
    breaks=(
        "sending a call before its approval, or after its decline; flushing unanswered calls at close; letting a "
        "token approve twice; sending an approved call to a tool the server no longer lists"
    ),
)
