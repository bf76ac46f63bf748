"""The steps the properties' checks share: a tool of a call kind, calls before the fault, a fault placed in
its era, the credentials of P4 and P9, and the draws of P5 and P5s."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from hypothesis import strategies as st

from mcp_testkit.contract._properties._fault_sets import CALL_KINDS

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy

    from mcp_testkit import faults
    from mcp_testkit.adapters import BridgeAdapter
    from mcp_testkit.contract._harness import ContractHarness

__all__ = ["TOKEN_ONE", "TOKEN_TWO", "calls_after_loss", "calls_first", "inject", "place", "tool"]

TOKEN_ONE = "Bearer contract-one"
TOKEN_TWO = "Bearer contract-two"


def tool(server: Any, name: str, kind: str, returns: Any = "ok") -> None:
    """A tool of call kind `kind` (read, idempotent or write) named `name`."""
    server.tool(
        name,
        description=f"a {kind}",
        read_only=True if kind == "read" else None,
        idempotent=True if kind == "idempotent" else None,
        returns=returns,
    )


async def calls_first(h: ContractHarness, adapter: BridgeAdapter, count: int, before: str, facts_: Any) -> None:
    """`count` calls of "tool" before the fault, each of which must be `ok`, or the example fails saying which."""
    for number in range(1, count + 1):
        outcome = await adapter.call("tool", {})
        if outcome.kind != "ok":
            raise h.fail(f"call {number}, {before}, failed", **facts_)


def place(server: Any, fault: faults.Fault, **rule: Any) -> None:
    """Inject `fault`; a fault of one era only hits requests of that era (a bridge may change eras mid-example)."""
    era = fault.eras[0] if len(fault.eras) == 1 else None
    server.inject(fault, **rule, **({"era": era} if era is not None else {}))


def inject(server: Any, rules: Iterable[faults.Rule]) -> None:
    """Place every rule of a drawn schedule."""
    for rule in rules:
        place(server, rule.fault, method=rule.method, tool=rule.tool, nth=rule.nth, times=rule.times)


def calls_after_loss(key: str, ways: Sequence[Any]) -> dict[str, SearchStrategy[Any]]:
    """The draws of P5 and P5s: one way of losing the answer, a call kind, and up to two calls before it."""
    return {key: st.sampled_from(ways), "kind": st.sampled_from(CALL_KINDS), "calls_before": st.integers(0, 2)}
