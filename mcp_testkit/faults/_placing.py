"""Placing a fault: the rule `inject(fault, ...)` adds, on `TestMcpServer` and `ChaosProxy` alike, and why a front
that speaks only some eras refuses a rule it could never apply.

`placed_rule` holds the keywords of every `inject` (the fronts take its signature, so it is written once) and a JSON
scenario's rule fields are the same keywords.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mcp_testkit.faults._base import Fault
from mcp_testkit.faults._rules import _DEFAULT, Rule, misplaced, rule_for

__all__ = ["OWN_DEFAULT", "era_problem", "placed_rule"]

OWN_DEFAULT: Any = _DEFAULT
"""Marks a keyword of `inject` (`method`, `times`, `era`) left to the fault's own default."""


def placed_rule(
    fault: Fault,
    *,
    method: str | None = OWN_DEFAULT,
    tool: str | None = None,
    name: str | None = None,
    page: int | None = None,
    session_id: str | None = None,
    nth: int = 1,
    times: int | None = OWN_DEFAULT,
    era: str | None = OWN_DEFAULT,
    probability: float = 1.0,
    seed: int | None = None,
) -> Rule:
    """The rule that places `fault` as `inject(fault, ...)` does (`TestMcpServer.inject` says what each keyword
    means), the fault's own defaults filled in where a keyword is left out."""
    return rule_for(
        fault, method=method, tool=tool, name=name, page=page, session_id=session_id, nth=nth, times=times, era=era,
        probability=probability, seed=seed,
    )  # fmt: skip


def era_problem(rule: Rule, eras: Sequence[str], front: str) -> str | None:
    """Why `front` (e.g. "server 'files'"), which speaks `eras`, could never apply `rule`: the rule's era, or every
    era its fault means something in, is not one it speaks; None when it can."""
    if rule.era is not None and rule.era not in eras:
        return f"era={rule.era!r}, but {front} speaks only {', '.join(eras)}"
    if not set(rule.fault.eras) & set(eras):
        return misplaced(rule.fault, eras[0])
    return None
