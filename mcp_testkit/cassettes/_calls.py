"""A recorded call: one `tools/call` of a cassette and its answer, the unit a replay matches and answers with."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["RecordedCall"]


@dataclass(frozen=True)
class RecordedCall:
    """One recorded `tools/call` and its answer: what matchers choose from and near-miss messages show."""

    seq: int
    tool: str
    arguments: Mapping[str, Any]
    result: Mapping[str, Any] | None
    """The `CallToolResult` in wire form, or None when the server answered a JSON-RPC error."""
    error: Mapping[str, Any] | None
    era: str
    events: Sequence[Any] = ()
    inputs: Sequence[Mapping[str, Any]] = ()
    """The input requests the tool made and the answers it got (`Exchange.inputs`), asked again on replay."""

    def describe(self) -> str:
        """`#seq tool({"arg": ...})`, as near-miss messages list it."""
        return f"#{self.seq} {self.tool}({json.dumps(self.arguments, sort_keys=True)})"
