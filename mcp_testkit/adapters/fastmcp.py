"""The fastmcp `Client` as a bridge (`pip install 'mcp-bridge-testkit[fastmcp]'`).

Session model: persistent. One `Client` is entered at connect (in its default mode, "auto": it
first sends `server/discover` and falls back to `initialize` on an error) and holds one session
until close; fastmcp does not reconnect a session its transport lost, so after a dropped connection
the client stays broken until it is entered again, and after a 404 it starts no new session.

Retries: none of its own (`retry = 0`). The listing is `Client.list_tools()`, which walks every
page up to 250 (`page_limit = 250`, then it raises) and stops at a repeated cursor with a warning
in the log, keeping the tools read so far.

Errors to outcomes: `call_tool` raises `ToolError` for an `isError` result (`tool_error`, with the
tool's text); every other error is sorted by `SdkErrorClassifier` from the error alone, as fastmcp's
caller receives it: a 401, a 403 and a 500 all reach it as the SDK's one `MCPError(-32603, "Server
returned an error response")`, an `outcome_unknown` at a call (so it fails P4); a 404 or a -32600 is
`connection_error`; another JSON-RPC error answering the call is `tool_error`. An `ok` result renders as the canonical
JSON of its content blocks and structured content.

Tested with fastmcp 4.2.3 (mcp 2.3.0).
"""

from __future__ import annotations

import contextlib
import json
from typing import Any, ClassVar

from mcp_testkit.adapters._hosted import HostedBridgeAdapter
from mcp_testkit.adapters._outcome import Outcome

__all__ = ["FastMcpClientAdapter"]

PAGE_LIMIT = 250
"""`fastmcp.client.mixins.tools.AUTO_PAGINATION_MAX_PAGES` in the versions tested."""


class FastMcpClientAdapter(HostedBridgeAdapter):
    """fastmcp's `Client` over Streamable HTTP, its calls through `Client.call_tool` (see the module docstring)."""

    name: ClassVar[str] = "fastmcp"
    concurrency = 16
    """Calls share the client's one SDK session, which matches each answer to its request by id (mcp 2.3's
    `JSONRPCDispatcher._pending`); fastmcp's `Client.call_tool` takes no lock (fastmcp/client/client.py), so there
    is no limit: the contract's most, 16."""

    def __init__(self, *, transport: Any = None, timeout_s: float | None = 1.0) -> None:
        super().__init__(transport=transport, timeout_s=timeout_s)
        self.page_limit = PAGE_LIMIT
        self._client: Any = None
        # `Client(init_timeout=...)` bounds the whole negotiation (`anyio.fail_after` in `Client._negotiate`:
        # `server/discover`, then `initialize` on a fallback); fastmcp's default (`settings.client_init_timeout`)
        # is None, no bound, so the adapter sets it to the call timeout. Then one `tools/list` per page, each
        # under the request timeout: two waits for the one-page listing of P11's connects.
        self.connect_timeout_s = 2 * self.wait_s

    def _factory(self, **options: Any) -> Any:
        options.pop("follow_redirects", None)
        return self.http_client(follow_redirects=True)

    async def open(self, stack: contextlib.AsyncExitStack, url: str) -> list[str]:
        from fastmcp import Client
        from fastmcp.client.transports import StreamableHttpTransport

        transport = StreamableHttpTransport(url, httpx_client_factory=self._factory)
        self._client = await stack.enter_async_context(Client(transport, timeout=self.wait_s, init_timeout=self.wait_s))
        tools = await self._client.list_tools()
        return [tool.name for tool in tools]

    async def invoke(self, tool: str, arguments: dict[str, Any]) -> Outcome:
        from fastmcp.exceptions import ToolError

        try:
            result = await self._client.call_tool(tool, arguments)
        except ToolError as exc:
            return Outcome.tool_error(exc)
        blocks = [block.model_dump(by_alias=True, exclude_none=True, mode="json") for block in result.content]
        return Outcome.ok(json.dumps({"content": blocks, "structured": result.structured_content}, sort_keys=True))
