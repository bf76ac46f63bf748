"""llama-index's `BasicMCPClient` and `McpToolSpec` as a bridge (`pip install 'mcp-bridge-testkit[llama-index]'`).

Session model: per call. `BasicMCPClient` opens a session (`initialize`, then the request) for
every `list_tools` and every `call_tool`, and ends it after; so no session lives between calls,
and a session lost between them cannot hurt it.

Retries: none (`retry = 0`). The listing is one `tools/list` request: `McpToolSpec.fetch_tools`
reads the first page and ignores `nextCursor`, so a paged catalogue loads partly, silently.

Errors to outcomes: calls take the agent's path, `FunctionTool.acall` on the tools of
`McpToolSpec.to_tool_list_async()`. Its `ToolOutput` wraps the `CallToolResult` as text without
looking at `isError`, so an error result comes back as an ordinary output (`ok`, its text
`str(result)`, what the agent reads). What it raises is sorted by `SdkErrorClassifier` from the error
alone: a 401, a 403 and a 500 all reach it as the SDK's one `MCPError(-32603, "Server returned an
error response")`, an `outcome_unknown` at a call (so it fails P4); a 404 or a -32600 is
`connection_error`; another JSON-RPC error answering the call is `tool_error`.

Tested with llama-index-tools-mcp 0.6.0 (llama-index-core 0.14.25, mcp 2.3.0).
"""

from __future__ import annotations

import contextlib
from typing import Any, ClassVar

from mcp_testkit.adapters._hosted import HostedBridgeAdapter
from mcp_testkit.adapters._outcome import Outcome, SessionMode

__all__ = ["ToolSpecAdapter"]


class ToolSpecAdapter(HostedBridgeAdapter):
    """`McpToolSpec(BasicMCPClient(url))`, its tools called as an agent calls them (see the module docstring)."""

    name: ClassVar[str] = "llama-index"
    sessions: SessionMode = "per_call"

    concurrency = 16
    """Each call opens a session of its own, so nothing limits calls at once; P13 does not apply all the same (it
    checks calls that share a session)."""

    def __init__(self, *, transport: Any = None, timeout_s: float | None = 1.0) -> None:
        super().__init__(transport=transport, timeout_s=timeout_s)
        self._tools_by_name: dict[str, Any] = {}
        # A connect is a new session's `initialize` and one `tools/list` (`McpToolSpec.fetch_tools` reads the first
        # page only), each under the session's `read_timeout_seconds=float(timeout)` (llama_index/tools/mcp/
        # client.py), `timeout` being whole seconds (see `open`).
        self.connect_timeout_s = 2.0 * max(1, round(self.wait_s))

    async def open(self, stack: contextlib.AsyncExitStack, url: str) -> list[str]:
        from llama_index.tools.mcp import BasicMCPClient, McpToolSpec

        http = await stack.enter_async_context(self.http_client(follow_redirects=True))
        # BasicMCPClient takes whole seconds; the session's read timeout is float(timeout).
        client = BasicMCPClient(url, timeout=max(1, round(self.wait_s)), http_client=http)
        tools = await McpToolSpec(client).to_tool_list_async()
        self._tools_by_name = {tool.metadata.name: tool for tool in tools}
        return [tool.metadata.name for tool in tools]

    async def invoke(self, tool: str, arguments: dict[str, Any]) -> Outcome:
        function = self._tools_by_name.get(tool)
        if function is None:
            return Outcome.tool_error(LookupError(f"the bridge did not list a tool named {tool!r}"))
        output = await function.acall(**arguments)
        if getattr(output, "is_error", False):
            return Outcome.tool_error(RuntimeError("the tool output is an error"), text=str(output.content))
        return Outcome.ok(str(output.content))
