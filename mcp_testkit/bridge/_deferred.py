"""Deferred servers: tools kept out of the pool's list, found by ``search_mcp_tools``, run by ``call_mcp_tool``."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from mcp_testkit.bridge._tool import BridgeTool

if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = ["CALL_TOOL", "SEARCH_TOOL", "DeferredTools"]

SEARCH_TOOL = "search_mcp_tools"
CALL_TOOL = "call_mcp_tool"
DEFAULT_LIMIT = 10

_SEARCH_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "description": "Words to look for in the tools' names and descriptions."},
        "limit": {"type": "integer", "minimum": 1, "description": f"Most tools to return (default {DEFAULT_LIMIT})."},
    },
    "required": ["query"],
}
_CALL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": f"The tool's exact name, as {SEARCH_TOOL} gives it."},
        "arguments": {"type": "object", "description": "The tool's arguments, matching its inputSchema."},
    },
    "required": ["name"],
}


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


class DeferredTools:
    """The tools of the pool's deferred servers, by their ``server.tool`` names, in configuration order."""

    def __init__(self, tools: Iterable[BridgeTool]) -> None:
        self._tools = {tool.name: tool for tool in tools}
        self._pair = self._make_pair() if self._tools else []

    def __bool__(self) -> bool:
        return bool(self._tools)

    def tools(self, server: str | None = None) -> list[BridgeTool]:
        """The deferred tools, or one server's."""
        return [tool for tool in self._tools.values() if server is None or tool.server == server]

    def pool_tools(self) -> list[BridgeTool]:
        """The shared pair standing in for every deferred tool (none without deferred tools)."""
        return list(self._pair)

    def _make_pair(self) -> list[BridgeTool]:
        """``search_mcp_tools`` and ``call_mcp_tool``; the search's description names every deferred tool."""
        names = ", ".join(self._tools)
        return [
            BridgeTool(
                name=SEARCH_TOOL,
                server="",
                bare_name=SEARCH_TOOL,
                description=(
                    "Finds MCP tools by keyword and gives each one's name, description and inputSchema. "
                    f"Tools found this way: {names}."
                ),
                input_schema=_SEARCH_SCHEMA,
                kind="read",
                classified_by="pool",
            ),
            BridgeTool(
                name=CALL_TOOL,
                server="",
                bare_name=CALL_TOOL,
                description=f"Calls an MCP tool found with {SEARCH_TOOL}, by its exact name, with its arguments.",
                input_schema=_CALL_SCHEMA,
                kind="write",
                classified_by="pool",
            ),
        ]

    def search(self, arguments: Mapping[str, Any]) -> str:
        """The tools whose name or description hold the most query words, best first, as compact JSON."""
        query = arguments.get("query")
        if not isinstance(query, str):
            raise ValueError(f"{SEARCH_TOOL} takes a 'query' string")
        limit = arguments.get("limit", DEFAULT_LIMIT)
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise ValueError(f"{SEARCH_TOOL}: 'limit' must be a positive integer, not {limit!r}")
        words = set(_words(query))
        scored: list[tuple[int, int, BridgeTool]] = []
        for index, tool in enumerate(self._tools.values()):
            name, description = " ".join(_words(tool.name)), " ".join(_words(tool.description))
            score = sum(2 * (word in name) + (word in description) for word in words)
            if score or not words:
                scored.append((-score, index, tool))
        found = [tool for _, _, tool in sorted(scored)[:limit]]
        return json.dumps(
            [{"name": t.name, "description": t.description, "inputSchema": dict(t.input_schema)} for t in found],
            separators=(",", ":"),
            sort_keys=True,
            ensure_ascii=False,
        )

    def resolve(self, arguments: Mapping[str, Any]) -> tuple[BridgeTool, dict[str, Any]]:
        """The deferred tool a ``call_mcp_tool`` call names, and the arguments it passes on to it.

        An exact ``server.tool`` name, or a bare name only one deferred server offers; a bare name two
        servers offer is refused, naming both, rather than guessed.
        """
        name = arguments.get("name")
        if not isinstance(name, str) or not name:
            raise ValueError(f"{CALL_TOOL} takes the tool's 'name' as a non-empty string")
        passed = arguments.get("arguments")
        if passed is None:
            passed = {}
        if not isinstance(passed, Mapping):
            raise ValueError(f"{CALL_TOOL}: 'arguments' must be an object, not {type(passed).__name__}")
        unexpected = sorted(set(arguments) - {"name", "arguments"})
        if unexpected:
            raise ValueError(f"{CALL_TOOL} takes 'name' and 'arguments' only, not {', '.join(map(repr, unexpected))}")
        tool = self._tools.get(name)
        if tool is None:
            matches = [t for t in self._tools.values() if t.bare_name == name]
            if len(matches) > 1:
                candidates = ", ".join(t.name for t in matches)
                raise KeyError(f"deferred tool name {name!r} is ambiguous ({candidates}); call it by its full name")
            if not matches:
                raise KeyError(f"no deferred tool named {name!r}; {SEARCH_TOOL} finds them")
            tool = matches[0]
        return tool, dict(passed)
