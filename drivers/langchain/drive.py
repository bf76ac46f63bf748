"""A driver (docs/driver.md) for langchain-mcp-adapters: `MultiServerMCPClient.get_tools()` and its tools
called as a LangChain agent calls them (`tool.ainvoke` with a tool call, answered by a `ToolMessage`).

Session model: per call (a new session for the listing and for every tool call). Retries: none.
The listing walks `nextCursor` without a page limit. Errors: an `isError` result comes back as a
`ToolMessage` with `status="error"` (`tool_error`); what the tool raises is sorted from the error alone
(`error_kind`: its type, code, message and attributes, what an application holding the bridge receives; nothing
watches the wire). The bridge runs with its defaults: its `ClientSession` gets no read timeout
(no `session_kwargs`), so a call whose answer arrives broken or whose SSE stream ends early waits for
good, which is the bridge's hang to report (docs/matrix.md, notes). Needs `mcp<2`: set up with
`python -m venv .venv && .venv/bin/pip install -r drivers/langchain/requirements.txt`, run with
`.venv/bin/python drivers/langchain/drive.py`.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from importlib.metadata import version
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx
from driver_protocol import current_headers, error_kind, outcome, serve

TIMEOUT_S = 1.0
"""The HTTP timeouts the driver gives the bridge (`timeout` and `sse_read_timeout` of the connection): each HTTP
exchange waits at most this long for a byte. Its `ClientSession` gets no read timeout of its own."""
CONNECT_TIMEOUT_S = 2 * TIMEOUT_S
"""A connect is a new session's `initialize` and one `tools/list` per page (`load_mcp_tools` in
langchain_mcp_adapters/tools.py), each an HTTP exchange bounded by TIMEOUT_S: two for the one-page listing of
P11's connect cases."""


class LangchainDriven:
    def __init__(self) -> None:
        self.headers: dict[str, str] = {}
        self.tools: dict[str, Any] = {}
        self.names: list[str] = []

    def _client(self, headers: Any = None, timeout: Any = None, auth: Any = None) -> httpx.AsyncClient:
        return httpx.AsyncClient(
            auth=current_headers(httpx, self.headers),
            timeout=httpx.Timeout(TIMEOUT_S, read=TIMEOUT_S),
            follow_redirects=True,
        )

    async def connect(self, url: str, headers: Mapping[str, str]) -> dict[str, Any]:
        from langchain_mcp_adapters.client import MultiServerMCPClient

        self.headers.clear()
        self.headers.update(headers)
        connection = {
            "transport": "streamable_http",
            "url": url,
            "timeout": TIMEOUT_S,
            "sse_read_timeout": TIMEOUT_S,
            "httpx_client_factory": self._client,
        }
        try:
            tools = await MultiServerMCPClient({"srv": connection}).get_tools(server_name="srv")
        except Exception as exc:
            return outcome(error_kind(exc, "connect"), error=exc)
        self.names = [tool.name for tool in tools]
        self.tools = {tool.name: tool for tool in tools}
        return outcome("ok", "")

    async def list(self) -> list[str]:
        return list(self.names)

    async def call(self, name: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
        tool = self.tools.get(name)
        if tool is None:
            return outcome("tool_error", f"no tool named {name!r} was loaded")
        try:
            message = await tool.ainvoke({"name": name, "args": dict(arguments), "id": "call-1", "type": "tool_call"})
        except Exception as exc:
            return outcome(error_kind(exc, "call"), error=exc)
        content = message.content
        if isinstance(content, list):
            # LangChain gives each content block a fresh "id" per call: not part of what the tool answered.
            content = [{k: v for k, v in b.items() if k != "id"} if isinstance(b, dict) else b for b in content]
        text = content if isinstance(content, str) else json.dumps(content, sort_keys=True, default=str)
        if getattr(message, "status", "success") == "error":
            return outcome("tool_error", text)
        return outcome("ok", text)

    def set_headers(self, headers: Mapping[str, str]) -> None:
        self.headers.update(headers)

    async def close(self) -> None:
        self.tools = {}


if __name__ == "__main__":
    serve(
        LangchainDriven(),
        {
            "bridge": "langchain-mcp-adapters",
            "bridge_version": version("langchain-mcp-adapters"),
            "page_limit": None,
            "retry": 0,
            "timeout_s": TIMEOUT_S,
            "sessions": "per_call",
            "connect_timeout_s": CONNECT_TIMEOUT_S,
            # Not declared: `progress_timeout_s` (progress does not extend a wait: mcp 1.x's ClientSession only calls
            # the progress callback, mcp/shared/session.py), `max_result_bytes` (mcp 1.x reads a JSON answer and an
            # SSE event without a size limit), `concurrency` (the driver protocol runs one request at a time), and
            # the "cancellation" capability (the driver protocol has no way to abandon a call).
        },
    )
