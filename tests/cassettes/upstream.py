"""The real upstream the cassette tests record: the official SDK's `MCPServer`, which no one here wrote.

Several tools, a `tools/list` that pages (two tools a page, by a middleware), one tool returning an
image, one answering `isError`, one that sends progress and a log message, read-only tools and a write.
`confirm` asks the client a question (a server request) during the call.
`changed=True` serves the same server after a release that removed `write_note` and gave `add` a new
required property, for `verify`. Run as a script it serves stdio: `python upstream.py [--changed]`.
"""

from __future__ import annotations

import base64
import contextlib
import sys
from typing import Any

import mcp_types
from mcp.server.mcpserver import Context, Image, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)
SECRET_TOKEN = "ghp_" + "R3c0rd1ngN3verL3aksTh1sT0kenAbCdEf12"
"""A GitHub-shaped token a tool answers with: a known token shape, redacted without being asked."""
ACCOUNT = "ACCT-90210-7734"
"""An account number a tool answers with: redacted only when a --redact pattern names it."""
PAGE_SIZE = 2
READ = mcp_types.ToolAnnotations(readOnlyHint=True)


class Confirmation(BaseModel):
    ok: bool


class Pages:
    """Server middleware that cuts the `tools/list` answer into pages of `size`, with numeric cursors."""

    def __init__(self, size: int) -> None:
        self.size = size

    async def __call__(self, ctx: Any, call_next: Any) -> Any:
        result = await call_next(ctx)
        if ctx.method != "tools/list":
            return result
        data = (
            dict(result)
            if isinstance(result, dict)
            else result.model_dump(by_alias=True, exclude_none=True, mode="json")
        )
        cursor = (ctx.params or {}).get("cursor")
        start = int(cursor) if cursor else 0
        tools = data["tools"]
        data["tools"] = tools[start : start + self.size]
        data.pop("nextCursor", None)
        if start + self.size < len(tools):
            data["nextCursor"] = str(start + self.size)
        return data


def build(*, changed: bool = False) -> MCPServer:
    """The upstream server; `changed` is its next release (a tool removed, a schema changed)."""
    server = MCPServer("upstream-demo", version="2.0.0" if changed else "1.2.3", middleware=[Pages(PAGE_SIZE)])

    if changed:

        @server.tool(annotations=READ)
        def add(a: int, b: int, c: int) -> int:
            """Add three numbers."""
            return a + b + c

    else:

        @server.tool(annotations=READ)
        def add(a: int, b: int) -> int:
            """Add two numbers."""
            return a + b

    @server.tool(annotations=READ)
    def search(query: str, page: int = 1) -> dict[str, Any]:
        """Search items, two a page."""
        items = [f"{query}-{i}" for i in range(5)]
        start = (page - 1) * 2
        found: dict[str, Any] = {"items": items[start : start + 2]}
        if start + 2 < len(items):
            found["next_page"] = page + 1
        return found

    @server.tool(annotations=READ)
    def logo() -> Image:
        """The logo, as a PNG image."""
        return Image(data=PNG, format="png")

    @server.tool(annotations=READ)
    def fail(reason: str) -> str:
        """Always fails, as a tool error."""
        raise ToolError(f"failed: {reason}")

    @server.tool(annotations=READ)
    def account() -> str:
        """The account this server acts for, and the token it uses."""
        return f"account {ACCOUNT} with token {SECRET_TOKEN}"

    @server.tool(annotations=READ)
    async def slow_count(to: int, ctx: Context) -> str:
        """Counts, reporting progress, and logs when done."""
        for n in range(1, to + 1):
            await ctx.report_progress(n, to)
        # A log line sent as a plain notification: the logging helpers warn that the capability is deprecated.
        log = mcp_types.LoggingMessageNotificationParams(level="info", data=f"counted to {to}")
        notification = mcp_types.LoggingMessageNotification(params=log)
        await ctx.request_context.session.send_notification(notification, related_request_id=ctx.request_id)
        return f"counted {to}"

    @server.tool()
    async def confirm(item: str, ctx: Context) -> str:
        """Asks the client (an elicitation request) before it orders `item`."""
        answer = await ctx.elicit(f"Order {item}?", Confirmation)
        return f"ordered {item}" if answer.action == "accept" and answer.data.ok else f"did not order {item}"

    if not changed:

        @server.tool()
        def write_note(text: str) -> str:
            """Write a note (a write: not read-only)."""
            return f"noted {text}"

    return server


def serving(*, changed: bool = False) -> contextlib.AbstractContextManager[str]:
    """Serve the upstream over Streamable HTTP on 127.0.0.1 (its own uvicorn, lifespan on); yields its URL."""
    from uvicorn_thread import serving_app  # a test module: run as a stdio script, this file serves no HTTP

    return serving_app(build(changed=changed).streamable_http_app())


def stdio_command(*, changed: bool = False) -> list[str]:
    """The command line that runs the upstream over stdio."""
    return [sys.executable, __file__, *(["--changed"] if changed else [])]


if __name__ == "__main__":
    import logging
    import warnings

    logging.disable(logging.WARNING)
    warnings.simplefilter("ignore")  # stderr is the test's: keep it for what matters
    build(changed="--changed" in sys.argv).run("stdio")
