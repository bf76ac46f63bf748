"""P4: 401/403 are never retried; the next call sends fresh credentials."""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any

from hypothesis import strategies as st

from mcp_testkit import faults
from mcp_testkit.contract._properties._example_steps import TOKEN_ONE, TOKEN_TWO, calls_first, tool
from mcp_testkit.contract._properties._fault_sets import CALL_KINDS
from mcp_testkit.contract._properties._property import Inputs, Property

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy

    from mcp_testkit.adapters import BridgeAdapter
    from mcp_testkit.contract._harness import BridgeFacts, ContractHarness

__all__ = ["PROPERTY"]

_AUTH_WORK = ("initialize", "server/discover", "tools/list", "tools/call")


def _cases(facts: BridgeFacts) -> list[Inputs]:
    return [
        {"status": status, "kind": kind, "via": via, "calls_before": 0}
        for via, status, kind in itertools.product(("fault", "rotation"), (401, 403), CALL_KINDS)
    ]


def _strategies(facts: BridgeFacts) -> dict[str, SearchStrategy[Any]]:
    return {
        "status": st.sampled_from([401, 403]),
        "kind": st.sampled_from(CALL_KINDS),
        "via": st.sampled_from(["fault", "rotation"]),
        "calls_before": st.integers(0, 2),
    }


def _labels(inputs: Inputs) -> list[str]:
    return [inputs["kind"], f"{inputs['status']} by {inputs['via']}"]


async def _check(h: ContractHarness, adapter: BridgeAdapter, facts: BridgeFacts, inputs: Inputs) -> None:
    status, kind, via = inputs["status"], inputs["kind"], inputs["via"]
    server = h.server
    server.require_header("Authorization", TOKEN_ONE, status=status)
    tool(server, "tool", kind)
    await h.connect(adapter, {"Authorization": TOKEN_ONE})
    facts_: dict[str, Any] = {"status": status, "kind": kind, "via": via}
    await calls_first(h, adapter, inputs["calls_before"], "before any refusal", facts_)
    mark = len(server.journal)
    if via == "fault":
        server.inject(faults.HttpStatus(status, headers={"WWW-Authenticate": "Bearer"}), tool="tool")
    else:
        server.rotate_header("Authorization", TOKEN_TWO)
    outcome = await adapter.call("tool", {})
    facts_["outcome"] = outcome
    sent = server.journal.records[mark:]
    refused = next((r for r in sent if r.status == status), None)
    if refused is None:
        raise h.fail(f"the call met no HTTP {status}: the bridge sent no request for it", **facts_)
    again = [
        r
        for r in sent
        if r.seq > refused.seq and r.rpc_method in _AUTH_WORK and r.headers.get("authorization") == TOKEN_ONE
    ]
    if again:
        listed = ", ".join(f"#{r.seq} {r.rpc_method}" for r in again)
        raise h.fail(
            f"after HTTP {status} the bridge re-attempted the work {len(again)} times with the refused credential "
            f"({listed})",
            **facts_,
        )
    if outcome.kind != "auth_error":
        raise h.fail(f"HTTP {status} surfaced as {outcome.kind}, not auth_error", **facts_)
    if via == "fault":
        server.rotate_header("Authorization", TOKEN_TWO)
    adapter.set_headers({"Authorization": TOKEN_TWO})
    mark = len(server.journal)
    outcome = await adapter.call("tool", {})
    stale = [r for r in server.journal.records[mark:] if r.headers.get("authorization") != TOKEN_TWO]
    if stale:
        listed = ", ".join(f"#{r.seq} {r.rpc_method or r.http_method}" for r in stale)
        raise h.fail(f"after the rotation the bridge sent stale credentials ({listed})", **facts_)
    if outcome.kind != "ok":
        raise h.fail("the next call with fresh credentials failed", **facts_, next_outcome=outcome)


PROPERTY = Property(
    "P4",
    "401/403 are never retried; the next call sends fresh credentials",
    "auth_refusals_are_final",
    "reads, idempotent writes and writes; a 401 or 403 by a fault or by a credential rotation",
    _strategies,
    _cases,
    _labels,
    _check,
    guarantee="401/403 are never retried; the next call sends fresh credentials.",
    breaks=(
        "re-sending the work (`initialize`, `tools/list`, `tools/call`) with the refused credential; keeping a "
        "stale token after a rotation; reporting a 401 as something else"
    ),
)
