"""LangChain's in-core MCP adapter, `langchain.mcp.MCPAdapter` (langchain >= 1.4, beta), as a bridge
(`pip install 'mcp-bridge-testkit[fastmcp]' 'langchain[mcp]>=1.4'`).

Not langchain-mcp-adapters (the separate package, run as a driver: it needs mcp<2): `langchain.mcp` is
built on the fastmcp `Client` and mcp 2.x, so it shares a virtualenv with this toolkit.

Session model: persistent. The adapter is entered at connect (it enters its fastmcp `Client`, in
fastmcp's default mode "auto": `server/discover`, then `initialize` on an error) and holds that session
until close; each tool re-enters the same client (fastmcp clients are reentrant), so a call uses the
session the connect opened. No new session follows a 404 (fastmcp's).

Retries: none (`retry = 0`). The listing is `MCPAdapter.list_tools()`, fastmcp's `Client.list_tools()`
(`page_limit = 250`).

Errors to outcomes: calls take the agent's path, `tool.ainvoke` with a tool call, answered by a
`ToolMessage`. An `isError` result comes back as a `ToolMessage` with `status="error"` carrying the
server's content (`tool_error`); a transport failure propagates (langchain/mcp/tools.py: "Transport
failures and unconvertible content propagate instead") and is sorted by `SdkErrorClassifier` from the
error alone: a 401, a 403 and a 500 all reach it as the SDK's one `MCPError(-32603, "Server returned an
error response")`. An `ok` result renders as the `ToolMessage`'s content blocks (without the ids LangChain
gives each block per call) as canonical JSON.

Tested with langchain 1.5.2 (langchain-core 1.8.3, fastmcp 4.2.3, mcp 2.3.0).
"""

from __future__ import annotations

import contextlib
import json
import warnings
from typing import Any, ClassVar

from mcp_testkit.adapters._hosted import HostedBridgeAdapter
from mcp_testkit.adapters._outcome import Outcome
from mcp_testkit.adapters.fastmcp import PAGE_LIMIT

__all__ = ["McpAdapterAdapter"]


class McpAdapterAdapter(HostedBridgeAdapter):
    """`langchain.mcp.MCPAdapter` on a fastmcp `Client`, its tools called as a LangChain agent calls them."""

    name: ClassVar[str] = "langchain.mcp"
    concurrency = 16
    """Its tools share the one fastmcp `Client` session (answers matched by request id), no lock: the contract's
    most, 16."""

    def __init__(self, *, transport: Any = None, timeout_s: float | None = 1.0) -> None:
        super().__init__(transport=transport, timeout_s=timeout_s)
        self.page_limit = PAGE_LIMIT
        self._tools: dict[str, Any] = {}
        # As fastmcp's adapter: `init_timeout` bounds the negotiation, then one `tools/list` per page under the
        # request timeout: two waits for the one-page listing of P11's connects.
        self.connect_timeout_s = 2 * self.wait_s

    def _factory(self, **options: Any) -> Any:
        return self.http_client(follow_redirects=True)

    async def open(self, stack: contextlib.AsyncExitStack, url: str) -> list[str]:
        from fastmcp import Client
        from fastmcp.client.transports import StreamableHttpTransport

        with warnings.catch_warnings():  # "`langchain.mcp` is in beta": said once here, in the docstring
            warnings.simplefilter("ignore")
            from langchain.mcp import MCPAdapter  # type: ignore[import-not-found,unused-ignore]

        transport = StreamableHttpTransport(url, httpx_client_factory=self._factory)
        client = Client(transport, timeout=self.wait_s, init_timeout=self.wait_s)
        adapter = await stack.enter_async_context(MCPAdapter(client))
        tools = await adapter.list_tools()
        self._tools = {tool.name: tool for tool in tools}
        return [tool.name for tool in tools]

    async def invoke(self, tool: str, arguments: dict[str, Any]) -> Outcome:
        function = self._tools.get(tool)
        if function is None:
            return Outcome.tool_error(LookupError(f"the bridge did not list a tool named {tool!r}"))
        message = await function.ainvoke({"name": tool, "args": dict(arguments), "id": "call-1", "type": "tool_call"})
        content = message.content
        if isinstance(content, list):
            # LangChain gives each content block a fresh "id" per call: not part of what the tool answered.
            content = [{k: v for k, v in b.items() if k != "id"} if isinstance(b, dict) else b for b in content]
        text = content if isinstance(content, str) else json.dumps(content, sort_keys=True, default=str)
        if getattr(message, "status", "success") == "error":
            return Outcome.tool_error(RuntimeError("the tool answered isError"), text=text)
        return Outcome.ok(text)
