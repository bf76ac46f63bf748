"""`Property`: what one resilience property is made of (its inputs, declared cases, check and the words of
its row in the docs' table), the same shape for each of the property modules beside this one."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mcp_testkit._wire.eras import ERAS

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy

    from mcp_testkit.adapters import BridgeAdapter
    from mcp_testkit.contract._harness import BridgeFacts, ContractHarness

__all__ = ["Check", "Inputs", "Property"]

Inputs = dict[str, Any]
Check = Callable[["ContractHarness", "BridgeAdapter", "BridgeFacts", Inputs], Awaitable[None]]


@dataclass(frozen=True)
class Property:
    """A resilience property: its id and title, what it covers, its inputs and how to check one example.

    `cases(facts)` are the declared examples, run first and in order (simplest first); `strategies(facts)`
    the keyword strategies of the random draws after them; `labels(inputs)` the fault classes and call
    kinds an example exercises, counted in the report's coverage line. `facts.era` is the era being
    checked; `eras` the eras the property applies to (elsewhere its verdict is "not applicable").
    `guarantee`, `covers` and `breaks` are the words of its row in the table of docs/contract.md.
    """

    property_id: str
    title: str
    name: str
    covers: str
    strategies: Callable[[BridgeFacts], dict[str, SearchStrategy[Any]]]
    cases: Callable[[BridgeFacts], list[Inputs]]
    labels: Callable[[Inputs], list[str]]
    check: Check
    eras: tuple[str, ...] = ERAS
    requires: str | None = None
    """The adapter capability the property needs ("approvals", "tool_cache"); without it, n/a."""
    hang_fails: bool = False
    """Whether a wait without end is this property's failure (a property about bounded waits); otherwise a hang is
    the verdict's own status, "hung", and says nothing about what the property promises."""
    needs: Callable[[BridgeFacts], str | None] | None = None
    """What the property needs the adapter to declare (a timeout, a size limit): the reason it does not apply
    when a declaration is missing, None when it applies."""
    own_era: bool = False
    """Whether the bridge is made to negotiate its era by itself (its factory called without `era=`, whatever the
    adapter's `eras`): the property judges the negotiation (P18), not one era spoken as told."""
    held_as: Callable[[BridgeFacts], str | None] | None = None
    """What a pass rests on besides the examples: a declaration of the adapter that the property takes at its word
    (P19's per-call sessions), said with the verdict as `holds (per-call sessions declared)`; None: the examples."""
    guarantee: str = ""
    """What the property promises, as the table of docs/contract.md states it."""
    breaks: str = ""
    """What a bridge does that breaks it, as the table of docs/contract.md states it."""
