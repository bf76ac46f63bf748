"""P3: a read survives up to `retry` transient faults, and runs at most 1 + retry times."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hypothesis import strategies as st

from mcp_testkit import faults
from mcp_testkit import strategies as mst
from mcp_testkit.contract._properties._example_steps import place, tool
from mcp_testkit.contract._properties._fault_sets import fault_label, transient_faults
from mcp_testkit.contract._properties._property import Inputs, Property

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy

    from mcp_testkit.adapters import BridgeAdapter
    from mcp_testkit.contract._harness import BridgeFacts, ContractHarness

__all__ = ["PROPERTY"]


def _cases(facts: BridgeFacts) -> list[Inputs]:
    within = max(facts.retry, 1)
    cases: list[Inputs] = []
    kinds_of_fault = transient_faults(facts)
    for kind in ("read", "idempotent"):
        cases += [{"kind": kind, "transient": [f] * within} for f in kinds_of_fault]
        if facts.retry >= 2 and faults.EndStream() in kinds_of_fault:
            # Two different faults in a row, within the budget: a dropped connection, then a stream ended before
            # the answer (a bridge that survives each alone may not survive the second after the first).
            cases.append({"kind": kind, "transient": [faults.Drop(after_execution=False), faults.EndStream()]})
        # One more than the budget, each of which ran the handler: the runs must stop at 1 + retry.
        cases.append({"kind": kind, "transient": [faults.Drop(after_execution=True)] * (facts.retry + 1)})
    return cases


def _strategies(facts: BridgeFacts) -> dict[str, SearchStrategy[Any]]:
    return {
        "kind": st.sampled_from(["read", "idempotent"]),
        "transient": st.lists(mst.call_faults(transient_only=True, era=facts.era), max_size=facts.retry + 1),
    }


def _labels(inputs: Inputs) -> list[str]:
    return [inputs["kind"], *(fault_label(f) for f in inputs["transient"])]


async def _check(h: ContractHarness, adapter: BridgeAdapter, facts: BridgeFacts, inputs: Inputs) -> None:
    kind, transient = inputs["kind"], inputs["transient"]
    server = h.server
    tool(server, "read", kind, returns="read")
    await h.connect(adapter)
    for fault in transient:
        place(server, fault, method="tools/call", tool="read")
    outcome = await adapter.call("read", {})
    runs = server.executions("read")
    facts_ = {"retry budget": facts.retry, "outcome": outcome, "handler runs": runs}
    if runs > 1 + facts.retry:
        raise h.fail(f"a {kind} call ran {runs} times, more than 1 + retry", **facts_)
    if len(transient) <= facts.retry and outcome.kind != "ok":
        raise h.fail(f"a {kind} call failed after {len(transient)} transient faults, within its budget", **facts_)


PROPERTY = Property(
    "P3",
    "A read survives up to `retry` transient faults, runs at most 1 + retry times",
    "read_survives_transient_faults",
    "reads and idempotent writes",
    _strategies,
    _cases,
    _labels,
    _check,
    guarantee=(
        "A read survives up to `retry` transient faults (lost connections and sessions, timeouts) and runs at most "
        "`1 + retry` times."
    ),
    breaks="giving up on a read within the budget; retrying without bound",
)
