"""openai-agents' `MCPServerStreamableHttp` as a bridge (`pip install 'mcp-bridge-testkit[openai-agents]'`).

Session model: persistent. `connect()` opens one session (with mcp 2.x, an SDK `Client` in mode
"auto": `server/discover`, then `initialize` on an error) that lives until `cleanup()`; a lost
session is not replaced, and no new session follows a 404.

Retries: `max_retry_attempts` (0 by default) resends a failed `list_tools` or `call_tool` that
many times, whatever the tool: reads and writes alike, and after a 401 too. `retry` declares it.
`RetryingServerAdapter` runs with 2 (and a 0.05 s backoff base, to keep examples short).
The listing walks pages without a limit unless `max_list_pages` is set (`page_limit = None`).

Two paths, two adapters. `ServerAdapter` calls `server.call_tool()`, which returns the
`CallToolResult`: an `isError` result is `tool_error`. `InvokeAdapter` takes the path an agent's
call really runs, `MCPUtil.invoke_mcp_tool()`, which returns the text for the model and drops
`isError` on the way: an error result then comes back as an ordinary output, `ok`.

Errors to outcomes: whatever the bridge raises (its `UserError`, `AgentsException`, the SDK's
`MCPError`) is sorted by `SdkErrorClassifier` from the error alone (an `MCPError` it wraps is found
through the causes): a 401, a 403 and a 500 all reach it as the SDK's one `MCPError(-32603, "Server
returned an error response")`, an `outcome_unknown` at a call (so it fails P4); a 404 or a -32600 is
`connection_error`; another JSON-RPC error answering the call is `tool_error`.

Tested with openai-agents 0.24.0 (mcp 2.3.0).
"""

from __future__ import annotations

import contextlib
import json
from typing import Any, ClassVar

from mcp_testkit.adapters._hosted import HostedBridgeAdapter, render_result
from mcp_testkit.adapters._outcome import Outcome

__all__ = ["InvokeAdapter", "RetryingServerAdapter", "ServerAdapter"]


class ServerAdapter(HostedBridgeAdapter):
    """`MCPServerStreamableHttp`, its calls through `server.call_tool()` (see the module docstring)."""

    name: ClassVar[str] = "openai-agents"
    backoff_s: ClassVar[float] = 1.0

    def __init__(self, *, transport: Any = None, timeout_s: float | None = 1.0, retries: int | None = None) -> None:
        super().__init__(transport=transport, timeout_s=timeout_s)
        self.retry = retries if retries is not None else self.default_retries
        self.server: Any = None
        self._listed: dict[str, Any] = {}
        # `connect()` enters an SDK `Client` (auto: `server/discover`, then `initialize`), each request under
        # `client_session_timeout_seconds`; then `list_tools()`, one page here, tried 1 + `max_retry_attempts` times
        # with an exponential backoff of `retry_backoff_seconds_base * 2**n` between tries
        # (`_MCPServerWithClientSession._retry_backoff_seconds` in agents/mcp/server.py).
        backoffs = sum(self.backoff_s * 2**n for n in range(self.retry))
        self.connect_timeout_s = (2 + 1 + self.retry) * self.wait_s + backoffs
        # `concurrency` 4: an agent's tool calls run as parallel tasks (the Agents SDK's run loop gathers the
        # function tool calls of one model turn, agents/_run_impl.py), so an application has several in flight on
        # one bridge. `MCPServerStreamableHttp` then runs them one at a time (`_serialize_session_requests`, each
        # under `_request_lock`, agents/mcp/server.py): what a fault on one of them does to the others is P13's.
        self.concurrency = 4

    default_retries: ClassVar[int] = 0

    def _factory(self, **options: Any) -> Any:
        return self.http_client(follow_redirects=True)

    async def open(self, stack: contextlib.AsyncExitStack, url: str) -> list[str]:
        from agents.mcp import MCPServerStreamableHttp

        server = MCPServerStreamableHttp(
            {"url": url, "timeout": self.wait_s, "httpx_client_factory": self._factory},
            cache_tools_list=True,
            client_session_timeout_seconds=self.wait_s,
            max_retry_attempts=self.retry,
            retry_backoff_seconds_base=self.backoff_s,
        )
        stack.push_async_callback(server.cleanup)
        await server.connect()
        self.server = server
        tools = await server.list_tools()
        self._listed = {tool.name: tool for tool in tools}
        return [tool.name for tool in tools]

    async def invoke(self, tool: str, arguments: dict[str, Any]) -> Outcome:
        result = await self.server.call_tool(tool, arguments)
        if result.is_error:
            return Outcome.tool_error(RuntimeError("the tool answered isError"), text=render_result(result))
        return Outcome.ok(render_result(result))


class RetryingServerAdapter(ServerAdapter):
    """`ServerAdapter` with `max_retry_attempts=2`, as an application that enables retries runs it."""

    name: ClassVar[str] = "openai-agents-retrying"
    default_retries: ClassVar[int] = 2
    backoff_s: ClassVar[float] = 0.05


class InvokeAdapter(ServerAdapter):
    """`MCPServerStreamableHttp`, its calls through `MCPUtil.invoke_mcp_tool()`, the path an agent runs."""

    name: ClassVar[str] = "openai-agents-invoke"

    async def invoke(self, tool: str, arguments: dict[str, Any]) -> Outcome:
        from agents import RunContextWrapper
        from agents.mcp import MCPUtil

        listed = self._listed.get(tool)
        if listed is None:
            return Outcome.tool_error(LookupError(f"the bridge did not list a tool named {tool!r}"))
        context = RunContextWrapper(context=None)
        output = await MCPUtil.invoke_mcp_tool(self.server, listed, context, json.dumps(arguments))
        return Outcome.ok(json.dumps(output, sort_keys=True, default=str))
