"""The trace a verdict carries: what went wrong and the facts of the example, the faults that fired, the requests
the bridge sent (the first 40 and last 20 of a long run) and the log records captured while it ran."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from mcp_testkit.contract._errors import ContractViolation

if TYPE_CHECKING:
    from mcp_testkit.contract._log_capture import LogCapture
    from mcp_testkit.server import TestMcpServer

__all__ = ["handler_runs", "violation"]

_TRACE_HEAD = 40
_TRACE_TAIL = 20
_FAULTS_SHOWN = 10


def violation(server: TestMcpServer, logs: LogCapture, what: str, facts: Mapping[str, Any]) -> ContractViolation:
    """A violation whose message is `what`, the facts of the example, the journal and the captured logs."""
    lines = [what]
    lines += [f"  {name}: {value}" for name, value in facts.items()]
    fired = [f"#{r.seq} {r.fault!r}" for r in server.journal if r.fault is not None]
    if len(fired) > _FAULTS_SHOWN:
        fired = [*fired[:_FAULTS_SHOWN], f"... {len(fired) - _FAULTS_SHOWN} more"]
    lines.append(f"  faults fired: {', '.join(fired) if fired else 'none'}")
    lines.append("  requests the bridge sent:")
    lines += [f"    {line}" for line in _requests(server)]
    exchanges = list(server.journal.auth)
    if exchanges:  # a protected server's (P15): what the bridge asked its authorization server
        lines.append("  exchanges with the authorization server:")
        lines += [f"    {e.summary()}" for e in exchanges[-_TRACE_TAIL:]]
    shown = logs.lines()
    if shown:
        lines.append(f"  log records during the example (last {len(shown)}):")
        lines += [f"    {line}" for line in shown]
    return ContractViolation("\n".join(lines))


def handler_runs(server: TestMcpServer) -> str:
    """How often each tool's handler ran in the example so far: `write 1, read 0`, or `none`."""
    runs = {name: server.executions(name) for name in server.tools}
    return ", ".join(f"{name} {count}" for name, count in runs.items() if count) or "none"


def _requests(server: TestMcpServer) -> list[str]:
    records = server.journal.records
    if not records:
        return ["(none)"]
    if len(records) <= _TRACE_HEAD + _TRACE_TAIL:
        return [r.summary() for r in records]
    skipped = len(records) - _TRACE_HEAD - _TRACE_TAIL
    return [
        *(r.summary() for r in records[:_TRACE_HEAD]),
        f"... {skipped} more requests ...",
        *(r.summary() for r in records[-_TRACE_TAIL:]),
    ]
