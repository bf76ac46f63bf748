"""A real upstream for the chaos proxy's tests: the official SDK's `MCPServer`, which no one here scripted.

`bump` counts its own runs in a file named by the environment (`COUNTER`), or in memory over HTTP, so a test
sees what the upstream really did; `tools/list` pages two tools at a time. Run as a script it serves stdio.
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import Context, MCPServer

RUNS: dict[str, int] = {"bump": 0}
"""How often `bump` ran in this process (the HTTP upstream runs in the test's process)."""


class Pages:
    """Server middleware that cuts the `tools/list` answer into pages of two, with numeric cursors."""

    async def __call__(self, ctx: Any, call_next: Any) -> Any:
        result = await call_next(ctx)
        if ctx.method != "tools/list":
            return result
        if not isinstance(result, dict):
            result = result.model_dump(by_alias=True, exclude_none=True, mode="json")
        data = dict(result)
        cursor = (ctx.params or {}).get("cursor")
        start = int(cursor) if cursor else 0
        tools = data["tools"]
        data["tools"] = tools[start : start + 2]
        data.pop("nextCursor", None)
        if start + 2 < len(tools):
            data["nextCursor"] = str(start + 2)
        return data


def build() -> MCPServer:
    server = MCPServer("real-upstream", version="3.1.4", middleware=[Pages()])

    @server.tool()
    def bump() -> str:
        """Count one run (a write the test can see)."""
        RUNS["bump"] += 1
        counter = os.environ.get("COUNTER")
        if counter:
            path = Path(counter)
            runs = int(path.read_text() or "0") + 1 if path.exists() else 1
            path.write_text(str(runs))
        return f"bumped {RUNS['bump']}"

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    @server.tool()
    async def count(to: int, ctx: Context) -> str:
        """Counts, reporting progress."""
        for n in range(1, to + 1):
            await ctx.report_progress(n, to)
        return f"counted {to}"

    @server.tool()
    def echo(text: str) -> str:
        """Echo the text."""
        return text

    @server.tool()
    def shout(text: str) -> str:
        """Echo the text in capitals."""
        return text.upper()

    return server


def serving() -> contextlib.AbstractContextManager[str]:
    """Serve the upstream over Streamable HTTP on 127.0.0.1:0 (its own uvicorn, lifespan on); yields its URL."""
    from uvicorn_thread import serving_app  # a test module: run as a stdio script, this file serves no HTTP

    return serving_app(build().streamable_http_app())


def stdio_command() -> list[str]:
    """The command line that runs the upstream over stdio."""
    return [sys.executable, __file__]


if __name__ == "__main__":
    import logging
    import warnings

    logging.disable(logging.WARNING)
    warnings.simplefilter("ignore")  # stderr is the test's
    build().run("stdio")
