"""Everything a `TestMcpServer` knows at one moment; `reset()` swaps in a fresh one."""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mcp_testkit.journal import Journal
from mcp_testkit.server._sessions import SessionTable

if TYPE_CHECKING:
    from mcp_testkit.tools import ScriptedTool

__all__ = ["RequiredHeader", "ServerState"]

ResponseMode = Any  # "json" | "sse" | Callable[[Record], str]


@dataclass(frozen=True)
class RequiredHeader:
    """A header every request must carry with exactly this value."""

    name: str
    value: str
    status: int = 401
    rejected: tuple[str, ...] = ()
    """Earlier values that were rotated out; answered like any wrong value."""


@dataclass(eq=False)
class ServerState:
    """The tools, sessions, required headers, journal, faults and ledger of one server."""

    name: str
    version: str
    path: str
    page_size: int | None
    response_mode: ResponseMode
    get_stream: bool
    allow_delete: bool
    allowed_hosts: frozenset[str]
    tools: dict[str, ScriptedTool] = field(default_factory=dict)
    required: dict[str, RequiredHeader] = field(default_factory=dict)
    sessions: SessionTable = field(default_factory=SessionTable)
    journal: Journal = field(default_factory=Journal)
    executions: Counter[str] = field(default_factory=Counter)
    errors: list[BaseException] = field(default_factory=list)
    event_ids: Callable[[], int] = field(default_factory=lambda: itertools.count(1).__next__)
    plan: Any = None
    _definitions: list[dict[str, Any]] | None = None

    def definitions(self) -> list[dict[str, Any]]:
        """The catalogue in wire form, in the order tools were added."""
        if self._definitions is None:
            self._definitions = [tool.definition for tool in self.tools.values()]
        return self._definitions

    def catalogue_changed(self) -> None:
        self._definitions = None

    def redacted_headers(self) -> frozenset[str]:
        return frozenset(self.required)
