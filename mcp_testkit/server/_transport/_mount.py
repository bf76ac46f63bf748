"""The MCP app as a mountable ASGI app: under a parent's `Mount("/prefix", ...)` its endpoint is `/prefix/mcp`."""

from __future__ import annotations

from mcp_testkit.server._transport._app import McpApp

__all__ = ["MountableMcpApp"]


class MountableMcpApp(McpApp):
    """`McpApp` reading its path under the prefix it is mounted at (the ASGI `root_path`).

    Starlette's `Mount` and FastAPI's `app.mount` pass the full path with the prefix in `root_path`;
    the endpoint check, the journal and the errors then see the path under the prefix (`/mcp`).
    Served alone (no root path) it is `McpApp` itself, at the cost of one lookup per request
    (made in `McpApp.__call__`, which saves every request a call through a subclass's own).
    """

    mountable = True
