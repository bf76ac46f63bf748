"""The pool's ear for tool changes: a stream per server whose listing it caches, where its era has one to open.

Over HTTP each era has its own stream (`ServerLink.change_listener` picks it): in 2026-07-28 a
`subscriptions/listen` request asking for `toolsListChanged` (`_stateless.hear_tool_changes`); in the handshake
era the GET stream of each session the link opens (`_get_stream.hear_on_get_streams`, which a 405 ends).
`ListingWatch` holds one such listener per watched server in a task group of the pool's own (entered and left
with the pool), and calls the pool back on each change, so that the pool drops the cached listing and reads the
current one. A stream that fails or ends is logged; it never fails the pool or a call (the cache's TTL and the
server's `ttlMs` still bound what it serves).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

import anyio

from mcp_testkit.bridge._config import read_credentials

if TYPE_CHECKING:
    from collections.abc import Mapping

    from anyio.abc import TaskGroup

    from mcp_testkit.bridge._link import ServerLink

__all__ = ["ListingWatch"]


class ListingWatch:
    """The change streams of a pool's servers (listen or GET, by era), in a task group entered with the pool."""

    def __init__(self) -> None:
        self._group: TaskGroup | None = None

    async def start(
        self,
        links: list[ServerLink],
        environ: Mapping[str, str] | None,
        changed: Callable[[ServerLink], Awaitable[None]],
    ) -> None:
        """Open a stream for each link watched (none: no task group at all)."""
        watched = [(link, listen) for link in links if (listen := link.change_listener()) is not None]
        if not watched:
            return
        group = anyio.create_task_group()
        await group.__aenter__()
        self._group = group
        for link, listen in watched:
            group.start_soon(_hold, listen, link, environ, changed)

    async def stop(self) -> None:
        """Close every stream (cancelling a listing read for a change, if one is under way)."""
        group, self._group = self._group, None
        if group is not None:
            group.cancel_scope.cancel()
            await group.__aexit__(None, None, None)


async def _hold(
    listen: Callable[..., Awaitable[None]],
    link: ServerLink,
    environ: Mapping[str, str] | None,
    changed: Callable[[ServerLink], Awaitable[None]],
) -> None:
    """Hold one server's stream, calling the pool back with its link on each change."""
    config = link.config

    async def heard() -> None:
        await changed(link)

    await listen(link.client, config.url, read_credentials(config, environ), config.name, heard)
