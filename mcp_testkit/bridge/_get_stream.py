"""The handshake era's ear for tool changes: the session's GET stream (Streamable HTTP), held for a cached listing.

A GET on the MCP URL with the session's id and `Accept: text/event-stream` opens the stream a server sends its
own messages on. `hear_on_get_streams` follows one server's sessions as its `ServerLink` opens them: it opens the
stream of each new session, and on `notifications/tools/list_changed` calls the pool back, which ends the session
(DELETE, which ends its stream) and reads the listing again on a new one, whose stream it then opens. A session
that ends, a stream the server ends or breaks, or a refusal other than 405 waits for the link's next session (one
GET per session, so a server that ends every stream at once costs one request per session, never a loop); a 405
(the server offers no GET stream, which the spec allows) ends the watch for good. Nothing here raises into the
pool or a call.

With a cache hit at start-up the pool opens no session, so there is no stream to hear until a call opens one:
the cache's TTL bounds what is served meanwhile.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import anyio
import httpx2

from mcp_testkit._wire.sse import SseDecoder, SseEventTooLarge, json_message
from mcp_testkit.bridge import _rpc
from mcp_testkit.bridge._exchange import content_type
from mcp_testkit.bridge._handshake import McpSession

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Mapping

    from mcp_testkit.bridge._rpc import RpcSession

__all__ = ["OpenedSessions", "hear_on_get_streams"]

logger = logging.getLogger("mcp_testkit.bridge")


class OpenedSessions:
    """The sessions a `ServerLink` opens, told by `opened`, for a GET stream to follow with `opened_session`."""

    def __init__(self) -> None:
        self._last: McpSession | None = None
        self._event = anyio.Event()

    def opened(self, session: RpcSession) -> None:
        """A session was opened: wake whoever waits for a handshake session over HTTP (the only kind with a GET
        stream)."""
        if not isinstance(session, McpSession):
            return
        self._last = session
        self._event.set()
        self._event = anyio.Event()

    async def opened_session(self, other_than: str | None) -> McpSession:
        """The session opened last, once it has an id other than `other_than` (a new one: a GET on a session that
        was lost since is answered 404, and then waits for the next)."""
        while True:
            session = self._last
            if session is not None and session.session_id is not None and session.session_id != other_than:
                return session
            await self._event.wait()


async def hear_on_get_streams(
    sessions: OpenedSessions,
    client: httpx2.AsyncClient,
    url: str,
    credentials: Mapping[str, str],
    server: str,
    changed: Callable[[], Awaitable[None]],
) -> None:
    """Hold the GET stream of each session `sessions` opens, awaiting `changed()` on each tool change, until the
    server refuses GET with 405 or the caller cancels. `credentials` are unused: a session's own headers carry the
    ones it was opened with."""
    held: str | None = None
    while True:
        session = await sessions.opened_session(held)
        held = session.session_id
        if await _hold(client, url, session, server, changed) == "refused":
            return


async def _hold(
    client: httpx2.AsyncClient, url: str, session: McpSession, server: str, changed: Callable[[], Awaitable[None]]
) -> str:
    """Hold one session's stream to its end, awaiting `changed()` on each tool change (which ends this session, and
    with it the stream: the pool lists again on a new one); 'refused' for a 405, 'ended' for anything else."""
    headers = {**session._headers(), "Accept": "text/event-stream"}
    decoder = SseDecoder()
    try:
        async with client.stream("GET", url, headers=headers) as response:
            kind = content_type(response)
            if response.status_code != 200 or kind != "text/event-stream":
                said = f"HTTP {response.status_code}" + (f" ({kind})" if kind else "")
                refused = response.status_code == 405
                logger.info(
                    "server %r: the GET stream of session %s was answered with %s; %s (the cache's TTL still "
                    "bounds a stale listing)",
                    server,
                    (session.session_id or "")[:8],
                    said,
                    "the server offers none, so tool changes are not heard" if refused else "waiting for a new session",
                )
                return "refused" if refused else "ended"
            # Read to its end, never left half-way: trio reports httpx2's body generators collected unexhausted.
            async for chunk in response.aiter_bytes():
                for event in decoder.feed(chunk):
                    message = json_message(event.data)
                    if message is not None and message.get("method") == _rpc.LIST_CHANGED:
                        await changed()
    except (httpx2.HTTPError, SseEventTooLarge) as exc:
        logger.info("server %r: its GET stream ended (%s); waiting for a new session", server, type(exc).__name__)
    return "ended"
