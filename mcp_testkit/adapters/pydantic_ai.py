"""pydantic-ai's `MCPToolset` as a bridge (`pip install 'mcp-bridge-testkit[pydantic-ai]'`).

Session model: persistent, inherited from the fastmcp `Client` the toolset is built on (default
mode "auto": `server/discover`, then `initialize` on an error). The toolset is entered at connect
and holds that session until close; a lost session is not replaced, and no new session follows a 404.

Retries: none at the transport (`retry = 0`). Its answer to a failure is `ModelRetry`, which asks
the model to call the tool again. The listing is fastmcp's (`page_limit = 250`; a repeated cursor
stops the walk with a warning, keeping the tools read so far).

Errors to outcomes: the toolset's default `tool_error_behavior='retry'` turns an `isError` result
and every MCP error (a JSON-RPC error, but also the `MCPError` fastmcp raises for a lost connection
or an HTTP failure) into `ModelRetry`: what the application sees is a tool error that invites a
resend, so the adapter reports `tool_error` with the retry message. Any other exception is sorted by
`SdkErrorClassifier`. Calls take the path an agent's call takes for a tool without an app UI
(`direct_call_tool`); an `ok` result renders as the model reads it: the tool's text, which cites each file
(image, audio, blob) as "See file <id>.", then a `[file <id>: <media type>]` line per file the model gets
beside it (`ToolReturnPart.model_response_str_and_user_content()`).

Tested with pydantic-ai-slim 2.68.0 (fastmcp-slim 4.2.3, mcp 2.3.0).
"""

from __future__ import annotations

import contextlib
from typing import Any, ClassVar

from mcp_testkit.adapters._hosted import HostedBridgeAdapter
from mcp_testkit.adapters._outcome import Outcome
from mcp_testkit.adapters.fastmcp import PAGE_LIMIT

__all__ = ["PydanticAiToolsetAdapter"]


class PydanticAiToolsetAdapter(HostedBridgeAdapter):
    """pydantic-ai's `MCPToolset` on a URL, as an agent uses it (see the module docstring)."""

    name: ClassVar[str] = "pydantic-ai"
    concurrency = 16
    """The toolset's calls share one fastmcp `Client` session (answers matched by request id) and take no lock: an
    agent runs a model's parallel tool calls at once. No limit: the contract's most, 16."""

    def __init__(self, *, transport: Any = None, timeout_s: float | None = 1.0) -> None:
        super().__init__(transport=transport, timeout_s=timeout_s)
        self.page_limit = PAGE_LIMIT
        self._toolset: Any = None
        # `MCPToolset(init_timeout=...)` is fastmcp's `Client(init_timeout=...)`, bounding the negotiation
        # (pydantic_ai/mcp.py: "Timeout in seconds for the initial connection and `initialize` handshake"; 5 s by
        # default, the call timeout here), then one `tools/list` per page under `read_timeout`: two waits for the
        # one-page listing of P11's connects.
        self.connect_timeout_s = 2 * self.wait_s

    async def open(self, stack: contextlib.AsyncExitStack, url: str) -> list[str]:
        from pydantic_ai.mcp import MCPToolset

        http = await stack.enter_async_context(self.http_client(follow_redirects=True))
        toolset = MCPToolset(url, http_client=http, read_timeout=self.wait_s, init_timeout=self.wait_s)
        self._toolset = await stack.enter_async_context(toolset)
        return [tool.name for tool in await self._toolset.list_tools()]

    async def invoke(self, tool: str, arguments: dict[str, Any]) -> Outcome:
        from pydantic_ai import messages
        from pydantic_ai.exceptions import ModelRetry

        try:
            value = await self._toolset.direct_call_tool(tool, arguments)
        except ModelRetry as exc:
            return Outcome.tool_error(exc, text=exc.message)
        # Files (image, audio, blobs) go to the model beside the tool's text, which cites them as "See file <id>.".
        text, files = messages.ToolReturnPart(tool_name=tool, content=value).model_response_str_and_user_content()
        shown = [f"[file {item.identifier}: {item.media_type}]" for item in files if not isinstance(item, str)]
        return Outcome.ok("\n".join([text, *shown]))
