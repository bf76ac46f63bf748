"""The ASGI app of a `TestMcpServer`: one Streamable HTTP endpoint (POST, GET, DELETE), routed to its era.

It records the request in the journal before it answers anything, refuses what needs no body to
refuse (path, Host, Origin, required headers: `_http.blocked`) before reading one, reads the body
(bounded), and hands the request to its era: `_stateless.py` (2026-07-28) or `_handshake.py`
(`initialize` and sessions). A last-resort guard answers any crash of its own with a JSON-RPC -32603
(500), journaled, so that the journal always holds the status sent.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from mcp_testkit._wire.runner import STOPPING
from mcp_testkit.journal import Headers, Record
from mcp_testkit.server._dispatch._protocol import INVALID_REQUEST
from mcp_testkit.server._eras import _handshake, _stateless
from mcp_testkit.server._transport._http import (
    JOURNAL_PREFIX,
    Receive,
    Response,
    Scope,
    Send,
    ServerCrash,
    admit,
    blocked,
    cancel_on_disconnect,
    crashed,
    header,
    lifespan,
    read,
    read_body,
    refuse_credentials,
    usable_post,
)

if TYPE_CHECKING:
    from mcp_testkit.server._state import ServerState

__all__ = [
    "JOURNAL_PREFIX",
    "McpApp",
    "Receive",
    "Scope",
    "Send",
    "ServerCrash",
    "cancel_on_disconnect",
    "read_body",
]

_lifespan = lifespan  # the name cassettes/_record.py imports


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
        journal = state.journal
        headers = Headers(scope["headers"], state.hidden)
        # seq is numbered when journaled: after the body is read, so that seq follows the fault plan's order.
        record = Record(0, time.time(), scope["method"], scope["path"], headers, b"")
        record.session_id = header(headers, "mcp-session-id")
        out = Response(send, record, headers, receive)
        try:
            await self._handle(state, scope, receive, out)
        except asyncio.CancelledError as exc:
            if exc.args != (STOPPING,):
                raise
            # The server stops with this request running: close its connection, with nothing to log.
            await out.drop("the server stopped before answering")
        except Exception as exc:
            if out.dropped:
                raise  # in-process, a dropped connection is this exception, on purpose
            admit(journal, record)
            await crashed(state, out, exc)
        finally:
            if out.plan is not None and out.plan.stream is not None:
                out.plan.stream.finish()  # whatever happened, a GET following this stream must not wait forever
            admit(journal, record)
            journal.writer.finish(record)

    async def _handle(self, state: ServerState, scope: Scope, receive: Receive, out: Response) -> None:
        """Check what needs no body, read the body (bounded), journal the request, then route it to its era."""
        record = out.record
        method = scope["method"]
        refusal = blocked(state, scope, out.headers)
        if refusal is None and method == "POST":
            refusal = await read(state, scope, receive, out)
        elif refusal is not None and refusal[0] == 401 and method == "POST" and not refusal[3][1]:
            # A wrong credential is a scripted test condition, not an attack: read the (bounded) body
            # anyway, so the journal shows which call was refused; a size or time problem wins. A missing
            # one is refused at once, as a bad Host or Origin is, without waiting for a body.
            refusal = await read(state, scope, receive, out) or refusal
        admit(state.journal, record)
        if refusal is not None:
            status, code, message, extra = refusal
            if status == 401:
                required, missing = extra
                await refuse_credentials(out, required.name, required.status, scope, missing)
            else:
                await out.error(status, code, message, extra)
                if status == 413 and record.body:
                    record.error = f"{message}; the journal keeps its first {len(record.body)} bytes (cut)"
            return
        if method == "POST":
            if await usable_post(out):
                if _stateless.serves_stateless(state, out.headers, out.message):
                    await _stateless.post(state, out, receive)
                else:
                    await _handshake.post(state, out)
        elif method in ("GET", "DELETE"):
            era = _stateless if _stateless.serves_stateless(state, out.headers, None) else _handshake
            if method == "GET":
                await era.get(state, receive, out, self.get_stream_hint)
            else:
                await era.delete(state, out)
        else:
            allow = b"GET, POST, DELETE" if state.allow_delete else b"GET, POST"
            await out.error(405, INVALID_REQUEST, f"HTTP {method} is not supported", [(b"allow", allow)])
