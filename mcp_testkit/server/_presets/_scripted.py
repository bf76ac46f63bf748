"""What a preset scripts on a server: the scripting verbs of `TestMcpServer` it calls, named here so that the
presets, a layer below the facade that applies them, never import it."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from mcp_testkit.journal import Record
    from mcp_testkit.resources import ScriptedPrompt, ScriptedResource, ScriptedTemplate
    from mcp_testkit.tools import ScriptedTool

__all__ = ["ScriptedServer"]


class ScriptedServer(Protocol):
    """The verbs of `TestMcpServer` a preset calls (each takes its keywords, as the server documents them)."""

    @property
    def tool(self) -> Callable[..., ScriptedTool]: ...
    @property
    def resource(self) -> Callable[..., ScriptedResource]: ...
    @property
    def resource_template(self) -> Callable[..., ScriptedTemplate]: ...
    @property
    def prompt(self) -> Callable[..., ScriptedPrompt]: ...
    @property
    def complete(self) -> Callable[..., None]: ...
    @property
    def response_mode(self) -> str | Callable[[Record], str]: ...
    @response_mode.setter
    def response_mode(self, value: str | Callable[[Record], str]) -> None: ...
