"""Scripting a `TestMcpServer`'s catalogue: adding tools (built and checked by `ScriptedTool.build`) and taking them
out, each change one swap that open sessions hear of once.

`ToolScripting` is a part of the server: the server's verbs of the same names call it; every method may be called
from any thread while traffic flows.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from mcp_testkit._wire.signatures import keywords_of
from mcp_testkit.tools import ScriptedTool

if TYPE_CHECKING:
    from mcp_testkit.server._current import CurrentState

__all__ = ["ToolScripting"]


class ToolScripting:
    """`tool`, `add_tools` and `remove_tool`, on the server's current state."""

    def __init__(self, current: CurrentState) -> None:
        self._current = current

    @keywords_of(ScriptedTool.build)
    def tool(self, name: str, **options: Any) -> ScriptedTool:
        """Add (or replace) a tool; use the result as a decorator to give it a handler.

        `returns` is its answer to every call; `answers` one answer per call, the last repeating.
        An answer is a str, a dict (structured content), a list of content blocks, a
        `CallToolResult`, a `ToolError`, or a callable taking the arguments (and optionally a
        `ToolContext`) that returns one of those, sync or async. `requires` names client
        capabilities a call needs: a 2026-07-28 call whose `_meta` lacks one is refused with
        400 and -32021 (MissingRequiredClientCapability) before the tool runs. `task`: docs/tasks.md. `scopes` are
        the OAuth scopes a call needs on a server with `auth=`: a token without them gets 403 insufficient_scope
        (docs/auth.md).
        The keywords are `ScriptedTool.build`'s, which checks the definition.
        """
        tool = ScriptedTool.build(name, **options)
        self.add_tools([tool])
        return tool

    def add_tools(self, tools: Iterable[ScriptedTool]) -> None:
        """Put built tools in the catalogue (replacing those of the same names) in one swap: a listing sees all of
        them or none, and open sessions are told once that the list changed."""
        current = self._current
        with current.lock:
            state = current.state
            state.tools.update((tool.name, tool) for tool in tools)
            state.catalogue_changed()

    def remove_tool(self, name: str) -> None:
        """Take a tool out of the catalogue; KeyError naming the tools there are if it is unknown."""
        current = self._current
        with current.lock:
            state = current.state
            if name not in state.tools:
                raise KeyError(f"no tool {name!r}; tools: {', '.join(state.tools) or '(none)'}")
            del state.tools[name]
            state.catalogue_changed()
