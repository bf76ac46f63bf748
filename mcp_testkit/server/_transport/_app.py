"""The ASGI app of a `TestMcpServer`: one Streamable HTTP endpoint (POST, GET, DELETE), routed to its era.

It only routes: a protected endpoint's authorization server and resource metadata (`TestMcpServer(auth=...)`)
answer their own paths (`mcp_testkit.auth`); the transport (`_http.serve`) records the request, refuses what may
not reach an era, reads the body and answers a crash of ours, and hands the rest to `_route`, which gives it to its
era's POST, GET or DELETE (`server/_eras/`: `era_of` says which era a request belongs to).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from mcp_testkit._wire.asgi import lifespan
from mcp_testkit.server._eras import era_of
from mcp_testkit.server._transport._http import serve

if TYPE_CHECKING:
    from mcp_testkit._wire.asgi import Receive, Scope, Send
    from mcp_testkit.server._framing._response import Response
    from mcp_testkit.server._state import ServerState

__all__ = ["McpApp"]


class McpApp:
    """The ASGI app of a `TestMcpServer`; reads the server's current state on every request."""

    get_stream_hint = "TestMcpServer(get_stream=True)"
    """What the 405 to a GET names as the way to open a GET stream (`mcp-testkit serve` names its option)."""

    mountable = False
    """Whether the endpoint's path is read under the ASGI `root_path` it is mounted at (`MountableMcpApp`)."""

    def __init__(self, state: Callable[[], ServerState]) -> None:
        self._state = state

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            if scope["type"] == "lifespan":
                await lifespan(receive, send)
            return
        if self.mountable:
            root = scope.get("root_path")
            if root:
                path: str = scope["path"]
                if path.startswith(root) and path[len(root) : len(root) + 1] in ("", "/"):
                    scope = {**scope, "path": path[len(root) :] or "/"}
        state = self._state()
        auth = state.auth
        if auth is not None and scope["path"] != state.path:
            protected = (state.path, state.auth_scopes)
            if auth.serves(scope["path"], protected):
                await auth.serve(scope, receive, send, state.journal, protected, state.plan)
                return
        await serve(state, scope, receive, send, self._route)

    async def _route(self, state: ServerState, method: str, receive: Receive, out: Response) -> None:
        """Give a request that passed the transport's checks to its era: a POST, GET or DELETE."""
        if method == "POST":
            await era_of(state, out.headers, out.message).post(state, out, receive)
        elif method == "GET":
            await era_of(state, out.headers, None).get(state, receive, out, self.get_stream_hint)
        else:
            await era_of(state, out.headers, None).delete(state, out)
