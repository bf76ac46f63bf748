"""The ledger after close: what the server's handlers ran for each call an example made, counted once the adapter
has closed, so that a write a bridge keeps and resends when it closes (an outbox flushed at shutdown) counts too."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp_testkit.adapters import Outcome
    from mcp_testkit.server import TestMcpServer

__all__ = ["CallLedger", "LedgerBreach"]


@dataclass(frozen=True)
class _Call:
    tool: str
    arguments: str
    """The arguments as canonical JSON: calls with equal arguments cannot be told apart on the server."""
    outcome: Outcome
    runs_on_return: int
    """The handler runs of calls of this tool with these arguments when this call returned."""


@dataclass(frozen=True)
class LedgerBreach:
    """A write whose handler runs, counted after close, break "at most once, exactly once when reported ok"."""

    what: str
    facts: dict[str, Any]


def _is_write(server: TestMcpServer, tool: str) -> bool:
    scripted = server.tools.get(tool)
    if scripted is None:
        return False
    hints = scripted.definition.get("annotations") or {}
    return not hints.get("readOnlyHint") and not hints.get("idempotentHint")


def _key(arguments: Any) -> str:
    try:
        return json.dumps(arguments, sort_keys=True, default=repr)
    except (TypeError, ValueError):
        return repr(arguments)


def _runs(server: TestMcpServer, tool: str, arguments: str) -> int:
    return sum(1 for r in server.calls(tool) if r.executed and _key(r.arguments or {}) == arguments)


class CallLedger:
    """The write calls of one example and their outcomes, checked against the server's handler runs after close."""

    def __init__(self) -> None:
        self.calls: list[_Call] = []

    def clear(self) -> None:
        self.calls.clear()

    def called(self, server: TestMcpServer, tool: str, arguments: Any, outcome: Outcome) -> None:
        """Note a call the example made through the adapter, if its tool is a write on the server right now."""
        if _is_write(server, tool):
            key = _key(dict(arguments))
            self.calls.append(_Call(tool, key, outcome, _runs(server, tool, key)))

    def breach(self, server: TestMcpServer) -> LedgerBreach | None:
        """The first write that ran more often than it was called, or that was reported ok and never ran, counting
        every handler run up to now (after the adapter's close): None when the ledger is right."""
        groups: dict[tuple[str, str], list[_Call]] = {}
        for call in self.calls:
            groups.setdefault((call.tool, call.arguments), []).append(call)
        for (tool, arguments), calls in groups.items():
            runs = _runs(server, tool, arguments)
            ok = sum(1 for call in calls if call.outcome.kind == "ok")
            on_return = max(call.runs_on_return for call in calls)
            facts = {
                "write": f"{tool}({arguments})",
                "calls": len(calls),
                "outcomes": ", ".join(call.outcome.kind for call in calls),
                "handler runs when the last call returned": on_return,
                "handler runs after close()": runs,
            }
            if runs > len(calls):
                late = " (the extra runs after the call returned: sent later, e.g. when the bridge closed)"
                return LedgerBreach(
                    f"a write ran {runs} times for {len(calls)} call{'s' * (len(calls) != 1)}"
                    + (late if runs > on_return else ""),
                    facts,
                )
            if runs < ok:
                return LedgerBreach(
                    f"the bridge reported ok {ok} times for a write that ran {runs} times, counted after close()",
                    facts,
                )
        return None
