"""A JSON scenario's fault rules, in the form `Rule.to_json()` writes: read as `inject` takes its keywords, and
refused where the server (its eras) or the transport served (stdio or HTTP) could never apply them."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from mcp_testkit import faults
from mcp_testkit.scenario._document import ScenarioError, join, validate

if TYPE_CHECKING:
    from mcp_testkit.server import TestMcpServer

__all__ = ["add_rules", "check_transport", "parse_rules", "rule_of", "transport_problem"]


def add_rules(server: TestMcpServer, data: Any, *, stdio: bool | None = None) -> list[faults.Rule]:
    """Add the fault rule (or list of rules) a JSON document describes; all are checked before any is added.

    With `stdio` True or False, a fault that means nothing on that transport is refused too.
    """
    parsed = []
    for at, rule in parse_rules(data, stdio=stdio):
        try:
            server.check_rule(rule)
        except ValueError as exc:
            raise ScenarioError(f"{at or '(rule)'}: {exc}") from None
        parsed.append(rule)
    return [server.add_rule(rule) for rule in parsed]


def parse_rules(data: Any, *, stdio: bool | None = None) -> list[tuple[str, faults.Rule]]:
    """The fault rule (or list of rules) a JSON document describes, each with where it stands in `data`; with
    `stdio` True or False, a fault that means nothing on that transport is refused (ScenarioError naming it)."""
    items = data if isinstance(data, list) else [data]
    parsed = []
    for index, item in enumerate(items):
        at = str(index) if isinstance(data, list) else ""
        validate(item, "rule", at=at)
        rule = rule_of(item, at)
        if stdio is not None:
            problem = transport_problem(rule.fault, stdio=stdio)
            if problem is not None:
                raise ScenarioError(f"{join(at, 'fault')}: {problem}")
        parsed.append((at, rule))
    return parsed


def transport_problem(fault: faults.Fault, *, stdio: bool) -> str | None:
    """Why `fault` means nothing over stdio (or over HTTP), or None when it applies there."""
    if stdio:
        from mcp_testkit.server.effects import supports_stdio

        if not supports_stdio(fault):
            return f"{type(fault).__name__} means nothing over stdio (it is an HTTP fault)"
    elif fault.stdio_only:
        return f"{type(fault).__name__} means something only over stdio (mcp-testkit serve --stdio)"
    return None


def check_transport(rules: Iterable[faults.Rule], *, stdio: bool) -> None:
    """ScenarioError naming the first rule whose fault means nothing on the transport served."""
    for rule in rules:
        problem = transport_problem(rule.fault, stdio=stdio)
        if problem is not None:
            raise ScenarioError(f"fault rule {rule.fault!r}: {problem}")


def rule_of(data: Mapping[str, Any], where: str) -> faults.Rule:
    """The rule a JSON rule describes, so that `Rule.to_json()` round-trips.

    Its fields are the keywords of `inject` (`faults.placed_rule`): a field given (even null) is taken as is, as
    `Rule.from_json` reads it; a field left out takes the fault's default, as `server.inject` does.
    """
    try:
        fault = faults.from_json(data["fault"])
    except ValueError as exc:
        raise ScenarioError(f"{join(where, 'fault')}: {exc}") from None
    try:
        rule = faults.placed_rule(fault, **{key: value for key, value in data.items() if key != "fault"})
        if "page" in data:
            rule = dataclasses.replace(rule, page=data["page"])
    except ValueError as exc:
        raise ScenarioError(f"{where or '(rule)'}: {exc}") from None
    return rule
