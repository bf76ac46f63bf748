"""An era as the transport routes to it: what dispatch asks of it (`_dispatch/_era.py`), and its POST, GET and DELETE.

Its own module, below the two eras that each build one and the package's `era_of` that chooses between them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from mcp_testkit.server._dispatch._era import Era

if TYPE_CHECKING:
    from mcp_testkit._wire.asgi import Receive
    from mcp_testkit.server._framing._response import Response
    from mcp_testkit.server._state import ServerState

__all__ = ["ServedEra"]


@dataclass(frozen=True, slots=True, eq=False)
class ServedEra(Era):
    """One protocol era, with the answers to the three HTTP methods of the endpoint."""

    post: Callable[[ServerState, Response, Receive], Awaitable[None]]
    get: Callable[[ServerState, Receive, Response, str], Awaitable[None]]
    """(state, receive, response, the hint a 405 names for opening a GET stream)."""
    delete: Callable[[ServerState, Response], Awaitable[None]]
