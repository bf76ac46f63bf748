"""P12: a result over the bridge's declared limit is its own error naming the size, not a session, auth or connection
error, and the next call on the same bridge works; without a declared limit, a large result still ends within P11's
bounds."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from hypothesis import strategies as st

from mcp_testkit import faults
from mcp_testkit.contract._properties._example_steps import place, tool
from mcp_testkit.contract._properties._fault_sets import fault_label
from mcp_testkit.contract._properties._property import Inputs, Property
from mcp_testkit.contract._properties.p11_bounded_waits import MARGIN, SLACK_S

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy

    from mcp_testkit.adapters import BridgeAdapter, Outcome
    from mcp_testkit.contract._harness import BridgeFacts, ContractHarness

__all__ = ["PROPERTY"]

HUGE_MAX = 64 * 1024 * 1024
UNDECLARED_SIZE = 8 * 1024 * 1024
"""The result sent to a bridge that declares no limit: large enough to trouble one, small enough to be quick."""
ENVELOPE = 4096
"""A limit counts the answer's bytes, the JSON around the text included: a text this close under it may go
either way, so only whether the next call works is judged there."""
_NUMBER = re.compile(r"\d[\d_,]*")
_UNITS = re.compile(r"\d+(\.\d+)? ?[KMG]i?B")


def _needs(facts: BridgeFacts) -> str | None:
    if facts.max_result_bytes is not None and facts.max_result_bytes >= HUGE_MAX:
        return f"the declared max_result_bytes ({facts.max_result_bytes}) is not below HugeResult's 64 MiB"
    return None


def _over(facts: BridgeFacts, extra: int = 1) -> int:
    """A size over the limit (by `extra` bytes), or the undeclared case's size."""
    if facts.max_result_bytes is None:
        return UNDECLARED_SIZE
    return min(HUGE_MAX, facts.max_result_bytes + extra)


def _cases(facts: BridgeFacts) -> list[Inputs]:
    cases: list[Inputs] = []
    for sse in (False, True):
        for kind in ("read", "write"):
            cases.append({"size": _over(facts, 1024), "sse": sse, "kind": kind})
    limit = facts.max_result_bytes
    if limit is not None:
        for sse in (False, True):
            cases.append({"size": max(0, limit - 2 * ENVELOPE), "sse": sse, "kind": "read"})
        cases.append({"size": limit + 1, "sse": False, "kind": "read"})  # one byte over
        cases.append({"size": min(HUGE_MAX, 4 * limit), "sse": True, "kind": "write"})
        cases.append({"size": min(HUGE_MAX, 4 * limit), "sse": False, "kind": "read"})
    return cases


def _strategies(facts: BridgeFacts) -> dict[str, SearchStrategy[Any]]:
    limit = facts.max_result_bytes
    sizes = st.integers(limit // 4, min(HUGE_MAX, 2 * limit)) if limit is not None else st.just(UNDECLARED_SIZE)
    return {"size": sizes, "sse": st.booleans(), "kind": st.sampled_from(["read", "write"])}


def _labels(inputs: Inputs) -> list[str]:
    return [fault_label(faults.HugeResult(inputs["size"])), inputs["kind"], "SSE" if inputs["sse"] else "JSON"]


def _names_size(outcome: Outcome, limit: int) -> bool:
    """Whether the outcome's text names a size at or over the limit (the answer's, or the limit itself)."""
    text = outcome.text or ""
    numbers = [int(re.sub(r"[_,]", "", found)) for found in _NUMBER.findall(text)]
    return any(number >= limit for number in numbers) or _UNITS.search(text) is not None


async def _check(h: ContractHarness, adapter: BridgeAdapter, facts: BridgeFacts, inputs: Inputs) -> None:
    import anyio

    server = h.server
    size, kind = inputs["size"], inputs["kind"]
    limit = facts.max_result_bytes
    tool(server, "big", kind, returns="small")
    await h.connect(adapter)
    place(server, faults.HugeResult(size, sse=inputs["sse"]), method="tools/call", tool="big")
    outcome: Outcome | None = None
    bound_s = (1 + facts.retry) * facts.wait_s
    started = anyio.current_time()
    if limit is None:
        with anyio.move_on_after(MARGIN * bound_s + SLACK_S):
            outcome = await adapter.call("big", {})
    else:
        outcome = await adapter.call("big", {})
    facts_ = {"result size": f"{size} bytes", "declared max_result_bytes": limit, "outcome": outcome}
    if outcome is None:
        raise h.fail(
            f"a call answered with {size} bytes did not end within P11's bounds ({bound_s:g} s plus a margin)",
            **facts_,
            took=f"{anyio.current_time() - started:.2f} s",
        )
    if limit is not None and size > limit:
        if outcome.kind != "tool_error":
            what = f"a result over the declared limit was reported as {outcome.kind}"
            raise h.fail(f"{what}, not as its own error", **facts_)
        if not _names_size(outcome, limit):
            raise h.fail("the error for a result over the declared limit does not name the size", **facts_)
    elif limit is not None and size + ENVELOPE <= limit and outcome.kind != "ok":
        raise h.fail("a result under the declared limit was refused", **facts_)
    elif outcome.kind in ("auth_error", "approval_required"):
        raise h.fail(f"a large result was reported as {outcome.kind}", **facts_)
    after = await adapter.call("big", {})
    if after.kind != "ok":
        raise h.fail("the call after a large result failed", **facts_, after=after)


PROPERTY = Property(
    "P12",
    "A result over the declared limit is its own error, and the next call works",
    "large_results_are_refused_cleanly",
    "`HugeResult` over, under and (with no declared limit) at 8 MiB; JSON and SSE answers; reads and writes",
    _strategies,
    _cases,
    _labels,
    _check,
    needs=_needs,
    guarantee=(
        "A result over the bridge's declared `max_result_bytes` is a `tool_error` naming the size, never a session, "
        "auth or connection error, and the next call on the same bridge works; without a declared limit a large "
        "result still ends within P11's bounds."
    ),
    breaks=(
        "reporting a large result as \"session expired\" or an auth error; a crash; a session left unusable; "
        "refusing a result under the limit"
    ),
)
