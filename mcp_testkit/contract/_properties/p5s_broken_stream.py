"""P5s (the stateless era's P5): a broken stream re-issues a read once, with a new id, and never a write."""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any

from mcp_testkit import faults
from mcp_testkit._wire.eras import STATELESS
from mcp_testkit.contract._properties._example_steps import calls_after_loss, calls_first, tool
from mcp_testkit.contract._properties._fault_sets import CALL_KINDS, fault_label
from mcp_testkit.contract._properties._property import Inputs, Property

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy

    from mcp_testkit.adapters import BridgeAdapter
    from mcp_testkit.contract._harness import BridgeFacts, ContractHarness

__all__ = ["PROPERTY"]

_BROKEN_STREAMS: tuple[faults.Fault, ...] = (
    faults.EndStream(),
    faults.Drop(),
    faults.Drop(after_execution=True),
    faults.TruncateBody(),
)
"""What breaks a call's response stream: it ends early, the connection drops (before or after the tool
ran), or the body is cut in the middle of the answer's event."""


def _cases(facts: BridgeFacts) -> list[Inputs]:
    return [
        {"broken_by": fault, "kind": kind, "calls_before": 0}
        for kind, fault in itertools.product(CALL_KINDS, _BROKEN_STREAMS)
    ]


def _strategies(facts: BridgeFacts) -> dict[str, SearchStrategy[Any]]:
    return calls_after_loss("broken_by", _BROKEN_STREAMS)


def _labels(inputs: Inputs) -> list[str]:
    return [inputs["kind"], fault_label(inputs["broken_by"])]


async def _check(h: ContractHarness, adapter: BridgeAdapter, facts: BridgeFacts, inputs: Inputs) -> None:
    fault, kind = inputs["broken_by"], inputs["kind"]
    server = h.server
    server.response_mode = "sse"  # the call's answer travels on a response stream of its own
    tool(server, "tool", kind)
    await h.connect(adapter)
    facts_: dict[str, Any] = {"broken by": fault, "kind": kind}
    await calls_first(h, adapter, inputs["calls_before"], "before the stream broke", facts_)
    ran_before = server.executions("tool")
    mark = len(server.journal)
    server.inject(fault, method="tools/call", tool="tool")
    outcome = await adapter.call("tool", {})
    sent = [r for r in server.journal.records[mark:] if r.rpc_method == "tools/call" and r.tool == "tool"]
    facts_.update(outcome=outcome, runs=server.executions("tool") - ran_before, sent=len(sent))
    if kind == "write":
        if len(sent) > 1:
            raise h.fail(f"the bridge re-issued a write after a broken stream ({len(sent)} requests)", **facts_)
        if outcome.kind != "outcome_unknown":
            raise h.fail(f"a write whose stream broke surfaced as {outcome.kind}, not outcome_unknown", **facts_)
        return
    if facts.retry == 0:
        # A declared retry of 0 is a bridge that never sends a call again (the rule P3 holds it to as well).
        if len(sent) > 1:
            raise h.fail(
                f"the bridge declares retry=0 but re-issued a {kind} call after a broken stream ({len(sent)} requests)",
                **facts_,
            )
        if outcome.kind not in ("connection_error", "outcome_unknown"):
            raise h.fail(
                f"a {kind} call whose stream broke, not re-issued (retry=0), surfaced as {outcome.kind}, not "
                "connection_error or outcome_unknown",
                **facts_,
            )
        return
    if len(sent) != 2:
        again = "did not re-issue it" if len(sent) < 2 else f"sent it {len(sent)} times"
        raise h.fail(
            f"after the broken stream of a {kind} call the bridge {again}, not once more (it declares retry="
            f"{facts.retry})",
            **facts_,
        )
    if sent[0].rpc_id == sent[1].rpc_id:
        raise h.fail(
            f"the server saw the {kind} call twice with JSON-RPC id {sent[1].rpc_id!r}: the second request, sent after "
            "the broken stream, reused the first one's id (a new client that restarted its id counter does the same: "
            "either way the server cannot tell the second request from a replay of the first)",
            **facts_,
        )
    if outcome.kind != "ok":
        raise h.fail(f"the re-issued {kind} call surfaced as {outcome.kind}, not ok", **facts_)


PROPERTY = Property(
    "P5s",
    "A broken stream re-issues a read once, with a new id, and never a write",
    "broken_stream_reissues_reads_only",
    (
        "reads, idempotent writes and writes; a stream that ends before the answer (`EndStream`), a connection "
        "dropped before or after the tool ran (`Drop()`, `Drop(after_execution=True)`), an answer cut in the middle "
        "of its event (`TruncateBody` on the SSE stream)"
    ),
    _strategies,
    _cases,
    _labels,
    _check,
    eras=(STATELESS,),
    guarantee=(
        "A broken response stream re-issues a read (or idempotent call) once, with a new JSON-RPC id, and never "
        "re-issues a write, which it reports as `outcome_unknown`; a bridge that declares `retry=0` re-issues "
        "nothing and reports the read as `connection_error` or `outcome_unknown` (see [what a declared retry "
        "count means](#what-a-declared-retry-count-means)). Stateless era only: what replaces P5 where there are "
        "no sessions."
    ),
    breaks=(
        "giving up on a read whose answer was lost; replaying the lost request with its old id; re-issuing a "
        "write, or reporting it as failed or done"
    ),
)
