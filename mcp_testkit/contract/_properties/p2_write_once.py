"""P2: a write runs at most once, exactly once when reported ok."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hypothesis import strategies as st

from mcp_testkit import faults
from mcp_testkit import strategies as mst
from mcp_testkit.contract._properties._example_steps import inject, tool
from mcp_testkit.contract._properties._fault_sets import BYTE_FAULTS, CUT_FAULTS, call_faults, fault_label, late_answer
from mcp_testkit.contract._properties._property import Inputs, Property

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy

    from mcp_testkit.adapters import BridgeAdapter
    from mcp_testkit.contract._harness import BridgeFacts, ContractHarness

__all__ = ["PROPERTY"]


def _write_rule(fault: faults.Fault, nth: int = 1) -> faults.Rule:
    return faults.Rule(fault, method="tools/call", tool="write", nth=nth)


def _cases(facts: BridgeFacts) -> list[Inputs]:
    chosen = [*call_faults(facts, auth=False), *BYTE_FAULTS, *CUT_FAULTS]
    cases: list[Inputs] = [{"schedule": [_write_rule(f)], "calls": 1} for f in chosen]
    # A fault on the first of two calls: the second must neither repeat the first nor be lost in its wake.
    cases.append({"schedule": [_write_rule(faults.Drop(after_execution=True))], "calls": 2})
    cases.append({"schedule": [_write_rule(faults.ResetPeer(after_execution=True))], "calls": 2})
    if facts.timeout_s is not None:
        cases.append({"schedule": [_write_rule(late_answer(facts.timeout_s))], "calls": 2})
    return cases


def _strategies(facts: BridgeFacts) -> dict[str, SearchStrategy[Any]]:
    # Late answers run as declared cases only: each one costs the adapter's whole timeout.
    return {
        "schedule": mst.fault_schedules(faults=mst.call_faults(auth=False, era=facts.era), tools=["write"], max_size=3),
        "calls": st.integers(1, 3),
    }


def _labels(inputs: Inputs) -> list[str]:
    return [fault_label(rule.fault) for rule in inputs["schedule"]] or ["no fault"]


async def _check(h: ContractHarness, adapter: BridgeAdapter, facts: BridgeFacts, inputs: Inputs) -> None:
    server = h.server
    tool(server, "write", "write", returns="written")
    await h.connect(adapter)
    inject(server, inputs["schedule"])
    for index in range(inputs["calls"]):
        before = server.executions("write")
        outcome = await adapter.call("write", {"n": index})
        ran = server.executions("write") - before
        facts_ = {"call": index + 1, "outcome": outcome, "handler runs": ran}
        if ran > 1:
            raise h.fail(f"a write ran {ran} times for one call", **facts_)
        if outcome.kind == "ok" and ran != 1:
            raise h.fail("the bridge reported success for a write that did not run", **facts_)


PROPERTY = Property(
    "P2",
    "A write runs at most once, exactly once when reported ok",
    "write_runs_at_most_once",
    "writes; every call fault class but 401/403; an answer later than the adapter's `timeout_s`",
    _strategies,
    _cases,
    _labels,
    _check,
    guarantee="A write runs at most once, and exactly once when the bridge reported success.",
    breaks=(
        "resending a write whose connection dropped after the server ran it, or that timed out; reporting ok for "
        "a write that never ran"
    ),
)
